/**
 * Offline checks of synthesized manifests: every object against its schema (Kubernetes 1.27,
 * cert-manager, Argo CD, Flux, Istio, Gateway API, KEDA, Prometheus Operator), every Function
 * against all rules of the Function API, every APIRule and Subscription against ours (their CRDs'
 * schemas, CEL rules, and their controllers' checks).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
// The modules of src/api, not its index: the index brings cdk8s along (the presets' units), which `validate` never needs.
import { APIRULE_API_VERSION, APIRULE_KIND } from '../api/apirule-schema';
import { CrdReleaseEvidence, RELEASE_ANNOTATION, functionCrdRelease, isFunctionCrd } from '../api/crd-release';
import { FUNCTION_API_VERSION, FUNCTION_KIND } from '../api/function-schema';
import { DEFAULT_RELEASE, ServerlessRelease } from '../api/release';
import { RuntimeNotice, runtimeNotice, runtimeSupportNow } from '../api/runtime-support';
import { RuntimeFamily, runtimeFamily } from '../api/runtimes';
import { SUBSCRIPTION_API_VERSION, SUBSCRIPTION_KIND } from '../api/subscription-schema';
import type { Violation } from '../api/validator';
import { _work } from '../api/_work';
// Types only: the rules of Functions, APIRules and Subscriptions, and the handler checks, load with the
// first object of their kind (see the functions below), so that checking the stack alone loads none of them.
import type * as ApiRuleRules from '../api/apirule-rules';
import type * as FunctionRules from '../api/function-rules';
import type * as HandlerCode from '../api/handler-code';
import type * as SubscriptionRules from '../api/subscription-rules';
import type * as ManifestFiles from './_manifest-files';
import { requireBundle } from '../_code-cache';
import { packageRoot } from '../_package-root';
import { PolicyViolation, checkPolicies } from './policy';

/* eslint-disable @typescript-eslint/no-require-imports */
// Each kept once loaded: they are asked for with every Function, and a `require` of a module
// loaded already still resolves its name (tens of thousands of times in a `validate` of 10,000).
let functionRulesModule: typeof FunctionRules | undefined;
let handlerCodeModule: typeof HandlerCode | undefined;
/** The rules of Functions (src/api/function-rules), loaded with the first Function checked. */
const functionRules = () => functionRulesModule ??= require('../api/function-rules') as typeof FunctionRules;
/** The checks of handler code (src/api/handler-code), loaded with the first Function whose handler is checked. */
const handlerCode = () => handlerCodeModule ??= require('../api/handler-code') as typeof HandlerCode;
/** What reads manifest files (`validate`), loaded with the first folder read. */
const manifestFileReader = () => require('./_manifest-files') as typeof ManifestFiles;
/* eslint-enable @typescript-eslint/no-require-imports */

/**
 * Whether the handler checks or the parser they start have been loaded: when neither has, no
 * parser runs and nothing is queued for one, so that asking it for nothing, or ending it, does nothing.
 */
function handlerChecksLoaded(): boolean {
  const loaded = (module: string) => require.cache[require.resolve(module)] !== undefined;
  return loaded('../api/handler-code') || loaded('../api/_python-parser');
}

/**
 * What `_releaseHandlerParser` of src/api/handler-code does (synth calls it once every handler is
 * checked: the parser's worker is not needed for the rest), without loading the handler checks when
 * neither they nor their parser were loaded.
 */
export function releaseLoadedHandlerParser(): void {
  if (handlerChecksLoaded()) handlerCode()._releaseHandlerParser();
}

/** How bad a finding is. */
export enum Severity {
  /** The object would be rejected or would fail: `validate` exits 1. */
  ERROR = 'error',
  /** Worth a look, but not a failure (an object no schema is known for). */
  WARNING = 'warning',
}

/** One problem of one object in one file. */
export interface Finding {
  /** The file, relative to the folder checked. */
  readonly file: string;
  /** The object, as `Kind namespace/name` (or `document N` when it has none). */
  readonly object: string;
  /** The field, such as `spec.env[0].name`; empty for the object as a whole. */
  readonly path: string;
  /** The rule: `openapi.<keyword>`, a Function rule id, or a check of this command. */
  readonly rule: string;
  /** What is wrong, and how to fix it when the message alone does not say. */
  readonly message: string;
  readonly severity: Severity;
}

/** A policy rule an object is excepted from, with the reason recorded on it. */
export interface PolicyExceptionUse {
  readonly file: string;
  readonly object: string;
  readonly path: string;
  readonly rule: string;
  /** The reason, from the object's annotation. */
  readonly reason: string;
}

/** Where the release that a folder's Functions were checked against came from. */
export enum ReleaseSource {
  /** The Function CRD in the folder, or in a folder above it: its `cdk8s-kyma-serverless/release` annotation, else its shape. */
  FUNCTION_CRD = 'function-crd',
  /** The caller: `--release`, or the release of the charts a GitOpsApp wrote the file from. */
  GIVEN = 'given',
  /** Neither: the default release, 1.11.1. */
  DEFAULT = 'default',
}

/** The release the Functions of one folder were checked against, and where it came from. */
export interface FolderRelease {
  /** The folder, relative to the folder checked (`.` for itself). */
  readonly folder: string;
  readonly release: ServerlessRelease;
  readonly source: ReleaseSource;
  /** The file that holds the Function CRD, relative to the folder checked, when {@link source} is the CRD. */
  readonly file?: string;
}

/** What {@link validateManifests} found. */
export interface ManifestReport {
  /** The files read, relative to the folder. */
  readonly files: readonly string[];
  /** How many objects they hold. */
  readonly objects: number;
  /** Every finding, by file and document order. */
  readonly findings: readonly Finding[];
  /** The documented policy exceptions used: not failures, listed so they stay visible. */
  readonly exceptions: readonly PolicyExceptionUse[];
  /** The release the Functions of each folder that holds any were checked against, by folder. */
  readonly releases: readonly FolderRelease[];
}

interface Model { validate(): void }
type ModelClass = new (data: unknown) => Model;
interface ModelError { errors?: { instancePath: string; keyword: string; message?: string; params?: Record<string, unknown> }[] }

/** Packages of `@kubernetes-models` (schemas of CRDs we emit objects of), by API group. */
const MODEL_PACKAGES: { readonly [group: string]: string } = {
  'cert-manager.io': '@kubernetes-models/cert-manager',
  'argoproj.io': '@kubernetes-models/argo-cd',
  'source.toolkit.fluxcd.io': '@kubernetes-models/flux-cd',
  'kustomize.toolkit.fluxcd.io': '@kubernetes-models/flux-cd',
  'networking.istio.io': '@kubernetes-models/istio',
  'security.istio.io': '@kubernetes-models/istio',
  'gateway.networking.k8s.io': '@kubernetes-models/gateway-api',
  'keda.sh': '@kubernetes-models/keda',
  'monitoring.coreos.com': '@kubernetes-models/prometheus-operator',
};

/**
 * The warnings of a report as synth prints them on standard error, one line each: what is valid
 * and runs, but that something later will not take (client-side apply of a large Function, a
 * retired runtime).
 *
 * @param findings the findings of a report; its errors and the warnings of unknown kinds are left out
 * @param folder the folder the files are in, as the lines name it
 * @returns the lines, each ending with a line break; empty without warnings
 */
export function formatWarnings(findings: readonly Finding[], folder?: string): string {
  // The path of each file once: synth warns about thousands of Functions in a few files.
  const paths = new Map<string, string>();
  const pathOf = (file: string) => {
    let joined = paths.get(file);
    if (joined === undefined) paths.set(file, joined = folder ? path.join(folder, file) : file);
    return joined;
  };
  return findings.filter(f => f.severity === Severity.WARNING && f.rule !== 'manifest.schema')
    .map(f => `warning: ${pathOf(f.file)}: ${f.object}${f.path ? ` (${f.path})` : ''}: ${f.message} [${f.rule}]\n`).join('');
}

/** Kinds checked by a validator of `src/api` (schema, CEL rules and their controllers' checks), by `apiVersion/kind`. */
const RULED_KINDS: { readonly [apiVersionKind: string]: (object: unknown, release: ServerlessRelease) => Violation[] } = {
  [`${FUNCTION_API_VERSION}/${FUNCTION_KIND}`]: (object, release) => [...functionRuleViolations(object, release), ...handlerCode().handlerCodeViolations(object, release)],
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  [`${APIRULE_API_VERSION}/${APIRULE_KIND}`]: object => (require('../api/apirule-rules') as typeof ApiRuleRules).validateApiRule(object),
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  [`${SUBSCRIPTION_API_VERSION}/${SUBSCRIPTION_KIND}`]: object => (require('../api/subscription-rules') as typeof SubscriptionRules).validateSubscription(object),
};

/** A Function's violations of every rule of the Function API but those of its handler code ({@link handlerCodeViolations}). */
function functionRuleViolations(object: unknown, release: ServerlessRelease): Violation[] {
  _work.functionValidations++;
  return functionRules().validateFunction(object, { release });
}

const modelCache = new Map<string, ModelClass | undefined>();

/** A schema check of `kubernetes-models` (ajv's code): whether the data is valid, its errors after a `false`. */
type SchemaCheck = ((data: unknown) => boolean) & { errors?: unknown };

/** What `lib/models/kubernetes-models.js` holds (see scripts/bundle-models.ts). */
interface ModelBundle {
  /** The classes, by `apiVersion/kind`. */
  readonly models: { readonly [apiVersionKind: string]: (() => ModelClass) | undefined };
  /** Each class's schema check, by `apiVersion/kind`. */
  readonly checks: { readonly [apiVersionKind: string]: (() => SchemaCheck) | undefined };
  /** What a class's `validate()` does with its check: throws the check's errors, in English, as one error. */
  readonly runValidateFunc: (check: SchemaCheck, data: unknown) => void;
}
let bundle: ModelBundle | null | undefined;

/**
 * The bundle of the `kubernetes-models` classes the stack uses: one file instead of about 280
 * modules, compiled from the code cache (src/_code-cache.ts). `null` in a checkout that has not
 * run `npm run bundle`; the kinds' own modules serve then.
 */
function modelBundle(): ModelBundle | null {
  if (bundle === undefined) {
    let file: string | undefined;
    try {
      file = path.join(packageRoot(), 'lib', 'models', 'kubernetes-models.js');
    } catch {
      // This module was bundled into an app of its own: no package folder, the kinds' own modules serve.
    }
    bundle = file && fs.existsSync(file) ? requireBundle(file) as ModelBundle : null;
  }
  return bundle;
}

/**
 * The model class of a kind: `kubernetes-models` for core groups (generated from Kubernetes
 * 1.27), `@kubernetes-models/*` for the CRDs above; `undefined` when none is known.
 */
export function modelOf(apiVersion: string, kind: string): ModelClass | undefined {
  const key = `${apiVersion}/${kind}`;
  if (modelCache.has(key)) return modelCache.get(key);
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  const packageName = MODEL_PACKAGES[group];
  const modulePath = packageName ? `${packageName}/${group}/${version}` : group ? `kubernetes-models/${group}/${version}` : `kubernetes-models/${version}`;
  let model: ModelClass | undefined = packageName ? undefined : modelBundle()?.models?.[key]?.();
  // The kind's own module only: a group's index loads every kind of the group (100 ms for v1).
  if (!model && /^[A-Za-z0-9]+$/.test(kind)) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      model = (require(`${modulePath}/${kind}`) as Record<string, ModelClass>)[kind];
    } catch {
      model = undefined;
    }
  }
  modelCache.set(key, model);
  return model;
}

/** How many objects {@link validateObject} checked against a schema, by the way it ran the check; for tests. */
export interface SchemaCheckCounts {
  /** Checked with the bundle's check of their kind, on the object itself. */
  bundled: number;
  /** Checked through their kind's class, on the copy it makes (data that is not plain JSON, a kind outside the bundle, a CRD's kind). */
  model: number;
}

/** @internal */
export const _schemaCheckCounts: SchemaCheckCounts = { bundled: 0, model: 0 };

const checkCache = new Map<string, SchemaCheck | undefined>();

/** The bundle's schema check of a kind, when the bundle holds the kind (a bundle built before it held checks has none: the class checks). */
function bundledCheck(apiVersionKind: string): SchemaCheck | undefined {
  if (!checkCache.has(apiVersionKind)) checkCache.set(apiVersionKind, modelBundle()?.checks?.[apiVersionKind]?.());
  return checkCache.get(apiVersionKind);
}

/**
 * Whether a value is plain JSON data: null, strings, numbers, booleans, and arrays and objects
 * (of `Object` or no prototype) of them, with no hole, no `undefined` and no `__proto__` key.
 * A class's copy of such an object (`kubernetes-models` drops undefined values and copies plain
 * objects key by key) holds the same data, so its check gives what the class gives.
 */
function isJsonData(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return true;
  if (typeof value !== 'object') return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!(i in value) || !isJsonData(value[i])) return false;
    return true;
  }
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return false;
  for (const key in value) {
    if (key === '__proto__' || !Object.prototype.hasOwnProperty.call(value, key) || !isJsonData((value as Record<string, unknown>)[key])) return false;
  }
  return true;
}

/**
 * Runs a kind's schema check as its class's `validate()` does: with a bundled check on the object
 * itself when it is plain JSON data (its keys in the order the class puts them: `apiVersion` and
 * `kind` first), else through the class (the bundle's, loaded only then). Either throws the same error. (The bundle's kinds are
 * those of core API groups, whose class {@link modelOf} takes from the bundle too.)
 */
function runSchemaCheck(model: ModelClass | undefined, object: { apiVersion: string; kind: string }): void {
  const check = bundledCheck(`${object.apiVersion}/${object.kind}`);
  if (check && isJsonData(object)) {
    _schemaCheckCounts.bundled++;
    bundle!.runValidateFunc(check, Object.assign({ apiVersion: object.apiVersion, kind: object.kind }, object));
    return;
  }
  _schemaCheckCounts.model++;
  new (model ?? modelOf(object.apiVersion, object.kind)!)(object).validate();
}

function fieldPath(instancePath: string): string {
  return instancePath.slice(1).split('/').map(p => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '');
}

/** Options of {@link validateObject}. */
export interface ValidateObjectOptions {
  /**
   * The release whose Function API a Function is checked against.
   *
   * @default ServerlessRelease.V1_11_1
   */
  readonly release?: ServerlessRelease;
}

/**
 * Every violation of one object: Functions, APIRules and Subscriptions by their validators of
 * `src/api` (schema, CEL rules and the rules of their controllers), other kinds by their schema.
 *
 * @param object a parsed manifest
 * @returns the violations, and whether a schema was known for it
 */
export function validateObject(object: unknown, options: ValidateObjectOptions = {}): { readonly violations: Violation[]; readonly known: boolean } {
  const o = object as { apiVersion?: unknown; kind?: unknown };
  if (typeof o !== 'object' || o === null || typeof o.apiVersion !== 'string' || typeof o.kind !== 'string') {
    return { known: true, violations: [{ path: '', message: 'not a Kubernetes object: apiVersion and kind are required', rule: 'manifest.object' }] };
  }
  const ruled = RULED_KINDS[`${o.apiVersion}/${o.kind}`];
  if (ruled) return { known: true, violations: ruled(object, options.release ?? DEFAULT_RELEASE) };
  // A kind the bundle checks has its class there too, which only data that is not plain JSON needs (see runSchemaCheck).
  const model = bundledCheck(`${o.apiVersion}/${o.kind}`) ? undefined : modelOf(o.apiVersion, o.kind);
  if (!model && !bundledCheck(`${o.apiVersion}/${o.kind}`)) return { known: false, violations: [] };
  try {
    runSchemaCheck(model, o as { apiVersion: string; kind: string });
    return { known: true, violations: [] };
  } catch (e) {
    const errors = (e as ModelError).errors;
    if (!errors) return { known: true, violations: [{ path: '', message: (e as Error).message, rule: 'openapi' }] };
    return {
      known: true,
      violations: errors.map(err => {
        const extra = err.keyword === 'additionalProperties' ? ` '${String(err.params?.additionalProperty)}'` : '';
        const allowed = err.keyword === 'enum' ? `: ${(err.params?.allowedValues as unknown[] ?? []).join(', ')}` : '';
        return { path: fieldPath(err.instancePath), message: `${err.message ?? err.keyword}${extra}${allowed}`, rule: `openapi.${err.keyword}` };
      }),
    };
  }
}

function describeObject(object: any, index: number): string {
  const name = object?.metadata?.name;
  if (typeof object?.kind !== 'string' || typeof name !== 'string') return `document ${index + 1}`;
  return `${object.kind} ${object.metadata.namespace ? `${object.metadata.namespace}/` : ''}${name}`;
}

/** Options of {@link validateManifests}. */
export interface ValidateOptions {
  /**
   * Check the manifests of subfolders too.
   *
   * @default true
   */
  readonly recursive?: boolean;
  /**
   * The release to check Functions against in folders without a Function CRD (in them or above
   * them). Where there is one, it decides, and a different release given here is an error.
   *
   * @default ServerlessRelease.V1_11_1
   */
  readonly release?: ServerlessRelease;
  /**
   * What a Function whose runtime is past or near its end of support gets (`runtimeNotice`).
   *
   * @default - a warning, at the time of the call (`RUNTIME_END_ENV` can make it an error)
   */
  readonly runtimeEnd?: RuntimeEndOptions;
}

/**
 * The environment variable that makes a runtime past or near its end of support an error of
 * synth and `validate` when set to `fail` (as `--fail-on-runtime-end` does): for teams that want a
 * date to stop their build. Otherwise it is a warning.
 */
export const RUNTIME_END_ENV = 'KYMA_SERVERLESS_RUNTIME_END';

/** How the checks treat a Function whose runtime is past or near its end of support. */
export interface RuntimeEndOptions {
  /**
   * Make it an error, which fails synth and `validate`.
   *
   * @default - whether the environment variable RUNTIME_END_ENV is `fail`
   */
  readonly fail?: boolean;
  /**
   * The time to judge support at.
   *
   * @default - now, or the day the environment variable KYMA_SERVERLESS_TODAY gives
   */
  readonly now?: Date;
}

/** The environment variable naming a file to which {@link GitOpsApp}s append the folders they checked. */
export const VALIDATED_FOLDERS_ENV = 'KYMA_SERVERLESS_VALIDATED_FOLDERS';

/** The documents of one manifest file, parsed (or with the error that stopped parsing), for {@link validateDocuments}. */
export interface ManifestDocuments {
  /** The file, relative to the folder checked. */
  readonly file: string;
  /** Its documents in order: each an object, or the reason it does not parse. */
  readonly documents: readonly { readonly object?: any; readonly error?: string }[];
}

/** Options of {@link validateDocuments}. */
export interface ValidateDocumentsOptions {
  /**
   * Objects whose schema and rules were checked already, as they stand, against the release their
   * folder is checked against (a Function a `KymaFunction` validated at synth, unchanged since):
   * the check of its schema is skipped; the security baseline and the other checks of the folder
   * still see it.
   *
   * @default - none: every object is checked
   */
  readonly checkedAlready?: (object: any, release: ServerlessRelease) => boolean;
  /**
   * The release to check Functions against in folders without a Function CRD (in them or above them).
   *
   * @default ServerlessRelease.V1_11_1
   */
  readonly release?: ServerlessRelease;
  /**
   * The release of a file's Functions when no Function CRD is in its folder or above it (a
   * GitOpsApp knows the release of each chart it wrote); `undefined` leaves it to {@link release}.
   *
   * @default - {@link release} for every file
   */
  readonly releaseOfFile?: (file: string) => ServerlessRelease | undefined;
  /**
   * What a Function whose runtime is past or near its end of support gets.
   *
   * @default - a warning, at the time of the call
   */
  readonly runtimeEnd?: RuntimeEndOptions;
}

/**
 * Checks the documents of manifest files, as {@link validateManifests} does for a folder's files:
 * what synth writes is checked in memory with the same rules (files in one folder as given).
 *
 * @param files the files in order, each with its documents
 */
export function validateDocuments(files: readonly ManifestDocuments[], options: ValidateDocumentsOptions = {}): ManifestReport {
  const findings: Finding[] = [];
  const exceptions: PolicyExceptionUse[] = [];
  let objects = 0;
  const seen = new Map<string, string>();
  const byFolder = new Map<string, { object: any; file: string; where: string }[]>();
  for (const { file, documents } of files) {
    const folder = path.dirname(file);
    for (let index = 0; index < documents.length; index++) {
      const { object, error } = documents[index];
      if (error !== undefined) {
        findings.push({ file, object: `document ${index + 1}`, path: '', rule: 'manifest.yaml', message: `does not parse: ${error}`, severity: Severity.ERROR });
        continue;
      }
      if (object === null || object === undefined) continue;
      objects++;
      let inFolder = byFolder.get(folder);
      if (!inFolder) byFolder.set(folder, inFolder = []);
      inFolder.push({ object, file, where: describeObject(object, index) });
    }
  }
  const releases = folderReleases(byFolder, options, findings);
  const checkedAlready = new Set<unknown>();
  if (options.checkedAlready) {
    for (const [folder, entries] of byFolder) {
      const release = releases.get(folder)!.release;
      entries.forEach(({ object }) => {
        if (options.checkedAlready!(object, release)) checkedAlready.add(object);
      });
    }
  }
  const checking = checkObjects(byFolder, releases, checkedAlready);
  // What relates the objects of a folder needs no handler's parse: found while the parser's worker parses the handlers.
  const related = [...byFolder.values()].map(entries => {
    const objects = entries.map(e => e.object);
    // Clashes are between a Function and a Service: none in a folder without Functions.
    return { entries, clashes: objects.some(isFunction) ? functionRules().functionServiceClashes(objects) : [], policies: checkPolicies(objects) };
  });
  const checks = checking.finish();
  const now = options.runtimeEnd?.now ?? runtimeSupportNow();
  const endSeverity = (options.runtimeEnd?.fail ?? process.env[RUNTIME_END_ENV] === 'fail') ? Severity.ERROR : Severity.WARNING;
  // A notice depends on the runtime and the release alone (at one time): found once for each pair, looked up without a key built per Function.
  const notices = new Map<ServerlessRelease, Map<string, RuntimeNotice | undefined>>();
  const noticeOf = (runtime: string, release: ServerlessRelease) => {
    let ofRelease = notices.get(release);
    if (!ofRelease) notices.set(release, ofRelease = new Map());
    if (!ofRelease.has(runtime)) ofRelease.set(runtime, runtimeNotice(runtime, release, now));
    return ofRelease.get(runtime);
  };
  const context: FindingsContext = { findings, seen, noticeOf, endSeverity, groups: new Map() };
  for (const [folder, entries] of byFolder) {
    const release = releases.get(folder)!.release;
    const inFolder = checks.get(folder)!;
    for (let index = 0; index < entries.length; index++) addObjectFindings(context, folder, release, entries[index], inFolder[index]);
  }
  for (const { entries, clashes, policies } of related) {
    for (const clash of clashes) {
      const fn = entries[clash.function];
      const service = entries[clash.service];
      findings.push({
        file: fn.file, object: fn.where, path: 'metadata.name', rule: 'manifest.functionService', severity: Severity.ERROR,
        message: `${service.where} (${service.file}) has the name the controller gives the Function's Service, so the Function never gets one `
          + '(Running False, ServiceFailed: the Service already exists); rename the Function or the other Service',
      });
    }
    for (const violation of policies) {
      const { file, where } = entries[violation.index];
      if (violation.excepted !== undefined) {
        exceptions.push({ file, object: where, path: violation.path, rule: `policy.${violation.rule}`, reason: violation.excepted });
      } else {
        findings.push(policyFinding(file, where, violation));
      }
    }
  }
  const names = files.map(f => f.file);
  const used = [...byFolder].filter(([, entries]) => entries.some(e => isFunction(e.object))).map(([folder]) => releases.get(folder)!)
    .sort((a, b) => (a.folder < b.folder ? -1 : a.folder > b.folder ? 1 : 0));
  return { files: names, objects, findings: sortFindings(findings, names), exceptions, releases: used };
}

/** What the findings of each object of {@link validateDocuments} share. */
interface FindingsContext {
  readonly findings: Finding[];
  /** The file of each object seen, by folder and identity. */
  readonly seen: Map<string, string>;
  readonly noticeOf: (runtime: string, release: ServerlessRelease) => RuntimeNotice | undefined;
  readonly endSeverity: Severity;
  /** The API group of each `apiVersion` value seen, as the identity of an object writes it. */
  readonly groups: Map<unknown, string>;
}

/** The API group of an `apiVersion`, as the identity of an object writes it (`undefined` when there is none): found once per value. */
function groupOf(context: FindingsContext, apiVersion: any): string {
  let group = context.groups.get(apiVersion);
  if (group === undefined) context.groups.set(apiVersion, group = `${apiVersion?.split('/')[0]}`);
  return group;
}

/**
 * The findings of one object of a folder: its violations, its warnings, an unknown kind, a second
 * object of its identity. A function of its own, called for every object: the engine optimizes it
 * soon, where a loop in the body of a function called once runs long before it is.
 */
function addObjectFindings(
  context: FindingsContext, folder: string, release: ServerlessRelease, entry: { object: any; file: string; where: string }, check: ObjectCheck,
): void {
  const { findings, seen, noticeOf, endSeverity } = context;
  const { object, file, where } = entry;
  const { violations, known } = check;
  // Indexed loops: this runs for every object, most with no violation and no warning, where `for...of` would make an iterator for nothing.
  for (let i = 0; i < violations.length; i++) {
    const v = violations[i];
    findings.push({ file, object: where, path: v.path, rule: v.rule ?? 'openapi', message: v.hint ? `${v.message}; ${v.hint}` : v.message, severity: Severity.ERROR });
  }
  if (object?.apiVersion === FUNCTION_API_VERSION && object?.kind === FUNCTION_KIND) {
    // What the release runs but apply or upstream will not keep taking: never a reason to fail,
    // unless asked to for a runtime's end of support. The dated notice says more than the
    // release's mark of a deprecated runtime, which the webhook still gives.
    const notice = typeof object.spec?.runtime === 'string' ? noticeOf(object.spec.runtime, release) : undefined;
    if (notice) findings.push({ file, object: where, path: 'spec.runtime', rule: 'runtimeEnd', message: notice.message, severity: endSeverity });
    const warnings = functionRules().functionWarnings(object, { release });
    for (let i = 0; i < warnings.length; i++) {
      const w = warnings[i];
      if (notice && w.rule === 'deprecatedRuntime') continue;
      findings.push({ file, object: where, path: w.path, rule: w.rule ?? 'warning', message: w.hint ? `${w.message}; ${w.hint}` : w.message, severity: Severity.WARNING });
    }
  }
  if (!known) {
    findings.push({ file, object: where, path: '', rule: 'manifest.schema', message: `no schema is known for ${object.apiVersion} ${object.kind}; it was not checked`, severity: Severity.WARNING });
  }
  // The same object twice in one folder: the second silently replaces the first on apply.
  const identity = `${folder}|${groupOf(context, object.apiVersion)}|${object.kind}|${object.metadata?.namespace ?? ''}|${object.metadata?.name}`;
  const first = seen.get(identity);
  if (first) {
    findings.push({ file, object: where, path: '', rule: 'manifest.unique', message: `also defined in ${first}; keep one`, severity: Severity.ERROR });
  } else if (object.metadata?.name) {
    seen.set(identity, file);
  }
}

/** What {@link validateObject} found for one object. */
type ObjectCheck = ReturnType<typeof validateObject>;

/** The check of an object checked already: one for all of them (thousands of Functions), read only by {@link addObjectFindings}. */
const CHECKED_ALREADY: ObjectCheck = Object.freeze({ violations: Object.freeze([]) as unknown as Violation[], known: true });

/**
 * {@link validateObject} of each object not checked already, by folder and in the order of its
 * entries, but the handler code of Functions with an inline source: the Python handlers that the
 * reader of this thread leaves to tree-sitter are parsed in the parser's worker while this thread
 * checks the other objects, every other rule of those Functions, and whatever the caller does
 * before it calls `finish`, which waits once for the worker (if it was needed) and checks the handlers.
 */
function checkObjects(
  byFolder: ReadonlyMap<string, readonly { object: any }[]>, releases: ReadonlyMap<string, FolderRelease>, checkedAlready: ReadonlySet<unknown>,
): { finish(): Map<string, ObjectCheck[]> } {
  const checks = new Map<string, ObjectCheck[]>();
  const handlers: { checks: ObjectCheck[]; index: number; object: any; release: ServerlessRelease; rules: Violation[] }[] = [];
  for (const [folder, entries] of byFolder) {
    const release = releases.get(folder)!.release;
    const inFolder: ObjectCheck[] = [];
    entries.forEach(({ object }, index) => {
      if (checkedAlready.has(object)) inFolder[index] = CHECKED_ALREADY;
      else if (!isFunction(object) || !hasInlineHandler(object)) inFolder[index] = validateObject(object, { release });
      else handlers.push({ checks: inFolder, index, object, release, rules: functionRuleViolations(object, release) });
    });
    checks.set(folder, inFolder);
  }
  return {
    finish: () => {
      // Without handlers there is nothing to parse, and the handler checks need not load.
      if (handlers.length) handlerCode()._parsePythonHandlers(handlers.flatMap(h => inlineHandler(h.object)));
      handlers.forEach(({ checks: inFolder, index, object, release, rules }) => {
        inFolder[index] = { known: true, violations: [...rules, ...handlerCode().handlerCodeViolations(object, release)] };
      });
      return checks;
    },
  };
}

function isFunction(object: any): boolean {
  return object?.apiVersion === FUNCTION_API_VERSION && object?.kind === FUNCTION_KIND;
}

/** Whether a Function has a runtime and an inline source ({@link inlineHandler} without its list). */
function hasInlineHandler(object: any): boolean {
  return typeof object?.spec?.runtime === 'string' && typeof object?.spec?.source?.inline?.source === 'string';
}

/** The runtime and inline source of a Function, when it has both. */
function inlineHandler(object: any): { runtime: string; source: string }[] {
  const runtime = object?.spec?.runtime;
  const source = object?.spec?.source?.inline?.source;
  return typeof runtime === 'string' && typeof source === 'string' ? [{ runtime, source }] : [];
}

/**
 * The release each folder's Functions are checked against: that of the Function CRD in the folder,
 * else in the nearest folder above it, else the one given for the file, else the default. A CRD
 * whose annotation names no release, or one that differs from the release given, is an error.
 */
function folderReleases(
  byFolder: ReadonlyMap<string, readonly { object: any; file: string; where: string }[]>, options: ValidateDocumentsOptions, findings: Finding[],
): Map<string, FolderRelease> {
  const crds = new Map<string, FolderRelease>();
  for (const [folder, entries] of byFolder) {
    const crd = entries.find(e => isFunctionCrd(e.object));
    if (!crd) continue;
    let found;
    try {
      found = functionCrdRelease(crd.object);
    } catch (e) {
      findings.push({
        file: crd.file, object: crd.where, path: `metadata.annotations.${RELEASE_ANNOTATION}`, rule: 'manifest.release', severity: Severity.ERROR,
        message: `${(e as Error).message}, or remove the annotation and synthesize again`,
      });
      found = functionCrdRelease({ ...crd.object, metadata: { ...crd.object.metadata, annotations: {} } });
    }
    if (options.release && options.release !== found.release) {
      const told = found.evidence === CrdReleaseEvidence.ANNOTATION ? `its annotation ${RELEASE_ANNOTATION}` : 'its shape';
      findings.push({
        file: crd.file, object: crd.where, path: '', rule: 'manifest.release', severity: Severity.ERROR,
        message: `this Function CRD is of release ${found.release} (${told}), but release ${options.release} was given: `
          + `the folder's Functions run under the CRD's release; give ${found.release}, or none`,
      });
    }
    crds.set(folder, { folder, release: found.release, source: ReleaseSource.FUNCTION_CRD, file: crd.file });
  }
  const releases = new Map<string, FolderRelease>();
  for (const [folder, entries] of byFolder) {
    let above: string | undefined = folder;
    while (above !== undefined && !crds.has(above)) above = above === '.' ? undefined : path.dirname(above);
    const given = options.releaseOfFile?.(entries[0].file) ?? options.release;
    releases.set(folder, above !== undefined ? { ...crds.get(above)!, folder }
      : given ? { folder, release: given, source: ReleaseSource.GIVEN }
        : { folder, release: DEFAULT_RELEASE, source: ReleaseSource.DEFAULT });
  }
  return releases;
}

/**
 * Checks every manifest under a folder (recursively; Kustomize's own files are skipped): each
 * document must parse, be a Kubernetes object, pass its schema (Functions: every rule of the
 * Function API) and the security baseline (`src/policy/`), and no object may appear twice in one
 * folder. Policies that relate objects (budgets to workloads) look within one folder.
 *
 * @param dir the folder, such as `dist/`
 * @throws when the folder does not exist
 */
export function validateManifests(dir: string, options: ValidateOptions = {}): ManifestReport {
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new Error(`No folder ${dir}: give the folder synth writes to, such as dist/`);
  const { manifestFiles, parseManifests, readManifestFile } = manifestFileReader();
  const files = manifestFiles(dir, options.recursive ?? true).map(full => {
    const { text, printableAscii } = readManifestFile(full);
    const documents = parseManifests(text, printableAscii);
    // Its Python handlers are read as soon as its YAML is: here, or sent to tree-sitter in the
    // parser's worker when the reader of this thread leaves them to it, which parses them while
    // this thread goes on.
    const pythonSources: string[] = [];
    for (let i = 0; i < documents.length; i++) addPythonHandler(documents[i].object, pythonSources);
    if (pythonSources.length) handlerCode()._preparePythonParser(pythonSources);
    return { file: path.relative(dir, full), documents };
  });
  return validateDocuments(files, { release: options.release, runtimeEnd: options.runtimeEnd });
}

/** Adds the inline handler of a Python Function, as its file is read, to `pythonSources`. */
function addPythonHandler(object: any, pythonSources: string[]): void {
  if (!isFunction(object)) return;
  const runtime = object.spec?.runtime;
  const source = object.spec?.source?.inline?.source;
  if (typeof runtime === 'string' && typeof source === 'string' && runtimeFamily(runtime) === RuntimeFamily.PYTHON) pythonSources.push(source);
}

function policyFinding(file: string, object: string, violation: PolicyViolation): Finding {
  return { file, object, path: violation.path, rule: `policy.${violation.rule}`, message: `${violation.message}; ${violation.fix}`, severity: Severity.ERROR };
}

/** Findings by file, in the order the files were read; within a file, in the order found. */
function sortFindings(findings: Finding[], files: readonly string[]): Finding[] {
  const order = new Map(files.map((f, i) => [f, i]));
  // Most are found file by file, in order already: what the sort would give them (the order they are in).
  let inOrder = true;
  for (let i = 1; i < findings.length && inOrder; i++) inOrder = order.get(findings[i - 1].file)! <= order.get(findings[i].file)!;
  if (inOrder) return [...findings];
  return findings.map((f, i) => ({ f, i })).sort((a, b) => (order.get(a.f.file)! - order.get(b.f.file)!) || a.i - b.i).map(x => x.f);
}
