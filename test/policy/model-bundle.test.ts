/**
 * lib/models/kubernetes-models.js (scripts/bundle-models.ts): the bundled classes check objects
 * exactly as the package's own modules do, cover every core kind the stack writes, and are the
 * ones `modelOf` uses when the bundle is there (npm test runs `npm run bundle` first).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BUNDLED_KINDS, MODEL_BUNDLE, bundleModels, kindModule } from '../../scripts/bundle-models';
import { modelOf, validateObject } from '../../src/policy/manifests';
import { loadYamlDocuments } from '../util/fixtures';

type ModelClass = new (data: unknown) => { validate(): void };
const bundle = require(MODEL_BUNDLE) as { [apiVersionKind: string]: () => ModelClass };
const own = (apiVersionKind: string): ModelClass => {
  const { module, className } = kindModule(apiVersionKind);
  return (require(module) as Record<string, ModelClass>)[className];
};

/** What a class says of an object: nothing, or its errors. */
function verdict(model: ModelClass, object: unknown): unknown {
  try {
    new model(object).validate();
    return 'valid';
  } catch (e) {
    return (e as { errors?: unknown }).errors ?? (e as Error).message;
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
    const bundled = bundle[apiVersionKind]();
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
  });

  test('serves modelOf, and a kind outside it still comes from its own module', () => {
    expect(modelOf('apps/v1', 'Deployment')).toBe(bundle['apps/v1/Deployment']());
    expect(BUNDLED_KINDS).not.toContain('v1/Pod');
    expect(modelOf('v1', 'Pod')).toBe(own('v1/Pod'));
    const bad = validateObject({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 'two' } });
    expect(bad.known).toBe(true);
    expect(bad.violations.map(v => v.path)).toContain('spec.replicas');
  });
});
