/**
 * Fuzz tests of the package's three input surfaces: the Function rules (`validateFunction`,
 * `defaultFunction`), the `function.yaml` loader (`FunctionFolder`) and the webhook (its decoder,
 * its two reviews, and the HTTPS server end to end).
 *
 * Whatever arrives, each surface must not crash (no TypeError, RangeError or other unexpected
 * exception), must answer bad input with a clear error (a message that names the problem, the
 * file and the key), and must write nothing.
 *
 * The bugs these properties found (ten, all fixed) have a regression test each at the end of the file.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import { Writable } from 'node:stream';
import { isDeepStrictEqual } from 'node:util';
import * as fc from 'fast-check';
import { Operation, applyPatch } from 'fast-json-patch';
import { parseDocument, stringify as toYaml } from 'yaml';
import {
  DEFAULT_FUNCTION_DEFAULTS, FUNCTION_API_VERSION, FUNCTION_GROUP, FUNCTION_VERSION, RUNTIMES, defaultFunction, validateFunction,
} from '../../src/api';
import { INLINE_SOURCE_MAX_BYTES } from '../../src/api/function-rules';
import { BUILD_PROFILES, FUNCTION_PROFILES } from '../../src/api/profiles';
import { displayPath } from '../../src/function/_paths';
import { FUNCTION_FILE, FunctionFolder } from '../../src/function/function-folder';
import {
  AdmissionRequest, AdmissionRequestError, decodeAdmissionReview, reviewDefaulting, reviewValidation,
} from '../../src/webhook/admission';
import { createCertificateAuthority, createServingCertificate } from '../../src/webhook/certificates';
import { MAX_REQUEST_BYTES, WEBHOOK_PATHS, resolveWebhookConfig } from '../../src/webhook/config';
import { LogLevel } from '../../src/log-level';
import { createLogger } from '../../src/webhook/log';
import { WebhookMetrics } from '../../src/webhook/metrics';
import { OBSERVABILITY_PATHS, WebhookServer } from '../../src/webhook/server';
import { admissionReviewOf } from '../util/admission';
import { binaryString } from '../util/binary-string';
import { VALID_FUNCTIONS } from '../util/function-rule-cases';

// This file only: jest gives each test file its own fast-check module.
fc.configureGlobal({ numRuns: 150 });

/** A value for a failure message: long strings abbreviated, at most 600 characters. */
function show(value: unknown): string {
  const abbreviate = (_key: string, v: unknown) => (typeof v === 'string' && v.length > 80 ? `${v.slice(0, 20)}... (${v.length} characters)` : v);
  try {
    return (JSON.stringify(value, abbreviate) ?? String(value)).slice(0, 600);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/** Fails a property with a message that shows the offending value. */
function check(condition: unknown, what: string, value?: unknown): asserts condition {
  if (!condition) throw new Error(`${what}${value === undefined ? '' : `: ${show(value)}`}`);
}

/** Whether an error is one of the crashes no input may cause. */
function isCrash(e: unknown): boolean {
  return !(e instanceof Error) || e instanceof TypeError || e instanceof RangeError || e instanceof ReferenceError
    || e instanceof SyntaxError || e instanceof EvalError || e instanceof URIError;
}

/** Names an error, also one of another realm (a stack overflow in native code throws the main realm's RangeError). */
function describeError(e: unknown): string {
  const { name, message } = (typeof e === 'object' && e !== null ? e : {}) as { name?: unknown; message?: unknown };
  return typeof message === 'string' ? `${String(name)}: ${message.slice(0, 300)}` : `a thrown ${typeof e}`;
}

// ---------------------------------------------------------------------------------------------
// Arbitraries
// ---------------------------------------------------------------------------------------------

/** Nesting this deep is safe; much deeper nesting is a known bug (see the pins at the end). */
const SAFE_DEPTH = 500;

/** Keys that trip code which treats a parsed object like a plain one. */
const TRICKY_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', 'toJSON', 'length', '0', '', ' ', 'a/b', '~1', 'a.b'];

/** Every field name of a Function (and of an AdmissionReview), so that random keys sometimes hit them. */
const FIELD_NAMES = [
  'apiVersion', 'kind', 'metadata', 'name', 'namespace', 'labels', 'annotations', 'generateName', 'deletionTimestamp',
  'spec', 'runtime', 'source', 'inline', 'dependencies', 'gitRepository', 'url', 'baseDir', 'reference', 'auth', 'type',
  'secretName', 'env', 'value', 'valueFrom', 'secretKeyRef', 'configMapKeyRef', 'fieldRef', 'resourceFieldRef', 'fileKeyRef',
  'key', 'optional', 'fieldPath', 'resource', 'divisor', 'secretMounts', 'mountPath', 'resourceConfiguration', 'function',
  'build', 'profile', 'resources', 'requests', 'limits', 'claims', 'cpu', 'memory', 'replicas', 'scaleConfig', 'minReplicas',
  'maxReplicas', 'runtimeImageOverride', 'template', 'status', 'request', 'uid', 'operation', 'object', 'oldObject',
];

const anyKey = fc.oneof(
  { weight: 2, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.constantFrom(...TRICKY_KEYS) },
  { weight: 1, arbitrary: fc.constantFrom(...FIELD_NAMES) },
);

/** An object with exactly these own enumerable properties (`__proto__` too, as JSON.parse makes it). */
function own(entries: ReadonlyArray<readonly [string, unknown]>, nullPrototype = false): Record<string, unknown> {
  const object: Record<string, unknown> = nullPrototype ? Object.create(null) : {};
  for (const [key, value] of entries) Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  return object;
}

/** One object in five without a prototype. */
const nullPrototype = fc.nat(4).map(n => n === 0);

/** Arrays (`[[[1]]]`) or objects (`{a:{a:{a:1}}}`) nested `depth` levels deep. */
function nested(depth: number, arrays: boolean): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = arrays ? [value] : { a: value };
  return value;
}

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map(c => String.fromCharCode(c));
const numericString = fc.oneof(
  fc.integer().map(String),
  fc.double().map(String),
  fc.constantFrom('1', '0', '-0', '-1', '1.5', '1e3', '1e400', 'Infinity', 'NaN', '0x10', ' 1', '1 ', '١', '2147483648'),
);
const quantityText = fc.constantFrom(
  '100m', '1', '0.5', '.5', '128Mi', '1Gi', '1e3', '2E-1', '0', '-1', '-128Mi', '1.5.5', '1Mi ', '1mi', '10M', '9Ei', '1e308', '1e400', '', 'm', '+1', '1Ki', '0.1Ki',
);

const ABSENT = Symbol('absent');

/**
 * The values the arbitraries below are made of: strings up to `maxHuge` characters, and junk
 * (any JSON-like value) nested up to `maxDepth` levels.
 */
function vocabulary(maxHuge: number, maxDepth: number) {
  const hugeString = fc.tuple(
    fc.constantFrom('a', 'A', '0', '-', '.', '/', ':', ' ', '\n', 'é', '\u{1F600}', '\u0000', '\ud800'),
    fc.integer({ min: 1_000, max: maxHuge }),
  ).map(([c, n]) => c.repeat(n));
  const weirdString = fc.oneof(
    { weight: 4, arbitrary: fc.string() },
    { weight: 2, arbitrary: binaryString() },
    { weight: 1, arbitrary: fc.string({ unit: fc.oneof(loneSurrogate, fc.constantFrom('a', '/', '.', '-')) }) },
    { weight: 2, arbitrary: numericString },
    { weight: 1, arbitrary: quantityText },
    { weight: 1, arbitrary: hugeString },
  );
  const scalar = fc.oneof(
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double(),
    fc.constantFrom(0, -0, 1, 2 ** 31, 2 ** 31 - 1, -(2 ** 31) - 1, 2 ** 53, 1e300, 0.5),
    weirdString,
  );
  const deep = fc.tuple(fc.integer({ min: 1, max: maxDepth }), fc.boolean()).map(([depth, arrays]) => nested(depth, arrays));
  /** Any JSON-like value: scalars, arrays, objects with tricky keys and no prototype, deep nesting. */
  const { junk } = fc.letrec<{ junk: unknown; list: unknown[]; map: Record<string, unknown> }>(tie => ({
    junk: fc.oneof({ depthSize: 'small' }, scalar, tie('list'), tie('map'), deep),
    list: fc.array(tie('junk'), { maxLength: 4 }),
    map: fc.tuple(fc.array(fc.tuple(anyKey, tie('junk')), { maxLength: 4 }), nullPrototype).map(([entries, np]) => own(entries, np)),
  }));

  /** A field's value: mostly a plausible one, sometimes junk, sometimes an array of plausible ones. */
  const field = (good: fc.Arbitrary<unknown>, goodWeight = 6): fc.Arbitrary<unknown> => fc.oneof(
    { weight: goodWeight, arbitrary: good },
    { weight: 1, arbitrary: junk },
    { weight: 1, arbitrary: fc.array(good, { maxLength: 2 }) },
  );

  /**
   * An object with some of the given fields (each plausible or not) and now and then an unknown
   * one. Spine fields are present nine times in ten, the others half the time.
   */
  const shaped = (fields: Record<string, fc.Arbitrary<unknown>>, spine: readonly string[] = []): fc.Arbitrary<Record<string, unknown>> => {
    const entries = Object.entries(fields).map(([key, arb]) => fc.option(arb, { nil: ABSENT, freq: spine.includes(key) ? 10 : 2 }).map(v => [key, v] as const));
    return fc.tuple(fc.tuple(...entries), fc.array(fc.tuple(anyKey, junk), { maxLength: 1 }), nullPrototype)
      .map(([known, extra, np]) => own([...known.filter(([, v]) => v !== ABSENT), ...extra], np));
  };

  const nameLike = fc.oneof(
    fc.constantFrom('greeter', 'a', 'a-b', 'my.fn', 'A', '1a', '-a', 'a-', '', 'a'.repeat(64), 'a'.repeat(254)),
    fc.stringMatching(/^[a-z][a-z0-9-]{0,70}$/),
    weirdString,
  );
  const keyLike = fc.oneof(fc.constantFrom('token', 'a.b', '..', '.', 'a/b', ''), weirdString);
  const labelKey = fc.oneof(
    fc.constantFrom('app', 'example.com/notes', 'serverless.kyma-project.io/x', 'a/b/c', '/x', 'x/', 'A_b.c', 'a'.repeat(64), 'Example.COM/x'),
    anyKey,
    weirdString,
  );
  const labelValue = fc.oneof(fc.constantFrom('v', '', 'a'.repeat(64), '-x', 'a b'), weirdString);
  const stringMap = fc.tuple(fc.array(fc.tuple(labelKey, field(labelValue)), { maxLength: 4 }), nullPrototype)
    .map(([entries, np]) => own(entries, np));
  const quantity = field(fc.oneof(quantityText, fc.integer({ min: -5, max: 1_000_000 }), fc.double(), numericString));
  const mountPath = fc.oneof(fc.constantFrom('/etc/x', '/tmp', '/tmp/', '/tmp//', 'rel', '/a:b', '/', '//', '/etc/x/'), weirdString);
  const imageLike = fc.oneof(fc.constantFrom('registry.example.com/node:22', 'node', '', 'Node', 'a/b:c@sha256:' + '0'.repeat(64), 'a'.repeat(500)), weirdString);
  return { weirdString, junk, field, shaped, nameLike, keyLike, stringMap, quantity, mountPath, imageLike };
}

const { weirdString, junk, field, shaped, nameLike, keyLike, stringMap, quantity, mountPath, imageLike } = vocabulary(100_000, SAFE_DEPTH);
const intLike = fc.oneof(
  fc.integer({ min: -2, max: 6 }),
  fc.integer(),
  fc.constantFrom(2 ** 31, 2 ** 31 - 1, 2 ** 53 + 2, 1.5, -0, NaN, Infinity),
  numericString,
);

const amounts = shaped({ cpu: quantity, memory: quantity });
const resourcesArb = shaped({
  requests: field(amounts),
  limits: field(amounts),
  claims: field(fc.array(field(shaped({ name: field(nameLike), request: field(nameLike) })), { maxLength: 2 })),
});
const block = (profiles: readonly string[]) => shaped({
  profile: field(fc.constantFrom(...profiles, 'XXL', '', 'l', 'custom')),
  resources: field(resourcesArb),
});
const keyRef = shaped({ name: field(nameLike), key: field(keyLike), optional: field(fc.boolean()) }, ['name', 'key']);
const envVar = shaped({
  name: field(fc.oneof(fc.constantFrom('GREETING', 'FUNC_PORT', 'NODE_PATH', '1A', '.', '..x', 'a-b.c', ''), weirdString)),
  value: field(weirdString),
  valueFrom: field(shaped({
    secretKeyRef: field(keyRef),
    configMapKeyRef: field(keyRef),
    fieldRef: field(shaped({ fieldPath: field(fc.constantFrom('metadata.name', 'status.podIP', '')), apiVersion: field(fc.constantFrom('v1', '')) })),
    resourceFieldRef: field(shaped({ resource: field(fc.constantFrom('limits.cpu', 'requests.memory', 'x')), divisor: quantity, containerName: field(nameLike) })),
    fileKeyRef: field(shaped({ key: field(keyLike), path: field(weirdString), volumeName: field(nameLike), optional: field(fc.boolean()) })),
  })),
}, ['name']);
const sourceText = fc.oneof(
  { weight: 6, arbitrary: fc.oneof(fc.constantFrom('exports.main = () => "ok"', 'def main(event, context):\n  return 1', ''), fc.string()) },
  { weight: 1, arbitrary: fc.integer({ min: INLINE_SOURCE_MAX_BYTES - 4, max: INLINE_SOURCE_MAX_BYTES + 4 }).map(n => 'x'.repeat(n)) },
  { weight: 1, arbitrary: weirdString },
);
const dependenciesText = fc.oneof(
  fc.constantFrom('', ' ', '  \n', '{}', '{"dependencies":{"lodash":"^4"}}', '[]', 'null', '1', '"x"', '{', 'requests==2.32.3', '{"a":1}x'),
  fc.json(),
  weirdString,
);
const urlLike = fc.oneof(
  fc.constantFrom('https://git.example.com/r.git', 'git@git.example.com:org/r.git', 'ssh://git@h/r', 'git://h/r', 'file:///x', 'not a url', '', 'https://', 'git@:x', 'mailto:x'),
  fc.webUrl(),
  weirdString,
);

const specArb = shaped({
  runtime: field(fc.constantFrom(...RUNTIMES, 'nodejs18', 'python39', 'nodejs', 'node', 'NODEJS22', 'python3')),
  source: field(shaped({
    inline: field(shaped({ source: field(sourceText), dependencies: field(dependenciesText) }, ['source'])),
    gitRepository: field(shaped({
      url: field(urlLike),
      baseDir: field(fc.oneof(fc.constantFrom('/', 'fn', '', '  '), weirdString)),
      reference: field(fc.oneof(fc.constantFrom('main', '', ' '), weirdString)),
      auth: field(shaped({ type: field(fc.constantFrom('basic', 'key', 'ssh', '')), secretName: field(nameLike) })),
    }, ['url'])),
  })),
  env: field(fc.array(field(envVar), { maxLength: 4 })),
  secretMounts: field(fc.array(field(shaped({ secretName: field(nameLike), mountPath: field(mountPath) }, ['secretName', 'mountPath'])), { maxLength: 4 })),
  resourceConfiguration: field(shaped({ function: field(block(FUNCTION_PROFILES)), build: field(block(BUILD_PROFILES)) })),
  replicas: field(intLike),
  scaleConfig: field(shaped({ minReplicas: field(intLike), maxReplicas: field(intLike) }, ['minReplicas', 'maxReplicas'])),
  labels: field(stringMap),
  annotations: field(stringMap),
  runtimeImageOverride: field(imageLike),
  template: field(shaped({ labels: field(stringMap), annotations: field(stringMap) })),
}, ['runtime', 'source']);

/** Objects shaped like Functions, with random values at every level. */
const functionShaped = shaped({
  apiVersion: field(fc.constantFrom(FUNCTION_API_VERSION, 'serverless.kyma-project.io/v1alpha1', 'v1', '')),
  kind: field(fc.constantFrom('Function', 'function', 'Pod')),
  metadata: field(shaped({
    name: field(nameLike),
    generateName: field(nameLike),
    namespace: field(nameLike),
    labels: field(stringMap),
    annotations: field(stringMap),
    deletionTimestamp: fc.constantFrom('2024-01-01T00:00:00Z', null, ''),
  }, ['name'])),
  spec: field(specArb, 12),
  status: junk,
}, ['apiVersion', 'kind', 'metadata', 'spec']);

/** Every kind of value `validateFunction` is given: anything at all, JSON, Function-shaped objects. */
const anyFunctionInput = fc.oneof(
  { weight: 1, arbitrary: fc.anything({ withNullPrototype: true, withBoxedValues: true, withMap: true, withSet: true, withDate: true, withTypedArray: true, withSparseArray: true, key: anyKey }) },
  { weight: 1, arbitrary: fc.jsonValue() },
  { weight: 1, arbitrary: junk },
  { weight: 5, arbitrary: functionShaped },
);

/**
 * Functions `validateFunction` accepts (mostly): those of valid.yaml with defaulted fields left
 * out or blank, replicas anywhere in range, and inline sources up to the size limit.
 */
const acceptedFunction = fc.record({
  base: fc.constantFrom(...VALID_FUNCTIONS),
  replicas: fc.constantFrom('keep', 'drop', 'max', 'zero'),
  resourceConfiguration: fc.constantFrom('keep', 'drop', 'empty', 'dropFunction', 'dropBuild'),
  dependencies: fc.constantFrom('keep', 'drop', 'empty', 'space', 'blank'),
  // One time in eight, a source at the size limit.
  sourceBytes: fc.oneof(
    { weight: 7, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.integer({ min: INLINE_SOURCE_MAX_BYTES - 8, max: INLINE_SOURCE_MAX_BYTES }) },
  ),
}).map(({ base, replicas, resourceConfiguration, dependencies, sourceBytes }) => {
  const fn = structuredClone(base);
  const spec = fn.spec;
  if (replicas === 'drop') delete spec.replicas;
  if (replicas === 'max') spec.replicas = 2 ** 31 - 1;
  if (replicas === 'zero') spec.replicas = 0;
  if (resourceConfiguration === 'drop') delete spec.resourceConfiguration;
  if (resourceConfiguration === 'empty') spec.resourceConfiguration = {};
  if (resourceConfiguration === 'dropFunction') delete spec.resourceConfiguration?.function;
  if (resourceConfiguration === 'dropBuild') delete spec.resourceConfiguration?.build;
  const inline = spec.source.inline;
  if (inline) {
    if (dependencies === 'drop') delete inline.dependencies;
    if (dependencies === 'empty') inline.dependencies = '';
    if (dependencies === 'space') inline.dependencies = ' ';
    if (dependencies === 'blank') inline.dependencies = ' \n\t ';
    if (sourceBytes !== null) inline.source = 'x'.repeat(Math.max(1, sourceBytes - utf8Bytes(inline.dependencies)));
  }
  return fn;
});

function utf8Bytes(value: unknown): number {
  return typeof value === 'string' ? Buffer.byteLength(value, 'utf8') : 0;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}


function parsedBody(body: string | Buffer): unknown {
  try {
    return JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch {
    return undefined;
  }
}



/**
 * What a function.yaml holds: its top-level keys when it parses to a plain mapping (which every
 * schema error must name), none when it parses to something else (a list, a scalar, a tagged
 * Map), and nothing when it does not parse or its aliases do not resolve.
 */
function analyseYaml(text: string): YamlFacts {
  const document = parseDocument(text, { prettyErrors: true });
  if (document.errors.length) return {};
  let data: unknown;
  try {
    data = document.toJS();
  } catch {
    return {};
  }
  if (!isPlainObject(data) || ![Object.prototype, null].includes(Object.getPrototypeOf(data))) return { keys: [] };
  return { keys: Object.keys(data) };
}

/** What the tests need to know of a function.yaml. */
interface YamlFacts {
  /** Its top-level keys, when it parses without errors (none when it is no object). */
  readonly keys?: readonly string[];
}

// ---------------------------------------------------------------------------------------------
// 1. The rules: validateFunction and defaultFunction
// ---------------------------------------------------------------------------------------------

/** Freezes plain objects and arrays, all the way down. */
function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value) || ArrayBuffer.isView(value)) return;
  if (!Array.isArray(value) && ![Object.prototype, null].includes(Object.getPrototypeOf(value))) return;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
}

/** Checks what validateFunction returned: an array of violations, each with a path and a message. */
function checkViolations(result: unknown, input: unknown): void {
  check(Array.isArray(result), 'validateFunction returned no array', input);
  for (const violation of result) {
    check(isPlainObject(violation), 'a violation is no object', violation);
    check(typeof violation.path === 'string', 'a violation has no string path', violation);
    check(typeof violation.message === 'string' && violation.message.trim() !== '', 'a violation has no message', violation);
    check(violation.rule === undefined || (typeof violation.rule === 'string' && violation.rule !== ''), 'a violation has an empty rule', violation);
  }
}

describe('the Function rules', () => {
  test('validateFunction returns violations, each with a path and a message, and never throws', () => {
    fc.assert(fc.property(anyFunctionInput, input => {
      let result: unknown;
      try {
        result = validateFunction(input);
      } catch (e) {
        throw new Error(`validateFunction threw ${describeError(e)}`);
      }
      checkViolations(result, input);
    }));
  });

  test('defaultFunction never throws, never changes its input, and keeps accepted Functions accepted', () => {
    fc.assert(fc.property(anyFunctionInput, input => {
      // Frozen: a write to the input throws a TypeError in the (strict) module.
      deepFreeze(input);
      let defaulted: unknown;
      try {
        defaulted = defaultFunction(input);
      } catch (e) {
        throw new Error(`defaultFunction threw ${describeError(e)}`);
      }
      if (validateFunction(input).length === 0) {
        check(validateFunction(defaulted).length === 0, 'defaulting made an accepted Function invalid', input);
      }
    }), { numRuns: 120 });
  });

  test('a Function validateFunction accepts is still accepted once defaulted', () => {
    let accepted = 0;
    fc.assert(fc.property(acceptedFunction, fn => {
      if (validateFunction(fn).length > 0) return;
      accepted++;
      const violations = validateFunction(defaultFunction(fn));
      check(violations.length === 0, `defaulting made an accepted Function invalid (${violations.map(v => v.path).join(', ')})`, fn);
    }), { numRuns: 120 });
    // Not vacuous: most generated Functions are accepted.
    expect(accepted).toBeGreaterThan(90);
  });
});

// ---------------------------------------------------------------------------------------------
// 2. The function.yaml loader
// ---------------------------------------------------------------------------------------------

const HANDLER_JS = 'exports.main = () => "ok";\n';
const RESERVED_FILE_NAMES = [FUNCTION_FILE, 'handler.js', 'handler.py'];

/** A file name Linux takes, but none of the names the loader looks for. */
const fileName = fc.oneof(binaryString({ minLength: 1, maxLength: 40 }), fc.string({ minLength: 1, maxLength: 12 }))
  .filter(n => !n.includes('/') && !n.includes('\0') && n !== '.' && n !== '..' && Buffer.byteLength(n) <= 255 && !RESERVED_FILE_NAMES.includes(n));

/**
 * Settings shaped like function.yaml, with wrong types and values here and there. Their strings
 * stay under 4,000 characters and their junk 40 levels deep: YAML of long strings costs time, not
 * coverage, and block YAML grows with the square of the depth (the YAML tricks below nest deeper).
 */
const Y = vocabulary(4_000, 40);
const keyRefSetting = Y.shaped({ name: Y.field(Y.nameLike), key: Y.field(Y.keyLike), optional: Y.field(fc.boolean()) }, ['name', 'key']);
const amountsSetting = Y.shaped({ cpu: Y.quantity, memory: Y.quantity });
const resourcesSetting = (profiles: readonly string[]) => Y.shaped({
  profile: Y.field(fc.constantFrom(...profiles, 'XXL', '')),
  requests: Y.field(amountsSetting),
  limits: Y.field(amountsSetting),
});
const envSetting = fc.oneof(
  Y.weirdString, fc.integer(), fc.boolean(), fc.constant(null),
  Y.shaped({
    secretKeyRef: Y.field(keyRefSetting),
    configMapKeyRef: Y.field(keyRefSetting),
    fieldRef: Y.field(Y.shaped({ fieldPath: Y.field(fc.constantFrom('metadata.name', '')), apiVersion: Y.field(fc.constantFrom('v1')) })),
    resourceFieldRef: Y.field(Y.shaped({ resource: Y.field(fc.constantFrom('limits.cpu', 'x')), divisor: Y.quantity })),
  }),
);
const kedaTriggerSetting = Y.shaped({
  prometheus: Y.field(Y.shaped({ serverAddress: Y.field(Y.weirdString), query: Y.field(Y.weirdString), threshold: Y.field(fc.oneof(intLike, fc.double())) })),
  cron: Y.field(Y.shaped({
    timezone: Y.field(fc.constantFrom('UTC', 'Europe/Berlin', 'Mars/Olympus', '')), start: Y.field(fc.constantFrom('0 8 * * *', '@daily', '0 8', '')),
    end: Y.field(fc.constantFrom('0 18 * * *', 'x')), desiredReplicas: Y.field(intLike),
  })),
  cpu: Y.field(Y.shaped({ utilization: Y.field(intLike) }, ['utilization'])),
  type: Y.field(fc.constantFrom('rabbitmq', 'kafka', '')),
  metadata: Y.field(Y.stringMap),
});
const settingsArb = Y.shaped({
  runtime: Y.field(fc.constantFrom(...RUNTIMES, 'nodejs18', 'python', '', 'NODEJS22')),
  namespace: Y.field(Y.nameLike),
  env: Y.field(fc.tuple(fc.array(fc.tuple(fc.oneof(fc.constantFrom('GREETING', 'FUNC_PORT', '1A'), anyKey), Y.field(envSetting)), { maxLength: 3 }), nullPrototype).map(([e, np]) => own(e, np))),
  secretMounts: Y.field(fc.array(Y.field(Y.shaped({ secretName: Y.field(Y.nameLike), mountPath: Y.field(Y.mountPath) }, ['secretName', 'mountPath'])), { maxLength: 3 })),
  replicas: Y.field(intLike),
  scale: Y.field(Y.shaped({ minReplicas: Y.field(intLike), maxReplicas: Y.field(intLike) }, ['minReplicas', 'maxReplicas'])),
  keda: Y.field(Y.shaped({
    minReplicas: Y.field(intLike), maxReplicas: Y.field(intLike), cooldownPeriod: Y.field(intLike), pollingInterval: Y.field(intLike),
    triggers: Y.field(fc.array(Y.field(kedaTriggerSetting), { maxLength: 2 })),
  }, ['maxReplicas', 'triggers'])),
  resources: Y.field(resourcesSetting(FUNCTION_PROFILES)),
  buildResources: Y.field(resourcesSetting(BUILD_PROFILES)),
  labels: Y.field(Y.stringMap),
  annotations: Y.field(Y.stringMap),
  runtimeImageOverride: Y.field(Y.imageLike),
});

/** Settings every key of which is right, so that loading succeeds too. */
const validSettings = fc.record({
  runtime: fc.constantFrom(...RUNTIMES),
  namespace: fc.constantFrom('default', 'team-a'),
  replicas: fc.nat(5),
  scale: fc.constant({ minReplicas: 1, maxReplicas: 3 }),
  keda: fc.constantFrom(
    { maxReplicas: 3, triggers: [{ cron: { timezone: 'UTC', start: '0 8 * * *', end: '0 18 * * *', desiredReplicas: 1 } }] },
    { minReplicas: 1, maxReplicas: 2, cooldownPeriod: 60, triggers: [{ cpu: { utilization: 60 } }, { type: 'kafka', metadata: { topic: 'orders' } }] },
  ),
  resources: fc.constantFrom({ profile: 'M' }, { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: 1, memory: '1Gi' } }),
  buildResources: fc.constantFrom({ profile: 'fast' }, { limits: { memory: 1073741824 } }),
  env: fc.constantFrom({ A: 'x', B: 1, C: true }, { S: { secretKeyRef: { name: 's', key: 'k', optional: true } } }, { P: { fieldRef: { fieldPath: 'metadata.name' } } }),
  secretMounts: fc.constant([{ secretName: 's', mountPath: '/etc/s' }]),
  labels: fc.constant({ app: 'x' }),
  annotations: fc.constant({ 'example.com/a': 'b' }),
  runtimeImageOverride: fc.constant('registry.example.com/node:22'),
}, { requiredKeys: [] });

/** YAML the `yaml` package writes for a value, or its JSON (also YAML) when the package cannot write it. */
function yamlOf(value: unknown): string {
  try {
    return toYaml(value);
  } catch {
    return JSON.stringify(value) ?? '';
  }
}

const SETTING_KEYS = ['runtime', 'namespace', 'env', 'secretMounts', 'replicas', 'scale', 'keda', 'resources', 'buildResources', 'labels', 'annotations', 'runtimeImageOverride'];

/** YAML constructs beyond plain JSON: anchors, aliases, tags, directives, several documents. */
const yamlTrick = fc.constantFrom(
  '&a [x]', '*a', '&a {x: 1}', '!!str 1', '!!int "1"', '!!float x', '!!binary aGVsbG8=', '!!omap [{a: 1}]', '!!set {a, b}',
  '!!timestamp 2001-12-14', '!foo bar', '!!map []', '? [a, b]\n: 1', '---', '...', '%YAML 1.1\n---', '|\n  text', '>-\n  folded',
  '"\\u0000"', '"\\ud800"', '.nan', '.inf', '-.inf', '0x1F', '0o17', '1_000', '~', 'null', 'yes', 'on', '2001-12-14',
  '[' + '['.repeat(50), '{a: ' + '{'.repeat(40), '\t', '- - - x', 'a: b: c', '"unterminated', "'", '{', '}',
);
const yamlText = fc.oneof(
  { weight: 2, arbitrary: fc.string() },
  { weight: 1, arbitrary: binaryString() },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 5 }).map(yamlOf) },
  { weight: 1, arbitrary: fc.json() },
  { weight: 6, arbitrary: settingsArb.map(yamlOf) },
  { weight: 2, arbitrary: validSettings.map(yamlOf) },
  {
    weight: 2,
    // Settings with YAML tricks spliced in at a key, or between lines.
    arbitrary: fc.tuple(settingsArb.map(yamlOf), fc.array(fc.tuple(fc.constantFrom(...SETTING_KEYS, 'x'), yamlTrick), { minLength: 1, maxLength: 3 }), fc.boolean())
      .map(([settings, tricks, before]) => {
        const spliced = tricks.map(([key, trick]) => (trick.includes('\n') || trick.startsWith('%') || trick === '---' ? trick : `${key}: ${trick}`)).join('\n');
        return before ? `${spliced}\n${settings}` : `${settings}\n${spliced}`;
      }),
  },
  { weight: 1, arbitrary: fc.array(yamlTrick, { minLength: 1, maxLength: 4 }).map(t => t.join('\n')) },
);

/** Every file under a folder, with its bytes (folders as `<dir>`). */
function snapshot(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (d: string) => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, entry.name);
      if (entry.isDirectory()) {
        files.set(path.relative(dir, p), '<dir>');
        walk(p);
      } else {
        files.set(path.relative(dir, p), fs.readFileSync(p).toString('base64'));
      }
    }
  };
  walk(dir);
  return files;
}

function sameSnapshot(a: Map<string, string>, b: Map<string, string>): boolean {
  return a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Splits a message of problems joined by `\n  ` at each line that starts with one of the prefixes (keys may hold `\n  ` too). */
function problemLines(message: string, prefixes: readonly string[]): string[] {
  return message.split(new RegExp(`\\n  (?=${prefixes.map(escapeRegExp).join('|')})`));
}

/** Whether a problem starts by naming one of the top-level keys, or says the file is no mapping. */
function namesKey(problem: string, keys: readonly string[]): boolean {
  if (keys.length === 0) return problem.startsWith('must be a mapping of settings');
  return keys.some(k => problem.startsWith(`'${k}`));
}

/**
 * Checks an error of `FunctionFolder.load`: a plain Error, every line `<file or folder>: <problem>`,
 * and, when the YAML parsed, each problem of the file names the key (`'resources.limits.cpu' ...`).
 */
function checkLoadError(e: unknown, directory: string, text: string | undefined, keys: readonly string[] | undefined): void {
  check(!isCrash(e), `load crashed with ${describeError(e)}`, text);
  const file = `${displayPath(path.join(directory, FUNCTION_FILE))}: `;
  const folder = `${displayPath(directory)}: `;
  // A misspelt function.yaml (function.yml, Function.yaml...) is named by its own path.
  const misnamed = fs.readdirSync(directory).filter(n => n !== FUNCTION_FILE).map(n => `${displayPath(path.join(directory, n))}: `);
  for (const line of problemLines((e as Error).message, [file, folder, ...misnamed])) {
    const prefix = [file, folder, ...misnamed].find(p => line.startsWith(p));
    check(prefix !== undefined, `an error line names neither ${FUNCTION_FILE} nor the folder: ${JSON.stringify(line.slice(0, 200))}`, text);
    const problem = line.slice(prefix.length);
    check(problem.trim() !== '', 'an error line names no problem', text);
    if (keys && prefix === file) check(namesKey(problem, keys), `a schema error names no key of the file: ${JSON.stringify(problem.slice(0, 200))}`, text);
  }
}

describe('the function.yaml loader', () => {
  let root: string;
  let count = 0;
  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'kyma-fuzz-folders.'));
    // The yaml package warns on stderr about keys it stringifies; the properties judge the outcome, not the noise.
    jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
  });
  afterAll(() => {
    jest.restoreAllMocks();
    fs.rmSync(root, { recursive: true, force: true });
  });

  /** A new folder under the root, with these files. */
  function folder(files: ReadonlyArray<readonly [string, string | Uint8Array]>, name = `fn-${count++}`): string {
    const directory = path.join(root, name);
    fs.mkdirSync(directory);
    for (const [file, content] of files) fs.writeFileSync(path.join(directory, file), content);
    return directory;
  }

  test('load either succeeds or throws an Error that names function.yaml and the key, and writes nothing', () => {
    const outcomes = { loaded: 0, refused: 0 };
    fc.assert(fc.property(yamlText, text => {
      const { keys } = analyseYaml(text);
      const directory = folder([['handler.js', HANDLER_JS], [FUNCTION_FILE, text]]);
      const before = snapshot(root);
      try {
        const loaded = FunctionFolder.load(directory);
        check(loaded.name === path.basename(directory), 'the Function is not named after its folder', text);
        outcomes.loaded++;
      } catch (e) {
        checkLoadError(e, directory, text, keys);
        outcomes.refused++;
      }
      check(sameSnapshot(before, snapshot(root)), 'load changed the files', text);
      fs.rmSync(directory, { recursive: true });
    }), { numRuns: 120 });
    // Not vacuous: both outcomes occur. About 16% of the texts load (318 of 2,000 in one long run), 19 of
    // 120 on average: more than 3 fails about once in 50,000 runs, where more than 10 failed once in 70.
    expect(outcomes.loaded).toBeGreaterThan(3);
    expect(outcomes.refused).toBeGreaterThan(50);
  });

  test('load takes random bytes as function.yaml', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), bytes => {
      const text = Buffer.from(bytes).toString('utf8');
      const { keys } = analyseYaml(text);
      const directory = folder([['handler.js', HANDLER_JS], [FUNCTION_FILE, bytes]]);
      const before = snapshot(root);
      try {
        FunctionFolder.load(directory);
      } catch (e) {
        checkLoadError(e, directory, text, keys);
      }
      check(sameSnapshot(before, snapshot(root)), 'load changed the files', bytes);
      fs.rmSync(directory, { recursive: true });
    }), { numRuns: 120 });
  });

  test('load copes with random file names, a missing handler and a binary handler', () => {
    const folderName = fileName.filter(n => !n.startsWith('.'));
    const arb = fc.record({
      name: folderName,
      others: fc.uniqueArray(fc.tuple(fileName, fc.uint8Array({ maxLength: 64 })), { maxLength: 4, selector: ([n]) => n }),
      handler: fc.constantFrom('none', 'handler.js', 'handler.py'),
      handlerBytes: fc.uint8Array({ maxLength: 128 }),
      settings: fc.option(fc.oneof(fc.constantFrom('runtime: nodejs22', 'runtime: python312', 'replicas: 2', '', 'runtime: 1'), yamlText), { freq: 3 }),
    });
    fc.assert(fc.property(arb, ({ name, others, handler, handlerBytes, settings }) => {
      const { keys } = settings === null ? {} : analyseYaml(settings);
      const files: Array<readonly [string, string | Uint8Array]> = [...others];
      if (handler !== 'none') files.push([handler, handlerBytes]);
      if (settings !== null) files.push([FUNCTION_FILE, settings]);
      const directory = folder(files, `${count++}-${name}`.slice(0, 200));
      const before = snapshot(root);
      try {
        const loaded = FunctionFolder.load(directory);
        // Loaded: it has a handler, or function.yaml names the runtime.
        check(handler !== 'none' || typeof loaded.settings.runtime === 'string', 'a folder without a handler loaded without a runtime', { name, settings });
        if (handler !== 'none' && !loaded.settings.runtime) {
          check(loaded.runtime.family === (handler === 'handler.js' ? 'nodejs' : 'python'), 'the runtime does not match the handler', { handler });
        }
      } catch (e) {
        checkLoadError(e, directory, settings ?? undefined, keys);
      }
      check(sameSnapshot(before, snapshot(root)), 'load changed the files', { name, settings });
      fs.rmSync(directory, { recursive: true });
    }), { numRuns: 120 });
  });

  test('discover loads every folder or throws one Error listing each bad one by its path, and writes nothing', () => {
    // Small files: this property is about the folders, the ones above about the files.
    const settings = fc.oneof(
      fc.constantFrom('runtime: nodejs22', 'runtime: python312', 'replicas: x', 'runtime: [', 'labels: {a: 1}', 'resources: {profile: XL}', ''),
      fc.string(),
      fc.jsonValue({ maxDepth: 3 }).map(yamlOf),
    );
    const arb = fc.uniqueArray(fc.record({
      name: fileName,
      handler: fc.boolean(),
      settings: fc.option(settings, { freq: 4 }),
    }), { maxLength: 4, selector: f => f.name });
    fc.assert(fc.property(arb, folders => {
      const discoverRoot = fs.mkdtempSync(path.join(root, 'discover.'));
      for (const f of folders) {
        const directory = path.join(discoverRoot, f.name);
        fs.mkdirSync(directory);
        if (f.handler) fs.writeFileSync(path.join(directory, 'handler.js'), HANDLER_JS);
        if (f.settings !== null) fs.writeFileSync(path.join(directory, FUNCTION_FILE), f.settings);
      }
      const before = snapshot(root);
      const visible = folders.filter(f => !f.name.startsWith('.')).map(f => f.name).sort();
      try {
        const loaded = FunctionFolder.discover(discoverRoot);
        check(isDeepStrictEqual(loaded.map(l => l.name), visible), 'discover did not load every folder, sorted', folders);
      } catch (e) {
        check(!isCrash(e), `discover crashed with ${describeError(e)}`, folders);
        const message = (e as Error).message;
        if (!visible.length) {
          check(message.includes(`${discoverRoot} holds no function folders`), 'a root without function folders is not named', message);
          fs.rmSync(discoverRoot, { recursive: true });
          return;
        }
        const header = 'Invalid function folders:\n  ';
        check(message.startsWith(header), 'the error does not start with its summary', message);
        for (const line of problemLines(message.slice(header.length), [displayPath(discoverRoot) + path.sep])) {
          const names = visible.some(n => [': ', `${path.sep}${FUNCTION_FILE}: `].some(end => line.startsWith(`${displayPath(path.join(discoverRoot, n))}${end}`)));
          check(names, `an error line names no folder: ${JSON.stringify(line.slice(0, 200))}`, folders);
        }
      }
      check(sameSnapshot(before, snapshot(root)), 'discover changed the files', folders);
      fs.rmSync(discoverRoot, { recursive: true });
    }), { numRuns: 100 });
  });
});

// ---------------------------------------------------------------------------------------------
// 3. The webhook's decoder and reviews
// ---------------------------------------------------------------------------------------------

/** AdmissionReview-shaped objects with random fields. */
const reviewShaped = shaped({
  apiVersion: field(fc.constantFrom('admission.k8s.io/v1', 'admission.k8s.io/v1beta1', ''), 30),
  kind: field(fc.constantFrom('AdmissionReview', 'Function'), 30),
  request: field(shaped({
    uid: field(fc.oneof(fc.uuid(), fc.constant(''), weirdString), 30),
    kind: field(shaped({
      group: field(fc.constantFrom(FUNCTION_GROUP, '', 'apps'), 30),
      version: field(fc.constantFrom(FUNCTION_VERSION, 'v1alpha1', 'v1'), 30),
      kind: field(fc.constantFrom('Function', 'Deployment'), 30),
    }, ['group', 'version', 'kind']), 30),
    operation: field(fc.constantFrom('CREATE', 'UPDATE', 'DELETE', 'CONNECT', 'PATCH', 'create'), 30),
    name: field(nameLike),
    namespace: field(nameLike),
    object: field(functionShaped, 30),
    oldObject: field(functionShaped),
    dryRun: field(fc.boolean()),
  }, ['uid', 'kind', 'operation', 'object']), 30),
}, ['apiVersion', 'kind', 'request']);

/** A well-formed review, as the API server sends it, about a Function-shaped object. */
const wellFormedReview = fc.record({
  object: functionShaped,
  oldObject: fc.option(functionShaped),
  operation: fc.constantFrom('CREATE', 'UPDATE', 'DELETE', 'CONNECT'),
  uid: fc.oneof(fc.uuid(), weirdString.filter(s => s !== '')),
  sameSpec: fc.boolean(),
}).map(({ object, oldObject, operation, uid, sameSpec }) => {
  const old = sameSpec && operation === 'UPDATE' ? own([...Object.entries(object)]) : oldObject;
  return admissionReviewOf(object, { operation, uid, oldObject: old ?? undefined, name: 'x', namespace: 'default' });
});

/** Bodies: random bytes, random text and JSON, review-shaped JSON, well-formed reviews. */
const bodyArb: fc.Arbitrary<string | Buffer> = fc.oneof(
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 200 }).map(b => Buffer.from(b)) },
  { weight: 1, arbitrary: binaryString() },
  { weight: 2, arbitrary: fc.jsonValue().map(v => JSON.stringify(v)) },
  { weight: 1, arbitrary: junk.map(v => JSON.stringify(v) ?? 'undefined') },
  { weight: 4, arbitrary: reviewShaped.map(v => JSON.stringify(v)) },
  { weight: 4, arbitrary: wellFormedReview.map(v => JSON.stringify(v)) },
).map(body => (typeof body === 'string' && body.length % 2 === 0 ? Buffer.from(body, 'utf8') : body));

/** Decodes a body; `undefined` when refused as the contract says (AdmissionRequestError, HTTP 400). */
function decode(body: string | Buffer): AdmissionRequest | undefined {
  try {
    const request = decodeAdmissionReview(body);
    check(isPlainObject(request) && typeof request.uid === 'string' && request.uid !== '', 'the decoder returned a request without uid', request);
    check(['CREATE', 'UPDATE', 'DELETE', 'CONNECT'].includes(request.operation), 'the decoder returned an unknown operation', request);
    return request;
  } catch (e) {
    check(e instanceof AdmissionRequestError, `the decoder threw ${describeError(e)}`, body);
    check(e.statusCode === 400, `the decoder refused with HTTP ${e.statusCode}`, body);
    check(e.message.trim() !== '', 'the decoder refused without a message', body);
    return undefined;
  }
}

/** Checks both reviews of a request the decoder accepted. */
function checkReviews(request: AdmissionRequest): void {
  let validation: ReturnType<typeof reviewValidation>;
  try {
    validation = reviewValidation(request);
  } catch (e) {
    throw new Error(`reviewValidation threw ${describeError(e)}`);
  }
  check(validation.response.uid === request.uid, 'the validation response does not echo the uid', request);
  if (!validation.response.allowed) {
    check(validation.response.status?.code === 422 && validation.response.status.message.trim() !== '', 'a denial has no 422 status with a message', validation.response);
  }
  let defaulting: ReturnType<typeof reviewDefaulting>;
  try {
    defaulting = reviewDefaulting(request, DEFAULT_FUNCTION_DEFAULTS);
  } catch (e) {
    throw new Error(`reviewDefaulting threw ${describeError(e)}`);
  }
  const response = defaulting.response;
  check(response.uid === request.uid && response.allowed === true, 'the defaulting response does not allow, with the uid', response);
  if (response.patch !== undefined) {
    check(response.patchType === 'JSONPatch', 'a patch without patchType JSONPatch', response);
    const ops: unknown = JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8'));
    check(Array.isArray(ops) && ops.length > 0, 'the patch is no JSON array', ops);
    check(ops.every(op => isPlainObject(op) && typeof op.op === 'string' && typeof op.path === 'string'), 'a patch operation has no op or path', ops);
    // Applied to the object the API server holds, the patch gives the defaulted Function.
    const patched = applyPatch(JSON.parse(JSON.stringify(request.object)), ops as Operation[], true, false).newDocument;
    check(isDeepStrictEqual(patched, JSON.parse(JSON.stringify(defaultFunction(request.object)))), 'the patch does not give the defaulted Function', request.object);
  }
}

describe('the webhook decoder and reviews', () => {
  test('decodeAdmissionReview returns a request or throws AdmissionRequestError (400, with a message); the reviews of every request never throw', () => {
    let decoded = 0;
    fc.assert(fc.property(bodyArb, body => {
      const request = decode(body);
      if (!request) return;
      decoded++;
      checkReviews(request);
    }), { numRuns: 150 });
    expect(decoded).toBeGreaterThan(25);
  });

  test('decodeAdmissionReview takes any bytes', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 500 }), bytes => {
      const body = Buffer.from(bytes);
      const request = decode(body);
      if (request) checkReviews(request);
    }));
  });
});

// ---------------------------------------------------------------------------------------------
// 4. The server, end to end over HTTPS
// ---------------------------------------------------------------------------------------------

const CA = createCertificateAuthority('serverless-webhook-fuzz-ca');
const SERVING = createServingCertificate(CA, ['localhost']);

/** Every line the server logs, parsed. */
const logs: any[] = [];
const logStream = new Writable({
  write(chunk: Buffer, _encoding, callback) {
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) logs.push(JSON.parse(line));
    callback();
  },
});

interface Answer {
  readonly status: number;
  readonly body: string;
}

/** POSTs a body on a new connection, or only headers declaring `declaredLength` (and no body) when given. */
function post(port: number, urlPath: string, body: string | Buffer, declaredLength?: number): Promise<Answer> {
  const length = declaredLength ?? Buffer.byteLength(body);
  const req = https.request({
    host: '127.0.0.1', port, path: urlPath, method: 'POST', agent: false, servername: 'localhost', ca: CA.cert,
    headers: { 'Content-Type': 'application/json', 'Content-Length': length },
  });
  const answer = new Promise<Answer>((resolve, reject) => {
    req.on('error', reject);
    req.on('response', res => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
  });
  if (declaredLength === undefined) {
    req.end(body);
  } else {
    req.flushHeaders();
    void answer.finally(() => req.destroy()).catch(() => undefined);
  }
  return answer;
}

function get(port: number, urlPath: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = https.get({ host: '127.0.0.1', port, path: urlPath, agent: false, servername: 'localhost', ca: CA.cert }, (res: http.IncomingMessage) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
  });
}

describe('the webhook server', () => {
  let server: WebhookServer;
  beforeAll(async () => {
    server = new WebhookServer({
      config: resolveWebhookConfig({ shutdownDelaySeconds: 0, requestTimeoutSeconds: 2 }),
      certificate: SERVING,
      port: 0,
      host: '127.0.0.1',
      logger: createLogger(LogLevel.DEBUG, logStream),
      metrics: new WebhookMetrics(false),
    });
    await server.start();
  });
  afterAll(() => server.stop(1000));

  test('answers every body on both admission paths with 200, 400 or 413, and stays healthy', async () => {
    const requestArb = fc.record({
      path: fc.constantFrom(WEBHOOK_PATHS.defaulting, WEBHOOK_PATHS.validation),
      body: fc.oneof(
        { weight: 20, arbitrary: bodyArb.map(body => ({ body, declared: undefined as number | undefined })) },
        { weight: 1, arbitrary: fc.integer({ min: MAX_REQUEST_BYTES + 1, max: 2 * MAX_REQUEST_BYTES }).map(declared => ({ body: '' as string | Buffer, declared })) },
      ),
    });
    const statuses = new Set<number>();
    await fc.assert(fc.asyncProperty(requestArb, async ({ path: urlPath, body: { body, declared } }) => {
      const review = parsedBody(body);
      let answer: Answer;
      try {
        answer = await post(server.port, urlPath, body, declared);
      } catch (e) {
        throw new Error(`the request failed (${describeError(e)}) on ${urlPath}`);
      }
      check([200, 400, 413].includes(answer.status), `HTTP ${answer.status} on ${urlPath}: ${answer.body.slice(0, 300)}`, declared ?? body.toString());
      statuses.add(answer.status);
      if (declared !== undefined) check(answer.status === 413, `HTTP ${answer.status} for a declared ${declared} bytes`);
      if (answer.status === 200) {
        const reply = JSON.parse(answer.body);
        const uid = (review as any).request.uid;
        check(reply.kind === 'AdmissionReview' && reply.response.uid === uid, 'the review does not echo the uid', reply);
      } else {
        const status = JSON.parse(answer.body);
        check(status.kind === 'Status' && status.code === answer.status && String(status.message).trim() !== '', 'the refusal is no Status with a message', status);
      }
    }), { numRuns: 100 });
    // Not vacuous: reviews were answered, and bodies refused.
    expect(statuses).toContain(200);
    expect(statuses).toContain(400);
    expect(await get(server.port, OBSERVABILITY_PATHS.health)).toBe(200);
    const failures = logs.filter(l => l.level === 'error' || l.msg === 'request failed' || l.msg === 'review failed');
    expect(failures).toEqual([]);
    // 100 requests, each on a new TLS connection: up to 600 ms each on a busy 2-core machine.
  }, 100 * 600);
});

// ---------------------------------------------------------------------------------------------
// Pins of the bugs found: each test passes only while its bug exists
// ---------------------------------------------------------------------------------------------

describe('bugs these properties found, fixed: regression tests', () => {
  const REVIEW = (request: unknown) => JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request });
  const FUNCTION_KIND_OF = (version: unknown) => ({ group: FUNCTION_GROUP, version, kind: 'Function' });

  // src/webhook/admission.ts:110 (also :90 and :121): String() of a JSON object without a usable toString.
  test('decodeAdmissionReview refuses {"apiVersion":{"toString":0}} with AdmissionRequestError', () => {
    expect(() => decodeAdmissionReview('{"apiVersion":{"toString":0}}')).toThrow(AdmissionRequestError);
  });

  test('decodeAdmissionReview refuses a request.kind.version of {"toString":0} with AdmissionRequestError', () => {
    expect(() => decodeAdmissionReview(REVIEW({ uid: 'u', kind: FUNCTION_KIND_OF({ toString: 0 }), operation: 'DELETE' }))).toThrow(AdmissionRequestError);
  });

  // src/api/validator.ts:141 (describeAjvError): JSON.stringify(error.data) overflows the stack on deep nesting.
  const deepFunction = () => {
    const fn = structuredClone(VALID_FUNCTIONS[0]);
    fn.spec.env = nested(100_000, true);
    return fn;
  };
  test('validateFunction reports a spec.env nested 100000 arrays deep', () => {
    let violations: unknown[] = [];
    expect(() => { violations = validateFunction(deepFunction()); }).not.toThrow();
    expect(violations.length).toBeGreaterThan(0);
  });

  // src/api/function-defaults.ts:86: "{}" for blank dependencies adds 2 bytes past the inline size limit.
  test('a Node.js Function without dependencies is judged at the size the controller stores: its source plus `{}`', () => {
    const withSource = (bytes: number) => ({
      apiVersion: FUNCTION_API_VERSION, kind: 'Function', metadata: { name: 'a' },
      // A handler that exports main, padded in a comment.
      spec: { runtime: 'nodejs22', source: { inline: { source: `exports.main=1; //${'x'.repeat(bytes - 18)}` } } },
    });
    // At the limit with `{}`: accepted, and still accepted once defaulting writes it.
    const fits = withSource(INLINE_SOURCE_MAX_BYTES - 2);
    expect(validateFunction(fits)).toEqual([]);
    expect(validateFunction(defaultFunction(fits))).toEqual([]);
    // One byte more: refused before defaulting as after.
    const over = withSource(INLINE_SOURCE_MAX_BYTES - 1);
    expect(validateFunction(over).map(v => v.rule)).toEqual(['inlineSourceSize']);
    expect(validateFunction(defaultFunction(over)).map(v => v.rule)).toEqual(['inlineSourceSize']);
  });

  describe('FunctionFolder.load', () => {
    let root: string;
    beforeAll(() => {
      root = fs.mkdtempSync(path.join(os.tmpdir(), 'kyma-fuzz-pins.'));
    });
    afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
    let count = 0;
    const load = (yaml: string) => {
      const directory = path.join(root, `fn-${count++}`);
      fs.mkdirSync(directory);
      fs.writeFileSync(path.join(directory, 'handler.js'), HANDLER_JS);
      fs.writeFileSync(path.join(directory, FUNCTION_FILE), yaml);
      return { directory, file: displayPath(path.join(directory, FUNCTION_FILE)), run: () => FunctionFolder.load(directory) };
    };
    const errorOf = (run: () => unknown): Error => {
      try {
        run();
      } catch (e) {
        return e as Error;
      }
      throw new Error('load succeeded');
    };

    // src/function/function-folder.ts:245: document.toJS(), outside any try, throws on an alias without its anchor.
    test('reports "runtime: *node" (an alias without anchor) with the file', () => {
      const { file, run } = load('runtime: *node\n');
      const error = errorOf(run);
      expect(error.constructor).toBe(Error);
      expect(error.message).toContain(file);
    });

    // src/function/function-folder.ts:146 (describeSettingsError): JSON.stringify(error.data) of a circular value.
    test('reports "labels: &a {x: *a}" with the file and key', () => {
      const { file, run } = load('labels: &a {x: *a}\n');
      const error = errorOf(run);
      expect(error.constructor).toBe(Error);
      expect(error.message).toContain(`${file}: 'labels`);
    });

    // src/function/function-folder.ts:245: document.toJS() throws past 100 alias expansions, outside any try.
    test('reports a function.yaml of 101 aliases with the file', () => {
      const { file, run } = load(`a: &a x\nb: [${Array(101).fill('*a').join(', ')}]\n`);
      const error = errorOf(run);
      expect(error.constructor).toBe(Error);
      expect(error.message).toContain(file);
    });

    // src/function/function-folder.ts:156 (toSize) and :186: Size.mebibytes(-1) throws cdk8s' own message, passed on as it is.
    test('reports "resources: {requests: {memory: -1Mi}}" with its key', () => {
      const { file, run } = load('resources: {requests: {memory: "-1Mi"}}\n');
      expect(errorOf(run).message).toContain(`${file}: 'resources.requests.memory'`);
    });

    // src/function/function-folder.ts:246: a root !!omap is a Map, which the schema (type object,
    // additionalProperties) lets through with no key checked: every setting is silently ignored.
    test('refuses or honours a function.yaml written as a !!omap', () => {
      const { run } = load('--- !!omap\n- runtime: nope\n- replicas: many\n');
      expect(run).toThrow(FUNCTION_FILE);
    });

    // src/function/function-folder.ts:127 (keyOf): every all-digit segment of an ajv path is taken for an array index.
    test('names the key of "labels: {\'8080\': 5}" as labels.8080, not as an index', () => {
      const { file, run } = load("labels: {'8080': 5}\n");
      const message = errorOf(run).message;
      expect(message).toContain(`${file}: 'labels`);
      expect(message).not.toContain("'labels[8080]'");
    });

    // src/function/function-folder.ts:243: readFileSync's EISDIR error names no file.
    test('reports a function.yaml that is a folder with its path', () => {
      const directory = path.join(root, `fn-${count++}`);
      fs.mkdirSync(path.join(directory, FUNCTION_FILE), { recursive: true });
      fs.writeFileSync(path.join(directory, 'handler.js'), HANDLER_JS);
      expect(() => FunctionFolder.load(directory)).toThrow(displayPath(path.join(directory, FUNCTION_FILE)));
    });
  });

  describe('the webhook server', () => {
    let server: WebhookServer;
    beforeAll(async () => {
      server = new WebhookServer({
        config: resolveWebhookConfig({ shutdownDelaySeconds: 0, requestTimeoutSeconds: 2 }),
        certificate: SERVING,
        port: 0,
        host: '127.0.0.1',
        logger: createLogger(LogLevel.DEBUG, new Writable({ write: (_chunk, _encoding, callback) => callback() })),
        metrics: new WebhookMetrics(false),
      });
      await server.start();
    });
    afterAll(() => server.stop(1000));

    test('answers 400 to a body of {"apiVersion":{"toString":0}}', async () => {
      expect((await post(server.port, WEBHOOK_PATHS.validation, '{"apiVersion":{"toString":0}}')).status).toBe(400);
    });

    test('answers a review of a Function whose spec.env is nested 20000 arrays deep with 200 or 400', async () => {
      const body = JSON.stringify(admissionReviewOf({ ...VALID_FUNCTIONS[0], spec: { ...VALID_FUNCTIONS[0].spec, env: '@' } }, { uid: 'deep' }))
        .replace('"@"', `${'['.repeat(20_000)}${']'.repeat(20_000)}`);
      expect([200, 400]).toContain((await post(server.port, WEBHOOK_PATHS.validation, body)).status);
    });
  });
});
