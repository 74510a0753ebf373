/**
 * lib/models/kubernetes-models.js (scripts/bundle-models.ts): the bundled classes and schema checks
 * check objects exactly as the package's own modules do, cover every core kind the stack writes,
 * and are the ones `modelOf` and `validateObject` use when the bundle is there (npm test runs
 * `npm run bundle` first).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BUNDLED_KINDS, MODEL_BUNDLE, UNUSED_FORMATS, bundleModels, kindModule } from '../../scripts/bundle-models';
import { _schemaCheckCounts, modelOf, validateObject } from '../../src/policy/manifests';
import { loadYamlDocuments } from '../util/fixtures';

type ModelClass = new (data: unknown) => { validate(): void };
type SchemaCheck = (data: unknown) => boolean;
const bundle = require(MODEL_BUNDLE) as {
  models: { [apiVersionKind: string]: () => ModelClass };
  checks: { [apiVersionKind: string]: () => SchemaCheck };
  runValidateFunc(check: SchemaCheck, data: unknown): void;
};
const own = (apiVersionKind: string): ModelClass => {
  const { module, className } = kindModule(apiVersionKind);
  return (require(module) as Record<string, ModelClass>)[className];
};

/** What a class says of an object: nothing, or its errors (with their English messages) and its message. */
function verdict(model: ModelClass, object: unknown): unknown {
  return outcome(() => new model(object).validate());
}

function outcome(check: () => void): unknown {
  try {
    check();
    return 'valid';
  } catch (e) {
    return { errors: (e as { errors?: unknown }).errors, message: (e as Error).message };
  }
}

const DIST = path.join(__dirname, '..', '..', 'dist');
const distObjects = fs.readdirSync(DIST, { recursive: true, withFileTypes: true })
  .filter(e => e.isFile() && e.name.endsWith('.yaml'))
  .flatMap(e => loadYamlDocuments(path.join(e.parentPath, e.name)));
const keyOf = (o: { apiVersion: string; kind: string }) => `${o.apiVersion}/${o.kind}`;

describe('the bundle of kubernetes-models', () => {
  test('holds every kind of a core API group that dist/ has', () => {
    const core = new Set(distObjects.filter(o => !/^[^/]*\.[^/]*\//.test(o.apiVersion) || /\.k8s\.io\//.test(o.apiVersion)).map(keyOf));
    const modelled = [...core].filter(k => {
      try {
        return own(k) !== undefined;
      } catch {
        return false; // no model, such as kustomize.config.k8s.io's Kustomization
      }
    });
    expect(modelled.length).toBeGreaterThan(15);
    expect(modelled.filter(k => !BUNDLED_KINDS.includes(k))).toEqual([]);
  });

  test('is what npm run bundle wrote from the current sources and lock file', () => {
    expect(fs.readFileSync(MODEL_BUNDLE, 'utf8')).toBe(bundleModels());
  });

  test.each(BUNDLED_KINDS)('%s: accepts and rejects what the own module does', apiVersionKind => {
    const bundled = bundle.models[apiVersionKind]();
    const original = own(apiVersionKind);
    expect(typeof bundled).toBe('function');
    expect(bundled).not.toBe(original);
    const slash = apiVersionKind.lastIndexOf('/');
    const [apiVersion, kind] = [apiVersionKind.slice(0, slash), apiVersionKind.slice(slash + 1)];
    const samples: unknown[] = [
      ...distObjects.filter(o => keyOf(o) === apiVersionKind).slice(0, 3),
      { apiVersion, kind, metadata: { name: 'minimal' } },
      { apiVersion, kind, metadata: { name: 5, labels: { a: 1 } } },
      { apiVersion, kind, metadata: { name: 'typo' }, spec: { notAField: true, replicas: 'two' } },
    ];
    const verdicts = samples.map(s => verdict(bundled, s));
    expect(verdicts).toEqual(samples.map(s => verdict(original, s)));
    expect(verdicts).toContain('valid');
    expect(verdicts.filter(v => v !== 'valid').length).toBeGreaterThan(0);
    // The kind's check, run on the object itself (apiVersion and kind first, as the class has them), says the same.
    const check = bundle.checks[apiVersionKind]();
    expect(samples.map(s => outcome(() => bundle.runValidateFunc(check, Object.assign({ apiVersion, kind }, s))))).toEqual(verdicts);
  });

  test('leaves out only formats that no bundled schema names', () => {
    const text = fs.readFileSync(MODEL_BUNDLE, 'utf8');
    const named = new Set([...text.matchAll(/\.formats(?:\.([\w$]+)|\[("[^"]+")\])/g)].map(m => m[1] ?? JSON.parse(m[2])));
    expect([...named].sort()).toEqual(['byte', 'date-time', 'double', 'int32', 'int64', 'quantity']);
    expect(UNUSED_FORMATS.filter(f => named.has(f))).toEqual([]);
    // Plain ASCII: V8 keeps it one byte per character.
    expect(/[^\x00-\x7f]/.test(text)).toBe(false);
  });

  test('validateObject checks plain JSON data with the bundled check, and anything else through the class, with the same findings', () => {
    const counts = () => ({ ..._schemaCheckCounts });
    const core = distObjects.filter(o => BUNDLED_KINDS.includes(keyOf(o)));
    const before = counts();
    const findings = core.map(o => validateObject(o));
    expect(counts()).toEqual({ bundled: before.bundled + core.length, model: before.model });
    expect(findings.every(f => f.known && f.violations.length === 0)).toBe(true);

    const bad = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', labels: { a: 1 } }, spec: { replicas: 'two', extra: true } };
    // Data a class copies into other data: an undefined value, which it drops, and an object of a class.
    const unlike = [
      { ...bad, spec: { ...bad.spec, paused: undefined } },
      { ...bad, metadata: Object.assign(Object.create({ inherited: true }) as object, bad.metadata) },
    ];
    const middle = counts();
    const plain = validateObject(bad);
    expect(counts()).toEqual({ bundled: middle.bundled + 1, model: middle.model });
    expect(plain.violations.length).toBeGreaterThan(1);
    for (const object of unlike) expect(validateObject(object)).toEqual(plain);
    expect(counts()).toEqual({ bundled: middle.bundled + 1, model: middle.model + unlike.length });
  });

  test('serves modelOf, and a kind outside it still comes from its own module', () => {
    expect(modelOf('apps/v1', 'Deployment')).toBe(bundle.models['apps/v1/Deployment']());
    expect(BUNDLED_KINDS).not.toContain('v1/Pod');
    expect(modelOf('v1', 'Pod')).toBe(own('v1/Pod'));
    const bad = validateObject({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 'two' } });
    expect(bad.known).toBe(true);
    expect(bad.violations.map(v => v.path)).toContain('spec.replicas');
  });
});
