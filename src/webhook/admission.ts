/**
 * AdmissionReview v1: decoding what the API server sends, and the two reviews we answer.
 *
 * Everything here is pure: no I/O, no clock. The server feeds it request bodies and writes back
 * what it returns.
 */
import { isDeepStrictEqual } from 'node:util';
import { compare, Operation } from 'fast-json-patch';
import { isObject, showValue } from '../api/_json';
// Single modules of the Function API, not its index: the server's module graph stays free of cdk8s.
import { FunctionDefaults, defaultFunction } from '../api/function-defaults';
import { FunctionRuleOptions, functionWarnings, validateFunctionBounded } from '../api/function-rules';
import { FUNCTION_SHAPE_LIMITS, functionShapeProblem } from '../api/function-shape';
import { FUNCTION_GROUP, FUNCTION_KIND, FUNCTION_VERSION } from '../api/function-schema';
import { DEFAULT_RELEASE, ServerlessRelease, releaseFacts } from '../api/release';
import { Violation, describeViolation } from '../api/validator';

/** The API version of the reviews we accept and answer. */
export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';

/** The operations the API server asks about. */
export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** A group, version and kind, as `request.kind` gives it. */
export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

/** The part of an AdmissionReview's `request` the webhook reads. */
export interface AdmissionRequest {
  /** Copied into the response; the API server matches them. */
  readonly uid: string;
  readonly kind: GroupVersionKind;
  readonly operation: AdmissionOperation;
  readonly name?: string;
  readonly namespace?: string;
  /** The object as it would be stored (CREATE, UPDATE). */
  readonly object?: unknown;
  /** The object as it is stored (UPDATE, DELETE). */
  readonly oldObject?: unknown;
  readonly dryRun?: boolean;
}

/** A `metav1.Status`, the reason given with a denial. */
export interface AdmissionStatus {
  readonly code: number;
  readonly reason: string;
  readonly message: string;
  readonly details?: {
    readonly name?: string;
    readonly group: string;
    readonly kind: string;
    readonly causes: readonly { readonly field: string; readonly message: string; readonly reason: string }[];
  };
}

/** The `response` of an AdmissionReview. */
export interface AdmissionResponse {
  readonly uid: string;
  readonly allowed: boolean;
  readonly status?: AdmissionStatus;
  /** `JSONPatch`, when `patch` is set. */
  readonly patchType?: 'JSONPatch';
  /** The JSONPatch (RFC 6902), as base64 of its JSON. */
  readonly patch?: string;
  /** Warnings the client shows (kubectl prints each as `Warning: ...`), whether allowed or not. */
  readonly warnings?: readonly string[];
}

/** A whole AdmissionReview as we answer it. */
export interface AdmissionReviewResponse {
  readonly apiVersion: typeof ADMISSION_API_VERSION;
  readonly kind: 'AdmissionReview';
  readonly response: AdmissionResponse;
}

/**
 * What one review may produce, whatever its input: a review's cost is bounded by these, not by
 * the size of the Function (up to 3 MiB, and a million small faults fit in that).
 */
export const REVIEW_LIMITS = {
  /** Violations described in a denial; the rest are counted (`and 12345 more`). */
  maxViolations: 8,
  /** Characters of one violation's line in a denial's message (a value is echoed in it). */
  maxLineChars: 1024,
  /** Characters of all lines of a denial's message: lines past it are counted with the rest. */
  maxMessageChars: 4096,
  /** Characters of a field path or message in a denial's `causes`. */
  maxCauseChars: 1024,
  /** How deep a Function may nest, and how many values it may hold: the rule `functionShape` of src/api. */
  ...FUNCTION_SHAPE_LIMITS,
  /** Characters of a request's uid (the API server's are 36). */
  maxUidChars: 128,
} as const;

/** Text cut to `max` characters, with a marker saying how much was cut. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…[${text.length - max} more chars]`;
}

/** A request the webhook cannot answer with a review: the server replies with this HTTP status and message. */
export class AdmissionRequestError extends Error {
  constructor(message: string, public readonly statusCode = 400) {
    super(message);
    this.name = 'AdmissionRequestError';
  }
}

const OPERATIONS: readonly string[] = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'];

function describeGvk(kind: unknown): string {
  if (!isObject(kind)) return 'no kind';
  const group = typeof kind.group === 'string' && kind.group ? `${kind.group}/` : '';
  return `${group}${showValue(kind.version)} ${showValue(kind.kind)}`;
}

/**
 * Decodes an AdmissionReview request body and checks that it asks about a Function.
 *
 * @param body the raw request body
 * @returns the review's request
 * @throws AdmissionRequestError (HTTP 400) when the body is not JSON, not an
 * `admission.k8s.io/v1` AdmissionReview, has no `request` or `uid`, or is about anything but a
 * `serverless.kyma-project.io/v1alpha2` Function
 */
export function decodeAdmissionReview(body: string | Buffer): AdmissionRequest {
  let review: unknown;
  try {
    review = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch (e) {
    throw new AdmissionRequestError(`The request body is not valid JSON: ${(e as Error).message}`);
  }
  if (!isObject(review) || review.kind !== 'AdmissionReview' || review.apiVersion !== ADMISSION_API_VERSION) {
    const got = isObject(review) ? `${showValue(review.apiVersion)} ${showValue(review.kind)}` : Array.isArray(review) ? 'an array' : review === null ? 'null' : typeof review;
    throw new AdmissionRequestError(`Expected an AdmissionReview of ${ADMISSION_API_VERSION}, got ${got}`);
  }
  const request = review.request;
  if (!isObject(request)) throw new AdmissionRequestError('The AdmissionReview has no request');
  if (typeof request.uid !== 'string' || request.uid === '') throw new AdmissionRequestError('The AdmissionReview\'s request has no uid');
  if (request.uid.length > REVIEW_LIMITS.maxUidChars) {
    throw new AdmissionRequestError(`The AdmissionReview's request uid has ${request.uid.length} characters, more than ${REVIEW_LIMITS.maxUidChars}: ${clip(request.uid, 40)}`);
  }
  const kind = request.kind;
  if (!isObject(kind) || kind.group !== FUNCTION_GROUP || kind.kind !== FUNCTION_KIND) {
    throw new AdmissionRequestError(`This webhook admits only ${FUNCTION_GROUP} ${FUNCTION_KIND}s, got ${describeGvk(kind)}`);
  }
  if (kind.version !== FUNCTION_VERSION) {
    throw new AdmissionRequestError(`This webhook admits ${FUNCTION_KIND}s of version ${FUNCTION_VERSION} only, got ${showValue(kind.version)}`);
  }
  if (typeof request.operation !== 'string' || !OPERATIONS.includes(request.operation)) {
    throw new AdmissionRequestError(`Unknown operation ${JSON.stringify(request.operation)}; expected one of ${OPERATIONS.join(', ')}`);
  }
  if ((request.operation === 'CREATE' || request.operation === 'UPDATE') && !isObject(request.object)) {
    throw new AdmissionRequestError(`${request.operation === 'UPDATE' ? 'An' : 'A'} ${request.operation} review must carry the object`);
  }
  return request as unknown as AdmissionRequest;
}

/** Wraps a response into the AdmissionReview the API server expects back. */
export function admissionReview(response: AdmissionResponse): AdmissionReviewResponse {
  return { apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview', response };
}

function metadataOf(object: unknown): { [key: string]: unknown } {
  return isObject(object) && isObject(object.metadata) ? object.metadata : {};
}

function specOf(object: unknown): unknown {
  return isObject(object) ? object.spec : undefined;
}

/**
 * Whether a review needs no judgement: deletions, and updates that leave the spec as it is
 * (finalizers, labels, a deletion in progress). The latter keeps the controller able to finish
 * Functions stored before the webhook was installed, even when they break a rule.
 */
function passesThrough(request: AdmissionRequest): boolean {
  if (request.operation === 'DELETE' || request.operation === 'CONNECT') return true;
  if (request.operation !== 'UPDATE') return false;
  if (metadataOf(request.object).deletionTimestamp) return true;
  return isDeepStrictEqual(specOf(request.object), specOf(request.oldObject));
}

/**
 * A denial of an object or old object that nests deeper or holds more values than
 * {@link REVIEW_LIMITS} allows: no Function does, every later step (comparison, defaulting, the
 * schema) walks values recursively, and each value costs work.
 */
function tooLarge(request: AdmissionRequest, fields: ReadonlyArray<'object' | 'oldObject'> = ['object', 'oldObject']): AdmissionResponse | undefined {
  for (const field of fields) {
    const value = request[field];
    const problem = functionShapeProblem(value);
    if (problem) return { uid: request.uid, allowed: false, status: { code: 422, reason: 'Invalid', message: `${FUNCTION_KIND} is invalid: request.${field} ${problem}` } };
  }
  return undefined;
}

/** The outcome of a validation review, for the response and the log. */
export interface ValidationResult {
  readonly response: AdmissionResponse;
  /** The violations found, at most {@link REVIEW_LIMITS}' `maxViolations`; empty when allowed. */
  readonly violations: readonly Violation[];
  /** How many more violations were found and only counted. */
  readonly omitted: number;
  /** Why the review denied without judging the Function (too deep or too large), for the log. */
  readonly refused?: string;
}

/**
 * Judges a Function by every rule of the Function API (see `validateFunction`).
 *
 * Deletions are allowed, and so are updates that do not change the spec (see above). What the
 * release still runs but upstream has retired (see `functionWarnings`) comes back as warnings.
 *
 * @param request the decoded request
 * @param options the stack's release and minimum requests
 * @returns the response: allowed, or denied with HTTP 422, a message listing the first violations
 * (see {@link REVIEW_LIMITS}) as `field: message; fix` (the words synth uses) and the count of the
 * rest, and one `cause` per violation listed; denied without judging when the object nests
 * deeper or holds more values than any Function
 */
export function reviewValidation(request: AdmissionRequest, options: FunctionRuleOptions = {}): ValidationResult {
  // An old object too large is no Function the rules could name; a new one is denied by the rule
  // functionShape of validateFunctionBounded, which checks it before any other walk.
  const large = tooLarge(request, ['oldObject']);
  if (large) return { response: large, violations: [], omitted: 0, refused: 'too large' };
  const objectTooLarge = functionShapeProblem(request.object) !== undefined;
  if (!objectTooLarge && passesThrough(request)) return { response: { uid: request.uid, allowed: true }, violations: [], omitted: 0 };
  // eslint-disable-next-line prefer-const
  let { violations, omitted } = validateFunctionBounded(request.object, { ...options, maxViolations: options.maxViolations ?? REVIEW_LIMITS.maxViolations });
  const warnings = objectTooLarge ? [] : functionWarnings(request.object, options).map(w => clip(describeViolation(w), REVIEW_LIMITS.maxLineChars));
  const warned = warnings.length ? { warnings } : {};
  if (violations.length === 0) return { response: { uid: request.uid, allowed: true, ...warned }, violations, omitted };
  const rawName = typeof metadataOf(request.object).name === 'string' ? String(metadataOf(request.object).name) : request.name;
  const name = rawName === undefined ? undefined : clip(rawName, 253);
  // Listed while the message has room; the others are counted with those past maxViolations.
  const lines: string[] = [];
  let chars = 0;
  for (const v of violations) {
    const line = clip(describeViolation(v), REVIEW_LIMITS.maxLineChars);
    if (lines.length > 0 && chars + line.length > REVIEW_LIMITS.maxMessageChars) break;
    lines.push(line);
    chars += line.length;
  }
  const listed = violations.slice(0, lines.length);
  omitted += violations.length - listed.length;
  if (omitted) lines.push(`and ${omitted} more violation${omitted === 1 ? '' : 's'}, not listed: fix these first, then look again`);
  const message = `${FUNCTION_KIND} ${JSON.stringify(clip(name ?? '', 80))} is invalid:${lines.length === 1 ? ` ${lines[0]}` : `\n- ${lines.join('\n- ')}`}`;
  return {
    violations: listed,
    omitted,
    response: {
      uid: request.uid,
      allowed: false,
      ...warned,
      status: {
        code: 422,
        reason: 'Invalid',
        message,
        details: {
          name,
          group: FUNCTION_GROUP,
          kind: 'functions',
          causes: listed.map(v => ({
            field: clip(v.path, REVIEW_LIMITS.maxCauseChars),
            message: clip(v.message, REVIEW_LIMITS.maxCauseChars),
            reason: clip(v.rule ?? 'FieldValueInvalid', REVIEW_LIMITS.maxCauseChars),
          })),
        },
      },
    },
  };
}

/** The outcome of a defaulting review, for the response and the log. */
export interface DefaultingResult {
  readonly response: AdmissionResponse;
  /** The JSONPatch operations; empty when nothing was filled in. */
  readonly patch: readonly Operation[];
  /** Why the review left the Function as it is (too deep or too large), for the log. */
  readonly refused?: string;
}

/**
 * Fills in a Function's defaults (see `defaultFunction`) and answers with the JSONPatch that
 * does it. Always allows: judging is the validating webhook's job, which runs after this one.
 * What it removes (a build block 1.11.1's defaulting left, in a release that builds nothing) it
 * says in a warning.
 *
 * @param request the decoded request
 * @param defaults the stack's default values
 * @param release the stack's release
 * @returns the response, with `patch` only when something was filled in
 */
export function reviewDefaulting(request: AdmissionRequest, defaults: FunctionDefaults, release: ServerlessRelease = DEFAULT_RELEASE): DefaultingResult {
  const allowed: AdmissionResponse = { uid: request.uid, allowed: true };
  // Left as it is, for the validating webhook to deny: defaulting never denies.
  const large = tooLarge(request);
  if (large) return { response: { ...allowed, warnings: [`not defaulted: ${large.status!.message}`] }, patch: [], refused: 'too large' };
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return { response: allowed, patch: [] };
  if (metadataOf(request.object).deletionTimestamp) return { response: allowed, patch: [] };
  const object = request.object as object;
  const patch = compare(object, defaultFunction(object, defaults, request.operation === 'UPDATE' ? request.oldObject : undefined, release));
  if (patch.length === 0) return { response: allowed, patch };
  const removedBuild = patch.some(op => op.op === 'remove' && op.path === '/spec/resourceConfiguration/build');
  const warnings = removedBuild
    ? [`spec.resourceConfiguration.build: removed: release ${releaseFacts(release).release} builds nothing and ignores build resources; this build profile was left by an earlier release's defaulting`]
    : [];
  return {
    patch,
    response: {
      ...allowed,
      patchType: 'JSONPatch',
      patch: Buffer.from(JSON.stringify(patch)).toString('base64'),
      ...(warnings.length ? { warnings } : {}),
    },
  };
}
