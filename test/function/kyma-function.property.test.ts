/**
 * Properties of KymaFunction over the whole space of its props: a Function either fails synth
 * with errors that name the construct and the prop, or synthesizes into an object that every
 * rule of the Function API, our CRD and upstream 1.11.1's CRD accept.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Chart, Size, Testing } from 'cdk8s';
import { ConfigMap, Container, ContainerResources, Cpu, EnvFieldPaths, EnvValue, ResourceFieldPaths, Secret } from 'cdk8s-plus-27';
import * as fc from 'fast-check';
import {
  BuildProfile, BuildResources, FunctionProfile, FunctionResources, FunctionRuntime, FunctionScale, FunctionSource, GitAuthType, KymaFunction,
  KymaFunctionProps, SecretMount,
} from '../../src';
import { RuntimeFamily, defaultFunction, functionSchemaValidator, validateFunction } from '../../src/api';
import { serverDefaultedFields } from '../../src/api/controller-fixed-point';
import { INLINE_SOURCE_MAX_BYTES } from '../../src/api/function-rules';
import { RESERVED_ENV_NAMES } from '../../src/api/runtimes';
import { upstreamFunctionValidator } from '../util/upstream-crds';

const upstreamValidator = upstreamFunctionValidator();

// Nothing is written: one output folder serves every app.
const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'kyma-function-property.'));
afterAll(() => fs.rmSync(outdir, { recursive: true, force: true }));
const app = () => Testing.app({ outdir });

// Secrets and ConfigMaps that env values refer to live outside the charts under test.
const refs = new Chart(app(), 'refs');
let refCount = 0;
const secretNamed = (name: string) => Secret.fromSecretName(refs, `Secret${refCount++}`, name);
const configMapNamed = (name: string) => ConfigMap.fromConfigMapName(refs, `ConfigMap${refCount++}`, name);

/** The props KymaFunction knows, in the order errors may name them. */
const PROPS = [
  'name', 'namespace', 'runtime', 'source', 'env', 'secretMounts', 'resources', 'buildResources',
  'replicas', 'scale', 'labels', 'annotations', 'runtimeImageOverride',
] as const;
type Prop = typeof PROPS[number];

/** A generated value, the TypeScript that builds it, and whether the Function API accepts it. */
interface Choice<T> {
  readonly value: T;
  readonly code: string;
  readonly valid: boolean;
}

/** A value as TypeScript, with a long run of one character written as `.repeat()`. */
function q(value: unknown): string {
  if (typeof value !== 'string' || value.length <= 100) return JSON.stringify(value);
  const first = [...value][0];
  const times = value.length / first.length;
  return value === first.repeat(times) ? `${JSON.stringify(first)}.repeat(${times})` : JSON.stringify(value);
}
const good = <T>(value: T, code: string): Choice<T> => ({ value, code, valid: true });
const bad = <T>(value: T, code: string): Choice<T> => ({ value, code, valid: false });
const plain = (valid: boolean) => (value: string) => ({ value, code: q(value), valid });

/** Only valid choices, or mostly valid ones and one time in ten an invalid one. */
function either<T>(validOnly: boolean, valid: fc.Arbitrary<Choice<T>>, invalid: fc.Arbitrary<Choice<T>>): fc.Arbitrary<Choice<T>> {
  return validOnly ? valid : fc.oneof({ arbitrary: valid, weight: 9 }, { arbitrary: invalid, weight: 1 });
}

/** A prop that is given half of the time. */
const sometimes = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { freq: 2, nil: undefined });

// Names.

const dns1035Label = fc.oneof(
  fc.stringMatching(/^[a-z]([-a-z0-9]{0,14}[a-z0-9])?$/),
  fc.constantFrom('a', `f${'x'.repeat(62)}`, 'orders-v2'),
);
const notDns1035Label = fc.constantFrom('Hello', '1st', 'a-', '-a', 'a_b', 'a.b', '', 'x'.repeat(64), 'hello world');
const functionName = (validOnly: boolean) => either(validOnly, dns1035Label.map(plain(true)), notDns1035Label.map(plain(false)));
const namespaceName = (validOnly: boolean) => either(validOnly,
  fc.constantFrom('team-a', 'team-b', 'default', '0-ops').map(plain(true)),
  fc.constantFrom('Team_B', 'a.b', 'team-', '', 'n'.repeat(64)).map(plain(false)));

/** DNS-1123 subdomains: names of Secrets and ConfigMaps. */
const objectName = fc.oneof(
  fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,10}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,6}[a-z0-9])?)?$/),
  fc.constant('s'.repeat(253)),
);
const notObjectName = fc.constantFrom('Bad_Name', 'UPPER', '-lead', 'trail-', 'a..b', 'has space', 's'.repeat(254), '', ' ', '\t');
const configKey = fc.stringMatching(/^[-._a-zA-Z0-9]{1,16}$/).filter(k => k !== '.' && !k.startsWith('..'));
const notConfigKey = fc.constantFrom('has space', 'a/b', '', '.', '..', '..data', 'key=value');

// Runtime and source.

const runtime = (validOnly: boolean) => either(validOnly,
  fc.constantFrom(
    good(FunctionRuntime.NODEJS_20, 'FunctionRuntime.NODEJS_20'),
    good(FunctionRuntime.NODEJS_22, 'FunctionRuntime.NODEJS_22'),
    good(FunctionRuntime.PYTHON_312, 'FunctionRuntime.PYTHON_312'),
  ),
  fc.constantFrom('nodejs18', 'python39').map(name => bad(FunctionRuntime.of(name), `FunctionRuntime.of(${q(name)})`)));

function isJsonObject(text: string): boolean {
  try {
    const parsed = JSON.parse(text);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed);
  } catch {
    return false;
  }
}

const packageJson = fc
  .dictionary(fc.stringMatching(/^[a-z][-a-z0-9]{0,8}$/), fc.constantFrom('^4.17.21', '1.0.0', 'latest'), { maxKeys: 3, noNullPrototype: true })
  .chain(deps => fc.constantFrom(JSON.stringify({ dependencies: deps }), JSON.stringify({ name: 'fn', dependencies: deps }, null, 2)));
const dependencies = fc.oneof(
  { arbitrary: fc.constant(undefined), weight: 4 },
  { arbitrary: fc.constantFrom('', '  ', '\n', '{}'), weight: 2 },
  { arbitrary: packageJson, weight: 4 },
  { arbitrary: fc.constantFrom('lodash@4', '{', '[]', 'null', '42', '"lodash"', '{"a":}'), weight: 1 },
  // Python's requirements.txt: not a package.json.
  { arbitrary: fc.constantFrom('requests==2.31.0', 'flask>=3\nrequests\n', '# no dependencies'), weight: 1 },
  { arbitrary: fc.string({ maxLength: 20 }), weight: 1 },
);
/** Whether the Function API accepts a dependencies file: a Node.js one must be blank or a package.json. */
const dependenciesValid = (family: RuntimeFamily, deps: string | undefined) =>
  family === RuntimeFamily.PYTHON || deps === undefined || deps.trim() === '' || isJsonObject(deps);

/** Whether source and dependencies fit in the ConfigMap the controller stores them in; blank Node.js dependencies are stored as `{}`. */
const fitsInConfigMap = (family: RuntimeFamily, source: string, deps: string | undefined) => {
  const stored = family === RuntimeFamily.NODEJS && (deps === undefined || deps.trim() === '') ? '{}' : deps ?? '';
  return Buffer.byteLength(source, 'utf8') + Buffer.byteLength(stored, 'utf8') <= INLINE_SOURCE_MAX_BYTES;
};

const HANDLERS = {
  [RuntimeFamily.NODEJS]: 'exports.main = () => "hi";\n',
  [RuntimeFamily.PYTHON]: 'def main(event, context):\n    return "hi"\n',
};
/** Sources around the most a ConfigMap holds, counted in bytes: 'é' takes two. */
const LARGE_SOURCES = ['x'.repeat(INLINE_SOURCE_MAX_BYTES), 'é'.repeat(INLINE_SOURCE_MAX_BYTES / 2), 'é'.repeat(INLINE_SOURCE_MAX_BYTES / 2 + 1)];

/**
 * The start of every generated Node.js source: an export of main, so that the rest of the text (any
 * string, in a comment) leaves the handler loadable. The rule of main itself has its own cases.
 */
const NODE_EXPORT = 'exports.main = () => 1; //';
/** The same for Python: main, then the text in a comment. */
const PYTHON_EXPORT = 'def main(event, context):\n    return 1\n#';
/** The text on one line, so that it stays in the comment; without NUL, which Python refuses anywhere in a source. */
const oneLine = (text: string) => text.replace(/[\n\r\u2028\u2029\0]/g, ' ');

function inlineSource(family: RuntimeFamily, validOnly: boolean): fc.Arbitrary<Choice<FunctionSource>> {
  const text = fc.oneof(
    { arbitrary: fc.constant(HANDLERS[family]), weight: 4 },
    { arbitrary: fc.string({ minLength: 1, maxLength: 30 }), weight: 4 },
    { arbitrary: fc.string({ minLength: 1, maxLength: 10, unit: 'grapheme' }), weight: 4 },
    { arbitrary: fc.constantFrom(...LARGE_SOURCES), weight: 1 },
    ...(validOnly ? [] : [{ arbitrary: fc.constant(''), weight: 1 }]),
  );
  const code = text.map(c => (c === '' || c === HANDLERS[family] ? c : `${family === RuntimeFamily.NODEJS ? NODE_EXPORT : PYTHON_EXPORT}${oneLine(c)}`));
  return fc.tuple(code, dependencies)
    .filter(([source, deps]) => !validOnly || (dependenciesValid(family, deps) && fitsInConfigMap(family, source, deps)))
    .map(([source, deps]) => ({
      value: FunctionSource.fromInline(source, deps),
      code: `FunctionSource.fromInline(${q(source)}${deps === undefined ? '' : `, ${q(deps)}`})`,
      valid: source !== '' && dependenciesValid(family, deps) && fitsInConfigMap(family, source, deps),
    }));
}

const gitUrl = fc.oneof(
  fc.constantFrom('git@github.com:org/repo.git', 'ssh://git@github.com/org/repo.git', 'git://git.example.com/repo',
    'http://gitea.local:3000/org/repo'),
  fc.stringMatching(/^[a-z][-a-z0-9]{0,8}$/).map(repo => `https://github.com/kyma-project/${repo}.git`),
);
const notGitUrl = fc.constantFrom('not a url', 'github.com/org/repo', 'https//github.com/org/repo', '');
const baseDir = fc.constantFrom(undefined, '/', 'functions/orders', '/src/');
const reference = fc.oneof(fc.constantFrom('main', 'v1.2.3', 'release/1.11'), fc.stringMatching(/^[0-9a-f]{40}$/));
const authType = fc.constantFrom(GitAuthType.BASIC, GitAuthType.KEY);
const auth = fc.option(fc.record({ type: authType, secretName: objectName }), { nil: undefined });

function gitCode(options: { url: string; baseDir?: string; reference: string; auth?: { type: GitAuthType; secretName: string } }): string {
  const parts = [`url: ${q(options.url)}`];
  if (options.baseDir !== undefined) parts.push(`baseDir: ${q(options.baseDir)}`);
  parts.push(`reference: ${q(options.reference)}`);
  if (options.auth) {
    const type = options.auth.type === GitAuthType.BASIC ? 'BASIC' : 'KEY';
    parts.push(`auth: { type: GitAuthType.${type}, secretName: ${q(options.auth.secretName)} }`);
  }
  return `FunctionSource.fromGitRepository({ ${parts.join(', ')} })`;
}

function gitSource(validOnly: boolean): fc.Arbitrary<Choice<FunctionSource>> {
  const valid = fc.record({ url: gitUrl, baseDir, reference, auth })
    .map(options => good(FunctionSource.fromGitRepository(options), gitCode(options)));
  const invalid = fc.record({ url: gitUrl, baseDir, reference, auth }).chain(options => fc.oneof(
    notGitUrl.map(url => ({ ...options, url })),
    fc.constantFrom('', '   ').map(dir => ({ ...options, baseDir: dir })),
    fc.constantFrom('', ' \t').map(ref => ({ ...options, reference: ref })),
    fc.record({ type: authType, secretName: notObjectName.filter(n => n.length <= 253) }).map(a => ({ ...options, auth: a })),
  )).map(options => bad(FunctionSource.fromGitRepository(options), gitCode(options)));
  return either(validOnly, valid, invalid);
}

// Environment.

const envName = fc.oneof(fc.stringMatching(/^[A-Z_][A-Z0-9_]{0,12}$/), fc.stringMatching(/^[a-z][-.a-zA-Z0-9_]{0,12}$/))
  .filter(name => !(RESERVED_ENV_NAMES as readonly string[]).includes(name));
const notEnvName = fc.oneof(fc.constantFrom(...RESERVED_ENV_NAMES), fc.constantFrom('1ST', 'HAS SPACE', '', 'A=B', 'ÄPFEL', '.', '..', '..A'));

const fieldPath = fc.constantFrom(...Object.values(EnvFieldPaths));
const resourcePath = fc.constantFrom(...Object.values(ResourceFieldPaths));
const divisor = fc.constantFrom(undefined, '1', '1m', '1Mi', '1k');
const notDivisor = fc.constantFrom('lots', '1 Mi', 'Mi');

function enumMember(enumObject: object, value: string): string {
  return Object.entries(enumObject).find(([, v]) => v === value)![0];
}

function fromResource(resource: ResourceFieldPaths, div: string | undefined, container: boolean, valid: boolean): Choice<EnvValue> {
  const options = {
    ...(div !== undefined ? { divisor: div } : {}),
    ...(container ? { container: new Container({ image: 'busybox', name: 'function' }) } : {}),
  };
  const code = [
    ...(div !== undefined ? [`divisor: ${q(div)}`] : []),
    ...(container ? ['container: new Container({ image: "busybox", name: "function" })'] : []),
  ];
  return {
    value: EnvValue.fromResource(resource, options),
    code: `EnvValue.fromResource(ResourceFieldPaths.${enumMember(ResourceFieldPaths, resource)}${code.length ? `, { ${code.join(', ')} }` : ''})`,
    valid,
  };
}

const optionalCode = (optional: boolean | undefined) => (optional === undefined ? '' : `, { optional: ${optional} }`);

function fromSecret(name: string, key: string, optional: boolean | undefined, valid: boolean): Choice<EnvValue> {
  return {
    value: EnvValue.fromSecretValue({ secret: secretNamed(name), key }, { optional }),
    code: `EnvValue.fromSecretValue({ secret: Secret.fromSecretName(scope, 'S', ${q(name)}), key: ${q(key)} }${optionalCode(optional)})`,
    valid,
  };
}

function fromConfigMap(name: string, key: string, optional: boolean | undefined, valid: boolean): Choice<EnvValue> {
  return {
    value: EnvValue.fromConfigMap(configMapNamed(name), key, { optional }),
    code: `EnvValue.fromConfigMap(ConfigMap.fromConfigMapName(scope, 'C', ${q(name)}), ${q(key)}${optionalCode(optional)})`,
    valid,
  };
}

const optional = fc.constantFrom(undefined, true, false);

const validEnvValue: fc.Arbitrary<Choice<EnvValue>> = fc.oneof(
  fc.string({ maxLength: 20 }).map(v => good(EnvValue.fromValue(v), `EnvValue.fromValue(${q(v)})`)),
  fc.tuple(objectName, configKey, optional).map(([name, key, opt]) => fromSecret(name, key, opt, true)),
  fc.tuple(objectName, configKey, optional).map(([name, key, opt]) => fromConfigMap(name, key, opt, true)),
  fc.tuple(fieldPath, fc.constantFrom('app', 'example.com/owner'), fc.constantFrom(undefined, 'v1')).map(([field, key, apiVersion]) => {
    const needsKey = field === EnvFieldPaths.POD_LABEL || field === EnvFieldPaths.POD_ANNOTATION;
    const options = { ...(needsKey ? { key } : {}), ...(apiVersion ? { apiVersion } : {}) };
    return good(EnvValue.fromFieldRef(field, options), `EnvValue.fromFieldRef(EnvFieldPaths.${enumMember(EnvFieldPaths, field)}, ${q(options)})`);
  }),
  fc.tuple(resourcePath, divisor, fc.boolean()).map(([resource, div, container]) => fromResource(resource, div, container, true)),
);
const invalidEnvValue: fc.Arbitrary<Choice<EnvValue>> = fc.oneof(
  fc.tuple(notObjectName, configKey, optional).map(([name, key, opt]) => fromSecret(name, key, opt, false)),
  fc.tuple(objectName, notConfigKey, optional).map(([name, key, opt]) => fromSecret(name, key, opt, false)),
  fc.tuple(notObjectName, configKey, optional).map(([name, key, opt]) => fromConfigMap(name, key, opt, false)),
  fc.tuple(objectName, notConfigKey, optional).map(([name, key, opt]) => fromConfigMap(name, key, opt, false)),
  fc.tuple(resourcePath, notDivisor, fc.boolean()).map(([resource, div, container]) => fromResource(resource, div, container, false)),
);

type Env = { [name: string]: EnvValue };

function env(validOnly: boolean): fc.Arbitrary<Choice<Env>> {
  const toEnv = (list: Array<[Choice<string>, Choice<EnvValue>]>): Choice<Env> => ({
    value: Object.fromEntries(list.map(([name, value]) => [name.value, value.value])),
    code: `{ ${list.map(([name, value]) => `${name.code}: ${value.code}`).join(', ')} }`,
    valid: list.every(([name, value]) => name.valid && value.valid),
  });
  const validEntries = fc.uniqueArray(fc.tuple(envName.map(plain(true)), validEnvValue),
    { selector: ([name]) => name.value, minLength: 1, maxLength: 4 });
  const invalidEntry = fc.oneof(
    fc.tuple(notEnvName.map(plain(false)), validEnvValue),
    fc.tuple(envName.map(plain(true)), invalidEnvValue),
  );
  return either(validOnly,
    validEntries.map(toEnv),
    fc.tuple(validEntries, invalidEntry, fc.nat()).map(([list, entry, at]) => {
      const others = list.filter(([name]) => name.value !== entry[0].value);
      return toEnv([...others.slice(0, at % (others.length + 1)), entry, ...others.slice(at % (others.length + 1))]);
    }));
}

// Secret mounts.

function mountsCode(mounts: readonly SecretMount[]): string {
  return `[${mounts.map(m => `{ secretName: ${q(m.secretName)}, mountPath: ${q(m.mountPath)} }`).join(', ')}]`;
}

function secretMounts(validOnly: boolean): fc.Arbitrary<Choice<SecretMount[]>> {
  const folder = fc.constantFrom('/etc/secrets', '/var/run/secrets/app', '/secrets');
  const validList = fc.tuple(fc.uniqueArray(objectName, { minLength: 1, maxLength: 3 }), folder)
    .map(([names, base]) => names.map(secretName => ({ secretName, mountPath: `${base}/${secretName}` })));
  const valid = validList.map(mounts => good(mounts, mountsCode(mounts)));
  const broken = validList.chain(mounts => fc.oneof<Array<fc.Arbitrary<SecretMount[]>>>(
    fc.constant([...mounts, { secretName: mounts[0].secretName, mountPath: '/other/place' }]),
    fc.constant([...mounts, { secretName: 'zz-other', mountPath: mounts[0].mountPath }]),
    fc.constant([...mounts, { secretName: 'zz-other', mountPath: `${mounts[0].mountPath}/` }]),
    fc.constantFrom('/tmp', '/tmp/', '/tmp//', 'config/secrets', 'C:\\secrets', '/mnt/a:b', '', ' ')
      .map(mountPath => [...mounts, { secretName: 'zz-other', mountPath }]),
    notObjectName.map(secretName => [...mounts, { secretName, mountPath: '/other/place' }]),
  )).map(mounts => bad(mounts, mountsCode(mounts)));
  return either(validOnly, valid, broken);
}

// Resources.

interface Minimum { readonly cpu: number; readonly memory: number }
/** The smallest explicit resources the Function API accepts, in millicores and mebibytes. */
const FUNCTION_MINIMUM: Minimum = { cpu: 10, memory: 16 };
const BUILD_MINIMUM: Minimum = { cpu: 200, memory: 200 };

function cpu(millis: number): Choice<Cpu> {
  return millis % 250 === 0 && millis > 0
    ? good(Cpu.units(millis / 1000), `Cpu.units(${millis / 1000})`)
    : good(Cpu.millis(millis), `Cpu.millis(${millis})`);
}

function memory(mebibytes: number, unit: number): Choice<Size> {
  if (unit === 0 && mebibytes % 1024 === 0 && mebibytes > 0) return good(Size.gibibytes(mebibytes / 1024), `Size.gibibytes(${mebibytes / 1024})`);
  if (unit === 1) return good(Size.kibibytes(mebibytes * 1024), `Size.kibibytes(${mebibytes * 1024})`);
  return good(Size.mebibytes(mebibytes), `Size.mebibytes(${mebibytes})`);
}

type Mode = 'none' | 'request' | 'limit' | 'both';
const mode = fc.constantFrom<Mode>('none', 'request', 'limit', 'both');

/** A request and a limit, as the mode asks; `[request, limit]` amounts are ordered when both are given. */
function amounts(min: number, max: number) {
  return fc.tuple(mode, fc.integer({ min, max }), fc.integer({ min, max }))
    .map(([m, a, b]): [Mode, number, number] => [m, Math.min(a, b), Math.max(a, b)]);
}

interface CustomResources {
  cpu: [Mode, number, number];
  memory: [Mode, number, number];
  storage: [Mode, number, number];
  unit: number;
}

function renderCustom(r: CustomResources): Choice<ContainerResources> {
  const parts: string[] = [];
  const resources: { -readonly [K in keyof ContainerResources]: any } = {};
  const add = (key: 'cpu' | 'memory' | 'ephemeralStorage', [m, req, lim]: [Mode, number, number], render: (n: number) => Choice<unknown>) => {
    if (m === 'none') return;
    const fields: string[] = [];
    const value: Record<string, unknown> = {};
    if (m === 'request' || m === 'both') {
      const c = render(req);
      value.request = c.value;
      fields.push(`request: ${c.code}`);
    }
    if (m === 'limit' || m === 'both') {
      const c = render(lim);
      value.limit = c.value;
      fields.push(`limit: ${c.code}`);
    }
    resources[key] = value;
    parts.push(`${key}: { ${fields.join(', ')} }`);
  };
  add('cpu', r.cpu, cpu);
  add('memory', r.memory, n => memory(n, r.unit));
  add('ephemeralStorage', r.storage, n => good(Size.gibibytes(n), `Size.gibibytes(${n})`));
  return good(resources, `{ ${parts.join(', ')} }`);
}

const hasAny = (r: CustomResources) => r.cpu[0] !== 'none' || r.memory[0] !== 'none' || r.storage[0] !== 'none';

function customResources(minimum: Minimum, validOnly: boolean): fc.Arbitrary<Choice<ContainerResources>> {
  const valid = fc.record({
    cpu: amounts(minimum.cpu, 1500),
    memory: amounts(minimum.memory, 2048),
    storage: amounts(1, 4),
    unit: fc.integer({ min: 0, max: 2 }),
  }).filter(hasAny).map(renderCustom);
  const invalid = fc.record({
    cpu: amounts(minimum.cpu, 1500),
    memory: amounts(minimum.memory, 2048),
    storage: amounts(1, 4),
    unit: fc.integer({ min: 0, max: 2 }),
  }).chain(r => fc.oneof(
    // A request above its limit.
    fc.integer({ min: 1, max: 500 }).map(d => ({ ...r, cpu: ['both', r.cpu[2] + d, r.cpu[2]] as [Mode, number, number] })),
    fc.integer({ min: 1, max: 500 }).map(d => ({ ...r, memory: ['both', r.memory[2] + d, r.memory[2]] as [Mode, number, number] })),
    fc.integer({ min: 1, max: 2 }).map(d => ({ ...r, storage: ['both', r.storage[2] + d, r.storage[2]] as [Mode, number, number] })),
    // Less than the controller accepts.
    fc.tuple(fc.constantFrom<Mode>('request', 'limit', 'both'), fc.integer({ min: 0, max: minimum.cpu - 1 }))
      .map(([m, n]) => ({ ...r, cpu: [m, n, n] as [Mode, number, number] })),
    fc.tuple(fc.constantFrom<Mode>('request', 'limit', 'both'), fc.integer({ min: 0, max: minimum.memory - 1 }))
      .map(([m, n]) => ({ ...r, memory: [m, n, n] as [Mode, number, number], unit: 2 })),
  )).map(r => ({ ...renderCustom(r), valid: false }));
  return either(validOnly, valid, invalid);
}

function resources(validOnly: boolean): fc.Arbitrary<Choice<FunctionResources>> {
  const presets = fc.constantFrom(...Object.keys(FunctionProfile) as Array<keyof typeof FunctionProfile>)
    .map(p => good(FunctionResources.preset(FunctionProfile[p]), `FunctionResources.preset(FunctionProfile.${p})`));
  const unknownPreset = fc.constant(bad(FunctionResources.preset('XXL' as FunctionProfile), 'FunctionResources.preset("XXL" as FunctionProfile)'));
  const custom = customResources(FUNCTION_MINIMUM, validOnly)
    .map(c => ({ value: FunctionResources.custom(c.value), code: `FunctionResources.custom(${c.code})`, valid: c.valid }));
  return fc.oneof({ arbitrary: presets, weight: 9 }, { arbitrary: custom, weight: 9 }, { arbitrary: unknownPreset, weight: validOnly ? 0 : 1 });
}

function buildResources(validOnly: boolean): fc.Arbitrary<Choice<BuildResources>> {
  const presets = fc.constantFrom(...Object.keys(BuildProfile) as Array<keyof typeof BuildProfile>)
    .map(p => good(BuildResources.preset(BuildProfile[p]), `BuildResources.preset(BuildProfile.${p})`));
  const unknownPreset = fc.constant(bad(BuildResources.preset('turbo' as BuildProfile), 'BuildResources.preset("turbo" as BuildProfile)'));
  const custom = customResources(BUILD_MINIMUM, validOnly)
    .map(c => ({ value: BuildResources.custom(c.value), code: `BuildResources.custom(${c.code})`, valid: c.valid }));
  return fc.oneof({ arbitrary: presets, weight: 9 }, { arbitrary: custom, weight: 9 }, { arbitrary: unknownPreset, weight: validOnly ? 0 : 1 });
}

// Scaling.

interface Scaling {
  readonly replicas?: Choice<number>;
  readonly scale?: Choice<FunctionScale>;
}

function scaling(validOnly: boolean): fc.Arbitrary<Scaling> {
  const replicas = either(validOnly,
    fc.integer({ min: 0, max: 5 }).map(n => good(n, String(n))),
    fc.constantFrom(-1, 2.5).map(n => bad(n, String(n))));
  const scaleCode = (s: FunctionScale) => `{ minReplicas: ${s.minReplicas}, maxReplicas: ${s.maxReplicas} }`;
  const scale = either(validOnly,
    fc.tuple(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 5 }))
      .map(([a, b]) => ({ minReplicas: Math.min(a, b), maxReplicas: Math.max(a, b) }))
      .map(s => good(s, scaleCode(s))),
    fc.oneof(
      fc.tuple(fc.integer({ min: 2, max: 5 }), fc.integer({ min: 1, max: 4 })).filter(([min, max]) => min > max),
      fc.tuple(fc.constant(0), fc.integer({ min: 0, max: 3 })),
    ).map(([minReplicas, maxReplicas]) => bad({ minReplicas, maxReplicas }, scaleCode({ minReplicas, maxReplicas }))));
  return fc.oneof(
    { arbitrary: fc.constant({}), weight: 3 },
    { arbitrary: replicas.map(r => ({ replicas: r })), weight: 3 },
    { arbitrary: scale.map(s => ({ scale: s })), weight: 3 },
    // Both at once is an error.
    { arbitrary: fc.tuple(replicas, scale).map(([r, s]) => ({ replicas: r, scale: s })), weight: validOnly ? 0 : 1 },
  );
}

// Labels, annotations, image.

const keyName = fc.stringMatching(/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,10}[A-Za-z0-9])?$/);
const keyPrefix = fc.constantFrom(undefined, 'example.com', 'app.kubernetes.io', 'team-a.io', 'serverless.kyma-project.io.example.com');
const qualifiedKey = fc.oneof(
  fc.tuple(keyPrefix, keyName).map(([prefix, name]) => (prefix ? `${prefix}/${name}` : name)),
  fc.constant('k'.repeat(63)),
);
const notQualifiedKey = fc.constantFrom('bad key', '-lead', 'trail-', 'a/b/c', '/x', 'x/', '', 'k'.repeat(64), `example.com/${'k'.repeat(64)}`);
/** Label keys are case-sensitive; annotation keys are checked in lower case, so this one is a valid annotation key. */
const upperCasePrefixKey = fc.constant('Example.com/owner');
const reservedKey = keyName.map(name => `serverless.kyma-project.io/${name}`);
/** A valid qualified key that the CRD still rejects as a label: labels' keys must be shorter than 64 characters. */
const longPrefixedKey = fc.constant(`example.com/${'k'.repeat(52)}`);
const labelValue = fc.stringMatching(/^([A-Za-z0-9]([-A-Za-z0-9_.]{0,10}[A-Za-z0-9])?)?$/);
const notLabelValue = fc.constantFrom('has space', 'v'.repeat(64), '-lead', 'trail.', 'ä');

type StringMap = { [key: string]: string };

function mapChoice(map: StringMap, valid: boolean): Choice<StringMap> {
  return { value: map, code: `{ ${Object.entries(map).map(([k, v]) => `${q(k)}: ${q(v)}`).join(', ')} }`, valid };
}

function labels(validOnly: boolean): fc.Arbitrary<Choice<StringMap>> {
  const valid = fc.dictionary(qualifiedKey, labelValue, { minKeys: 1, maxKeys: 3, noNullPrototype: true });
  const invalidEntry = fc.oneof(
    fc.tuple(fc.oneof(notQualifiedKey, upperCasePrefixKey, reservedKey, longPrefixedKey), labelValue),
    fc.tuple(qualifiedKey, notLabelValue),
  );
  return either(validOnly,
    valid.map(m => mapChoice(m, true)),
    fc.tuple(valid, invalidEntry).map(([m, [k, v]]) => mapChoice({ ...m, [k]: v }, false)));
}

function annotations(validOnly: boolean): fc.Arbitrary<Choice<StringMap>> {
  const valid = fc.dictionary(fc.oneof(qualifiedKey, longPrefixedKey), fc.string({ maxLength: 30 }),
    { minKeys: 1, maxKeys: 3, noNullPrototype: true });
  return either(validOnly,
    valid.map(m => mapChoice(m, true)),
    fc.tuple(valid, fc.oneof(notQualifiedKey, reservedKey), fc.string({ maxLength: 10 }))
      .map(([m, k, v]) => mapChoice({ ...m, [k]: v }, false)));
}

const runtimeImageOverride = (validOnly: boolean) => either(validOnly,
  fc.oneof(
    fc.constantFrom('', 'node:22-alpine', 'python:3.12', 'localhost:5000/fn', `ghcr.io/org/img@sha256:${'a'.repeat(64)}`,
      'europe-docker.pkg.dev/kyma-project/prod/function-runtime-nodejs22:1.11.1'),
    fc.tuple(fc.stringMatching(/^[a-z0-9]{1,8}$/), fc.stringMatching(/^[\w][\w.-]{0,8}$/))
      .map(([repo, tag]) => `registry.example.com/team/${repo}:${tag}`),
  ).map(plain(true)),
  fc.constantFrom('Not An Image', 'Upper/Case', 'node:', 'https://registry.example.com/node:22', 'node@sha256:xyz').map(plain(false)));

// Whole props.

/** Generated props, with the props the Function should be rejected for. */
interface Case {
  readonly props: KymaFunctionProps;
  readonly invalid: ReadonlySet<Prop>;
}

interface Parts {
  name?: Choice<string>;
  namespace?: Choice<string>;
  runtime: Choice<FunctionRuntime>;
  source: Choice<FunctionSource>;
  env?: Choice<Env>;
  secretMounts?: Choice<SecretMount[]>;
  resources?: Choice<FunctionResources>;
  buildResources?: Choice<BuildResources>;
  scaling: Scaling;
  labels?: Choice<StringMap>;
  annotations?: Choice<StringMap>;
  runtimeImageOverride?: Choice<string>;
}

function toCase(parts: Parts): Case {
  const { scaling: { replicas, scale }, ...rest } = parts;
  const chosen: Array<[Prop, Choice<unknown> | undefined]> = [
    ...Object.entries(rest) as Array<[Prop, Choice<unknown> | undefined]>,
    ['replicas', replicas],
    ['scale', scale],
  ];
  const given = PROPS.flatMap(prop => {
    const c = chosen.find(([p]) => p === prop)?.[1];
    return c ? [[prop, c] as const] : [];
  });
  const invalid = new Set<Prop>(given.filter(([, c]) => !c.valid).map(([prop]) => prop));
  // 'replicas' and 'scale' together are reported against 'replicas'.
  if (replicas && scale) invalid.add('replicas');
  const props = Object.fromEntries(given.map(([prop, c]) => [prop, c.value])) as unknown as KymaFunctionProps;
  const code = `{\n${given.map(([prop, c]) => `  ${prop}: ${c.code},`).join('\n')}\n}`;
  return { props, invalid, [fc.toStringMethod]: () => code } as Case;
}

function functionProps(validOnly: boolean): fc.Arbitrary<Case> {
  // Built once, outside the chain: fast-check prepares each string arbitrary as it is made (its
  // slices of known-dangerous strings, worked out by throwing and catching), which cost most of
  // the suite's time when every generated case made its own. The values generated are the same.
  const name = sometimes(functionName(validOnly));
  const namespace = fc.option(namespaceName(validOnly), { freq: 4, nil: undefined });
  const sources = new Map<RuntimeFamily, fc.Arbitrary<Choice<FunctionSource>>>();
  const git = gitSource(validOnly);
  const source = (family: RuntimeFamily) => {
    if (!sources.has(family)) sources.set(family, fc.oneof(inlineSource(family, validOnly), git));
    return sources.get(family)!;
  };
  const rest = {
    env: sometimes(env(validOnly)),
    secretMounts: sometimes(secretMounts(validOnly)),
    resources: sometimes(resources(validOnly)),
    buildResources: sometimes(buildResources(validOnly)),
    scaling: scaling(validOnly),
    labels: sometimes(labels(validOnly)),
    annotations: sometimes(annotations(validOnly)),
    runtimeImageOverride: sometimes(runtimeImageOverride(validOnly)),
  };
  return runtime(validOnly).chain(rt => fc.record({
    name,
    namespace,
    runtime: fc.constant(rt),
    source: source(rt.value.family),
    ...rest,
  })).map(toCase);
}

// Synth.

type Outcome = { readonly objects: any[]; readonly error?: undefined } | { readonly objects?: undefined; readonly error: Error };

/** Synthesizes a Function of the props in a fresh app, in a chart of namespace team-a. */
function synth(props: KymaFunctionProps): Outcome {
  try {
    const chart = new Chart(app(), 'test', { namespace: 'team-a' });
    new KymaFunction(chart, 'hello', props);
    return { objects: Testing.synth(chart) };
  } catch (e) {
    return { error: e as Error };
  }
}

const VALIDATION_FAILED = 'Validation failed with the following errors:';
const ERROR_LINE = new RegExp(`^\\[test/hello\\] '(${PROPS.join('|')})(?=['.\\[])`);

/** The props the errors of a failed synth name; throws when an error names none. */
function propsNamed(error: Error): Set<Prop> {
  expect(error.message.startsWith(`${VALIDATION_FAILED}\n  [`)).toBe(true);
  const named = new Set<Prop>();
  // cdk8s puts each error on a line of its own, indented by two spaces.
  for (const problem of error.message.slice(VALIDATION_FAILED.length).split(/\n {2}(?=\[)/).slice(1)) {
    const match = ERROR_LINE.exec(problem);
    if (!match) throw new Error(`error names no prop: ${problem}`);
    named.add(match[1] as Prop);
  }
  return named;
}

/** The one Function of a synth, checked by every rule, by our CRD and by upstream's. */
function expectAccepted(objects: readonly any[]): void {
  const functions = objects.filter(o => o.kind === 'Function');
  expect(functions).toHaveLength(1);
  const [fn] = functions;
  expect(validateFunction(fn)).toEqual([]);
  expect(functionSchemaValidator().validate(fn)).toEqual([]);
  expect(upstreamValidator.validate(fn)).toEqual([]);
  // A fixed point of the 1.11.1 controller: nothing the stored Deployment holds is missing from its env.
  expect(serverDefaultedFields(fn.spec.env)).toEqual([]);
  expect(defaultFunction(fn).spec.env).toEqual(fn.spec.env);
}

// Counterexamples these properties found in src; fast-check runs them first, every time.

function example(parts: Partial<Parts>): [Case] {
  return [toCase({
    runtime: good(FunctionRuntime.NODEJS_22, 'FunctionRuntime.NODEJS_22'),
    source: good(FunctionSource.fromInline('exports.main = () => 1'), 'FunctionSource.fromInline("exports.main = () => 1")'),
    scaling: {},
    ...parts,
  })];
}

/** Valid props found to crash synth: a map without a prototype breaks the serialization of the Function. */
const FOUND_VALID: Array<[Case]> = [
  example({ labels: good(Object.assign(Object.create(null), { app: 'web' }), 'Object.assign(Object.create(null), { app: "web" })') }),
];

/** Invalid props found to synthesize. */
const FOUND_INVALID: Array<[Case]> = [
  // Secret and ConfigMap names must be DNS-1123 subdomains, and a blank one is none.
  example({ env: bad({ TOKEN: EnvValue.fromSecretValue({ secret: secretNamed(' '), key: 'token' }) },
    '{ TOKEN: EnvValue.fromSecretValue({ secret: Secret.fromSecretName(scope, \'S\', " "), key: "token" }) }') }),
  example({ secretMounts: bad([{ secretName: ' ', mountPath: '/etc/secrets/token' }], '[{ secretName: " ", mountPath: "/etc/secrets/token" }]') }),
  // Kubernetes rejects a request above its limit for every resource, not only CPU and memory.
  example({ resources: bad(FunctionResources.custom({ ephemeralStorage: { request: Size.gibibytes(2), limit: Size.gibibytes(1) } }),
    'FunctionResources.custom({ ephemeralStorage: { request: Size.gibibytes(2), limit: Size.gibibytes(1) } })') }),
  // Kubernetes' IsEnvVarName also rejects '.', '..' and names starting with '..'.
  example({ env: bad({ '..A': EnvValue.fromValue('x') }, '{ "..A": EnvValue.fromValue("x") }') }),
];

describe('KymaFunction, over generated props', () => {
  const anyProps = functionProps(false);

  test('either fails synth naming the construct and a prop, or synthesizes a Function every validator accepts', () => {
    const outcomes = { failed: 0, synthesized: 0 };
    fc.assert(fc.property(anyProps, ({ props }) => {
      const outcome = synth(props);
      if (outcome.error) {
        outcomes.failed++;
        expect(outcome.error.message).toContain('[test/');
        const named = propsNamed(outcome.error);
        expect(named.size).toBeGreaterThan(0);
        // Errors name only props that were given.
        for (const prop of named) expect(Object.keys(props)).toContain(prop);
      } else {
        outcomes.synthesized++;
        expectAccepted(outcome.objects);
      }
    }), { numRuns: 150, examples: FOUND_VALID });
    // Both outcomes are common, so neither half of the property is vacuous.
    expect(outcomes.failed).toBeGreaterThanOrEqual(30);
    expect(outcomes.synthesized).toBeGreaterThanOrEqual(30);
  });

  test('props built only from valid choices always synthesize', () => {
    fc.assert(fc.property(functionProps(true), ({ props }) => {
      const outcome = synth(props);
      if (outcome.error) throw outcome.error;
      expectAccepted(outcome.objects);
    }), { numRuns: 80, examples: FOUND_VALID });
  });

  test('fails exactly for the props that were given an invalid value', () => {
    fc.assert(fc.property(anyProps, ({ props, invalid }) => {
      const outcome = synth(props);
      const named = outcome.error ? propsNamed(outcome.error) : new Set<Prop>();
      expect([...named].sort()).toEqual([...invalid].sort());
    }), { numRuns: 150, examples: FOUND_INVALID });
  });

  test('synth is deterministic: the same props give the same output in two fresh apps', () => {
    fc.assert(fc.property(anyProps, ({ props }) => {
      const first = synth(props);
      const second = synth(props);
      expect(second.error?.message).toEqual(first.error?.message);
      expect(JSON.stringify(second.objects)).toEqual(JSON.stringify(first.objects));
    }), { numRuns: 50 });
  });
});
