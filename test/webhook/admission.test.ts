import { applyPatch, Operation } from 'fast-json-patch';
import {
  BuildProfile, DEFAULT_FUNCTION_DEFAULTS, FUNCTION_GROUP, FunctionDefaults, FunctionProfile, ServerlessRelease, defaultFunction, describeViolation,
  validateFunction,
} from '../../src/api';
import { serverDefaultedFields } from '../../src/api/controller-fixed-point';
import {
  ADMISSION_API_VERSION, AdmissionRequest, REVIEW_LIMITS, clip, AdmissionRequestError, admissionReview, decodeAdmissionReview, reviewDefaulting, reviewValidation,
} from '../../src/webhook/admission';
import { ReviewOptions, admissionReviewOf } from '../util/admission';
import {
  VALID_FUNCTIONS, VALID_FUNCTIONS_1_13_0, brokenFunction, ruleFailureCases, rulesWithoutFailure, validFunction,
} from '../util/function-rule-cases';

/** The request of an AdmissionReview about `object`, decoded as the server decodes it. */
function requestOf(object: unknown, options: ReviewOptions = {}): AdmissionRequest {
  return decodeAdmissionReview(JSON.stringify(admissionReviewOf(object, { uid: 'e911857d-c318-11e8-bbad-025000000001', ...options })));
}

/** The error decodeAdmissionReview throws for a body. */
function decodeError(body: string | Buffer): AdmissionRequestError {
  try {
    decodeAdmissionReview(body);
  } catch (e) {
    if (e instanceof AdmissionRequestError) return e;
    throw e;
  }
  throw new Error('decodeAdmissionReview accepted the body');
}

/** A review's JSON with its request changed. */
function reviewWith(change: (review: any) => void): string {
  const review = admissionReviewOf(validFunction());
  change(review);
  return JSON.stringify(review);
}

/** A Function with nothing but its required fields. */
function bareFunction(runtime: string, inline: Record<string, unknown>): any {
  return { apiVersion: 'serverless.kyma-project.io/v1alpha2', kind: 'Function', metadata: { name: 'bare', namespace: 'default' }, spec: { runtime, source: { inline } } };
}

const NODE_SOURCE = 'exports.main = () => "ok"';
const PYTHON_SOURCE = 'def main(event, context):\n    return "ok"\n';

/** Applies a patch to a copy of the document. */
function patched(document: unknown, patch: readonly Operation[]): any {
  return applyPatch(structuredClone(document), patch, true, false).newDocument;
}

describe('decodeAdmissionReview', () => {
  test('decodes the request of an AdmissionReview about a Function', () => {
    const fn = validFunction();
    const request = decodeAdmissionReview(JSON.stringify(admissionReviewOf(fn, { uid: 'abc-123' })));
    expect(request).toMatchObject({
      uid: 'abc-123',
      kind: { group: 'serverless.kyma-project.io', version: 'v1alpha2', kind: 'Function' },
      operation: 'CREATE',
      name: 'greeter',
      namespace: 'default',
      object: fn,
    });
  });

  test('decodes a Buffer, multi-byte characters and all', () => {
    const fn = validFunction();
    fn.spec.source.inline.source = 'exports.main = () => "héllo wörld €"';
    const request = decodeAdmissionReview(Buffer.from(JSON.stringify(admissionReviewOf(fn)), 'utf8'));
    expect((request.object as any).spec.source.inline.source).toBe('exports.main = () => "héllo wörld €"');
  });

  test.each(['DELETE', 'CONNECT'])('decodes a %s without an object', operation => {
    const body = reviewWith(r => { r.request.operation = operation; r.request.oldObject = r.request.object; r.request.object = null; });
    expect(decodeAdmissionReview(body).operation).toBe(operation);
  });

  test.each<[string, string, string | RegExp]>([
    ['the body is not JSON', '{"apiVersion": ', /^The request body is not valid JSON: /],
    ['the body is empty', '', /^The request body is not valid JSON: /],
    ['the body is a JSON array', '[{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}]', 'Expected an AdmissionReview of admission.k8s.io/v1, got an array'],
    ['the body is a JSON string', '"AdmissionReview"', 'Expected an AdmissionReview of admission.k8s.io/v1, got string'],
    ['the body is a JSON number', '42', 'Expected an AdmissionReview of admission.k8s.io/v1, got number'],
    ['the body is null', 'null', 'Expected an AdmissionReview of admission.k8s.io/v1, got null'],
    ['the review is of admission.k8s.io/v1beta1', reviewWith(r => { r.apiVersion = 'admission.k8s.io/v1beta1'; }),
      'Expected an AdmissionReview of admission.k8s.io/v1, got admission.k8s.io/v1beta1 AdmissionReview'],
    ['the body is a ConversionReview', JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid: 'u' } }),
      'Expected an AdmissionReview of admission.k8s.io/v1, got apiextensions.k8s.io/v1 ConversionReview'],
    ['the body is a Function itself', JSON.stringify(validFunction()),
      'Expected an AdmissionReview of admission.k8s.io/v1, got serverless.kyma-project.io/v1alpha2 Function'],
    ['the review has no request', JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }), 'The AdmissionReview has no request'],
    ['the request is a string', reviewWith(r => { r.request = 'CREATE'; }), 'The AdmissionReview has no request'],
    ['the request has no uid', reviewWith(r => { delete r.request.uid; }), 'The AdmissionReview\'s request has no uid'],
    ['the uid is empty', reviewWith(r => { r.request.uid = ''; }), 'The AdmissionReview\'s request has no uid'],
    ['the uid is a number', reviewWith(r => { r.request.uid = 42; }), 'The AdmissionReview\'s request has no uid'],
    ['the request is about an apps/v1 Deployment', reviewWith(r => { r.request.kind = { group: 'apps', version: 'v1', kind: 'Deployment' }; }),
      'This webhook admits only serverless.kyma-project.io Functions, got apps/v1 Deployment'],
    ['the request is about a core v1 Pod', reviewWith(r => { r.request.kind = { group: '', version: 'v1', kind: 'Pod' }; }),
      'This webhook admits only serverless.kyma-project.io Functions, got v1 Pod'],
    ['the request has no kind', reviewWith(r => { delete r.request.kind; }), 'This webhook admits only serverless.kyma-project.io Functions, got no kind'],
    ['the request is about another kind of the group', reviewWith(r => { r.request.kind.kind = 'GitRepository'; }),
      'This webhook admits only serverless.kyma-project.io Functions, got serverless.kyma-project.io/v1alpha2 GitRepository'],
    ['the Function is of version v1alpha1', reviewWith(r => { r.request.kind.version = 'v1alpha1'; }),
      'This webhook admits Functions of version v1alpha2 only, got v1alpha1'],
    ['the operation is PATCH', reviewWith(r => { r.request.operation = 'PATCH'; }),
      'Unknown operation "PATCH"; expected one of CREATE, UPDATE, DELETE, CONNECT'],
    ['the operation is in lower case', reviewWith(r => { r.request.operation = 'create'; }),
      'Unknown operation "create"; expected one of CREATE, UPDATE, DELETE, CONNECT'],
    ['the operation is missing', reviewWith(r => { delete r.request.operation; }),
      'Unknown operation undefined; expected one of CREATE, UPDATE, DELETE, CONNECT'],
    ['a CREATE carries no object', reviewWith(r => { r.request.object = null; }), 'A CREATE review must carry the object'],
    ['a CREATE carries an array as its object', reviewWith(r => { r.request.object = [validFunction()]; }), 'A CREATE review must carry the object'],
    ['an UPDATE carries no object', reviewWith(r => { r.request.operation = 'UPDATE'; r.request.oldObject = r.request.object; delete r.request.object; }),
      'An UPDATE review must carry the object'],
  ])('fails when %s', (_what, body, message) => {
    const error = decodeError(body);
    expect(error).toBeInstanceOf(AdmissionRequestError);
    expect(error.name).toBe('AdmissionRequestError');
    expect(error.statusCode).toBe(400);
    if (typeof message === 'string') expect(error.message).toBe(message);
    else expect(error.message).toMatch(message);
  });
});

describe('admissionReview', () => {
  test('wraps a response into an admission.k8s.io/v1 AdmissionReview', () => {
    expect(admissionReview({ uid: 'u', allowed: true })).toEqual({ apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview', response: { uid: 'u', allowed: true } });
    expect(ADMISSION_API_VERSION).toBe('admission.k8s.io/v1');
  });
});

describe('reviewValidation', () => {
  test.each(VALID_FUNCTIONS.map(fn => [fn.metadata.name, fn]))('allows %s', (_name, fn) => {
    const request = requestOf(fn, { uid: 'allowed-uid' });
    expect(reviewValidation(request)).toEqual({ response: { uid: 'allowed-uid', allowed: true }, violations: [], omitted: 0 });
  });

  test('denies a Function with one violation with 422 and the violation on the message\'s line', () => {
    const fn = validFunction();
    fn.spec.runtime = 'nodejs18';
    const violations = validateFunction(fn);
    expect(violations).toHaveLength(1);
    const { response } = reviewValidation(requestOf(fn, { uid: 'denied-uid' }));
    expect(response).toEqual({
      uid: 'denied-uid',
      allowed: false,
      status: {
        code: 422,
        reason: 'Invalid',
        message: 'Function "greeter" is invalid: spec.runtime: Unsupported value: "nodejs18": supported values: "nodejs20", "nodejs22", "python312"; use one of the supported values',
        details: {
          name: 'greeter',
          group: FUNCTION_GROUP,
          kind: 'functions',
          causes: [{ field: 'spec.runtime', message: violations[0].message, reason: 'openapi.enum' }],
        },
      },
    });
    expect(response.status!.message).toBe(`Function "greeter" is invalid: ${describeViolation(violations[0])}`);
  });

  test('denies a Function with several violations, listing each on its own line with one cause each', () => {
    const fn = validFunction();
    fn.metadata.name = '1greeter';
    fn.spec.runtime = 'nodejs18';
    fn.spec.secretMounts[0].mountPath = '/tmp';
    const violations = validateFunction(fn);
    expect(violations.map(v => v.rule).sort()).toEqual(['functionName', 'mountPath', 'openapi.enum']);
    const result = reviewValidation(requestOf(fn));
    expect(result.violations).toEqual(violations);
    expect(result.response.allowed).toBe(false);
    expect(result.response.status!.code).toBe(422);
    expect(result.response.status!.message).toBe(`Function "1greeter" is invalid:\n- ${violations.map(describeViolation).join('\n- ')}`);
    expect(result.response.status!.details!.causes).toEqual(violations.map(v => ({ field: v.path, message: v.message, reason: v.rule })));
  });

  test('has a failing case for every rule of FUNCTION_RULES', () => {
    expect(rulesWithoutFailure()).toEqual([]);
  });

  test.each(ruleFailureCases())('denies a Function when $failsWhen ($id)', ({ id }) => {
    const fn = brokenFunction(id);
    const violations = validateFunction(fn);
    expect(violations.map(v => v.rule)).toContain(id);
    const { response } = reviewValidation(requestOf(fn, { uid: `uid-${id}` }));
    expect(response.uid).toBe(`uid-${id}`);
    expect(response.allowed).toBe(false);
    expect(response.status).toMatchObject({ code: 422, reason: 'Invalid', details: { name: fn.metadata.name, group: FUNCTION_GROUP, kind: 'functions' } });
    for (const v of violations) expect(response.status!.message).toContain(clip(describeViolation(v), REVIEW_LIMITS.maxLineChars).replace(/…\[\d+ more chars\]$/, ''));
    expect(response.status!.details!.causes).toContainEqual({ field: violations.find(v => v.rule === id)!.path, message: clip(violations.find(v => v.rule === id)!.message, REVIEW_LIMITS.maxCauseChars), reason: id });
    expect(response.status!.details!.causes).toHaveLength(violations.length);
  });

  test('names a Function with only a generateName by the request\'s name', () => {
    const fn = validFunction();
    delete fn.metadata.name;
    fn.metadata.generateName = 'greeter-';
    fn.spec.runtime = 'nodejs18';
    const { response } = reviewValidation(requestOf(fn, { name: 'greeter-x7k2p' }));
    expect(response.status!.message).toMatch(/^Function "greeter-x7k2p" is invalid: spec\.runtime: /);
    expect(response.status!.details!.name).toBe('greeter-x7k2p');
  });

  test('denies a Function below the stack\'s minimum requests', () => {
    const options = { functionMinRequest: { cpu: '300m', memory: '300Mi' } };
    const request = requestOf(validFunction());
    expect(reviewValidation(request).response.allowed).toBe(true);
    const { response, violations } = reviewValidation(request, options);
    expect(response.allowed).toBe(false);
    expect(violations.map(v => v.rule)).toEqual(['functionMinimum', 'functionMinimum']);
    expect(response.status!.message).toContain('spec.resourceConfiguration.function.resources.requests.cpu: Invalid value: "250m": must be at least 300m');
  });

  test('allows a DELETE of an invalid Function', () => {
    const request = requestOf(null, { operation: 'DELETE', oldObject: brokenFunction('openapi.enum') });
    expect(reviewValidation(request)).toEqual({ response: { uid: request.uid, allowed: true }, violations: [], omitted: 0 });
  });

  test('allows a CONNECT', () => {
    const request = requestOf(null, { operation: 'CONNECT', oldObject: validFunction() });
    expect(reviewValidation(request).response.allowed).toBe(true);
  });

  test('allows an UPDATE that leaves an invalid spec as it is (labels, finalizers)', () => {
    const stored = brokenFunction('openapi.enum');
    const updated = structuredClone(stored);
    updated.metadata.labels = { ...updated.metadata.labels, team: 'shop' };
    updated.metadata.finalizers = ['example.com/cleanup'];
    expect(validateFunction(updated)).not.toEqual([]);
    expect(reviewValidation(requestOf(updated, { operation: 'UPDATE', oldObject: stored }))).toEqual({
      response: { uid: 'e911857d-c318-11e8-bbad-025000000001', allowed: true }, violations: [], omitted: 0,
    });
  });

  test('denies an UPDATE that changes an invalid spec, even if only elsewhere', () => {
    const stored = brokenFunction('openapi.enum');
    const updated = structuredClone(stored);
    updated.spec.scaleConfig = { minReplicas: 1, maxReplicas: 3 };
    const { response } = reviewValidation(requestOf(updated, { operation: 'UPDATE', oldObject: stored }));
    expect(response.allowed).toBe(false);
    expect(response.status!.details!.causes.map(c => c.reason)).toEqual(['openapi.enum']);
  });

  test('denies an UPDATE that makes a valid Function invalid', () => {
    const stored = validFunction();
    const { response } = reviewValidation(requestOf(brokenFunction('reservedEnvs'), { operation: 'UPDATE', oldObject: stored }));
    expect(response.allowed).toBe(false);
    expect(response.status!.details!.causes.map(c => c.reason)).toEqual(['reservedEnvs']);
  });

  test('denies an UPDATE without the stored object when the Function is invalid', () => {
    const { response } = reviewValidation(requestOf(brokenFunction('openapi.enum'), { operation: 'UPDATE' }));
    expect(response.allowed).toBe(false);
  });

  test('allows an UPDATE of a Function being deleted, even when it changes an invalid spec', () => {
    const stored = brokenFunction('openapi.enum');
    const updated = structuredClone(stored);
    updated.spec.replicas = -1;
    updated.metadata.deletionTimestamp = '2025-01-01T00:00:00Z';
    updated.metadata.finalizers = [];
    expect(reviewValidation(requestOf(updated, { operation: 'UPDATE', oldObject: stored })).response.allowed).toBe(true);
  });

  test('denies a CREATE even when the object claims a deletionTimestamp', () => {
    const fn = brokenFunction('openapi.enum');
    fn.metadata.deletionTimestamp = '2025-01-01T00:00:00Z';
    expect(reviewValidation(requestOf(fn)).response.allowed).toBe(false);
  });
});

describe('reviewDefaulting', () => {
  const defaults = DEFAULT_FUNCTION_DEFAULTS;

  test('adds one replica, the L profile and the normal build profile to a Function that gives neither profiles nor resources', () => {
    const fn = bareFunction('python312', { source: PYTHON_SOURCE });
    const { patch } = reviewDefaulting(requestOf(fn), defaults);
    expect(patch).toHaveLength(2);
    expect(patch).toEqual(expect.arrayContaining([
      { op: 'add', path: '/spec/replicas', value: 1 },
      { op: 'add', path: '/spec/resourceConfiguration', value: { function: { profile: 'L' }, build: { profile: 'normal' } } },
    ]));
  });

  test('writes the configured defaults', () => {
    const custom: FunctionDefaults = { replicas: 3, functionProfile: FunctionProfile.S, buildProfile: BuildProfile.FAST };
    const fn = bareFunction('python312', { source: PYTHON_SOURCE });
    const { patch } = reviewDefaulting(requestOf(fn), custom);
    expect(patched(fn, patch).spec).toMatchObject({ replicas: 3, resourceConfiguration: { function: { profile: 'S' }, build: { profile: 'fast' } } });
  });

  test('fills in only the build profile when the Function names its own profile', () => {
    const fn = bareFunction('python312', { source: PYTHON_SOURCE });
    fn.spec.replicas = 2;
    fn.spec.resourceConfiguration = { function: { profile: 'M' } };
    const { patch } = reviewDefaulting(requestOf(fn), defaults);
    expect(patched(fn, patch).spec.resourceConfiguration).toEqual({ function: { profile: 'M' }, build: { profile: 'normal' } });
    expect(patch.map(op => op.path)).not.toContain('/spec/replicas');
  });

  test('leaves explicit resources alone', () => {
    const fn = validFunction('greeter');
    const { patch } = reviewDefaulting(requestOf(fn), defaults);
    expect(patch).toEqual([{ op: 'add', path: '/spec/replicas', value: 1 }]);
  });

  test('leaves explicit profiles alone', () => {
    const fn = validFunction('autoscaled');
    fn.spec.source.inline.dependencies = '{}';
    const { patch } = reviewDefaulting(requestOf(fn), defaults);
    expect(patch).toEqual([{ op: 'add', path: '/spec/replicas', value: 1 }]);
  });

  test('leaves zero replicas alone', () => {
    const { patch } = reviewDefaulting(requestOf(validFunction('externally-scaled')), defaults);
    expect(patch.map(op => op.path)).toEqual(['/spec/resourceConfiguration']);
  });

  test.each<[string, Record<string, unknown>, Operation]>([
    ['absent', { source: NODE_SOURCE }, { op: 'add', path: '/spec/source/inline/dependencies', value: '{}' }],
    ['empty', { source: NODE_SOURCE, dependencies: '' }, { op: 'replace', path: '/spec/source/inline/dependencies', value: '{}' }],
    ['blank', { source: NODE_SOURCE, dependencies: ' \n\t\n' }, { op: 'replace', path: '/spec/source/inline/dependencies', value: '{}' }],
  ])('writes {} for %s inline Node.js dependencies', (_what, inline, op) => {
    for (const runtime of ['nodejs20', 'nodejs22']) {
      const { patch } = reviewDefaulting(requestOf(bareFunction(runtime, inline)), defaults);
      expect(patch).toContainEqual(op);
    }
  });

  test('leaves Node.js dependencies that are given alone', () => {
    const { patch } = reviewDefaulting(requestOf(bareFunction('nodejs22', { source: NODE_SOURCE, dependencies: '{"dependencies":{}}' })), defaults);
    expect(patch.map(op => op.path)).not.toContain('/spec/source/inline/dependencies');
  });

  test.each<[string, Record<string, unknown>]>([
    ['absent', { source: PYTHON_SOURCE }],
    ['empty', { source: PYTHON_SOURCE, dependencies: '' }],
    ['blank', { source: PYTHON_SOURCE, dependencies: '  ' }],
  ])('leaves %s Python dependencies alone', (_what, inline) => {
    const fn = bareFunction('python312', inline);
    const { patch } = reviewDefaulting(requestOf(fn), defaults);
    expect(patch.map(op => op.path)).not.toContain('/spec/source/inline/dependencies');
    expect(patched(fn, patch).spec.source).toEqual(fn.spec.source);
  });

  test('adds no dependencies to a Node.js Function from Git', () => {
    const fn = validFunction('orders');
    const after = patched(fn, reviewDefaulting(requestOf(fn), defaults).patch);
    expect(after.spec.source).toEqual(fn.spec.source);
  });

  test.each([
    ...VALID_FUNCTIONS.map(fn => [fn.metadata.name, fn]),
    ['a bare Node.js Function', bareFunction('nodejs20', { source: NODE_SOURCE })],
    ['a bare Python Function', bareFunction('python312', { source: PYTHON_SOURCE })],
    ['a Function with an empty resource configuration', (() => {
      const fn = bareFunction('nodejs22', { source: NODE_SOURCE });
      fn.spec.resourceConfiguration = {};
      return fn;
    })()],
  ])('patches %s into exactly defaultFunction() of it, leaving the request as it was', (_name, fn) => {
    const request = requestOf(fn);
    const before = structuredClone(request.object);
    const { patch, response } = reviewDefaulting(request, defaults);
    expect(request.object).toEqual(before);
    expect(patched(fn, patch)).toEqual(defaultFunction(fn, defaults));
    expect(response.allowed).toBe(true);
  });

  test.each(VALID_FUNCTIONS.map(fn => [fn.metadata.name, fn]))('patches %s into a valid Function', (_name, fn) => {
    const { patch } = reviewDefaulting(requestOf(fn), defaults);
    expect(validateFunction(patched(fn, patch))).toEqual([]);
  });

  test('adds apiVersion v1 to each fieldRef without one, so that the controller\'s Deployment is what the API server stores', () => {
    const fn = validFunction('greeter');
    delete fn.spec.env[3].valueFrom.fieldRef.apiVersion;
    fn.spec.env.push({ name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } });
    const { patch } = reviewDefaulting(requestOf(fn), defaults);
    const result = patched(fn, patch);
    expect(result.spec.env[3].valueFrom.fieldRef).toEqual({ apiVersion: 'v1', fieldPath: 'metadata.name' });
    expect(result.spec.env[5].valueFrom.fieldRef).toEqual({ apiVersion: 'v1', fieldPath: 'spec.nodeName' });
    expect(serverDefaultedFields(result.spec.env)).toEqual([]);
    expect(validateFunction(result)).toEqual([]);
  });

  test('leaves a fieldRef\'s own apiVersion alone', () => {
    const fn = validFunction('greeter');
    fn.spec.env[3].valueFrom.fieldRef.apiVersion = 'v2';
    const { patch } = reviewDefaulting(requestOf(fn), defaults);
    expect(patch.filter(op => op.path.startsWith('/spec/env'))).toEqual([]);
  });

  describe('on UPDATE, what an earlier defaulting left behind', () => {
    const RESOURCES = { requests: { cpu: '300m', memory: '300Mi' }, limits: { cpu: '900m', memory: '900Mi' } };
    const stored = () => defaultFunction(bareFunction('python312', { source: PYTHON_SOURCE }), defaults);
    const update = (change: (fn: any) => void, old: any = stored()) => {
      const fn = structuredClone(old);
      change(fn);
      return { fn, ...reviewDefaulting(requestOf(fn, { operation: 'UPDATE', oldObject: old }), defaults) };
    };

    test('drops a defaulted profile when the Function moves to resources, so that the update is valid', () => {
      // What server-side apply and kubectl apply merge: the new resources beside the profile nobody applied.
      const { fn, patch } = update(f => { f.spec.resourceConfiguration.build.resources = RESOURCES; });
      expect(patch).toEqual([{ op: 'remove', path: '/spec/resourceConfiguration/build/profile' }]);
      expect(patched(fn, patch).spec.resourceConfiguration).toEqual({ function: { profile: 'L' }, build: { resources: RESOURCES } });
      expect(validateFunction(patched(fn, patch))).toEqual([]);
    });

    test('drops both defaulted profiles when both parts move to resources', () => {
      const { fn, patch } = update(f => {
        f.spec.resourceConfiguration.function.resources = { requests: { cpu: '50m', memory: '64Mi' }, limits: { cpu: '100m', memory: '128Mi' } };
        f.spec.resourceConfiguration.build.resources = RESOURCES;
      });
      expect(patched(fn, patch).spec.resourceConfiguration.function).not.toHaveProperty('profile');
      expect(patched(fn, patch).spec.resourceConfiguration.build).not.toHaveProperty('profile');
    });

    test('keeps a profile and resources given together on CREATE: the CRD refuses them, as it should', () => {
      const fn = stored();
      fn.spec.resourceConfiguration.build.resources = RESOURCES;
      expect(reviewDefaulting(requestOf(fn), defaults).patch).toEqual([]);
    });

    test('keeps a profile that changed along with the resources: the Function asks for both', () => {
      const { patch } = update(f => { f.spec.resourceConfiguration.build = { profile: 'fast', resources: RESOURCES }; });
      expect(patch).toEqual([]);
    });

    test('keeps a profile beside resources that were there before', () => {
      const old = stored();
      old.spec.resourceConfiguration.build = { profile: 'normal', resources: RESOURCES };
      expect(update(f => { f.spec.replicas = 2; }, old).patch).toEqual([]);
    });

    test('drops the {} dependencies of a Node.js Function that became a Python one', () => {
      const old = defaultFunction(bareFunction('nodejs22', { source: 'exports.main = () => 1' }), defaults);
      expect(old.spec.source.inline.dependencies).toBe('{}');
      const { fn, patch } = update(f => {
        f.spec.runtime = 'python312';
        f.spec.source.inline.source = PYTHON_SOURCE;
      }, old);
      expect(patch).toContainEqual({ op: 'remove', path: '/spec/source/inline/dependencies' });
      expect(patched(fn, patch).spec.source.inline).toEqual({ source: PYTHON_SOURCE });
    });
  });

  test('encodes the patch as base64 JSON, with patchType JSONPatch', () => {
    const { patch, response } = reviewDefaulting(requestOf(validFunction('weather'), { uid: 'patch-uid' }), defaults);
    expect(patch.length).toBeGreaterThan(0);
    expect(response).toEqual({ uid: 'patch-uid', allowed: true, patchType: 'JSONPatch', patch: expect.any(String) });
    expect(JSON.parse(Buffer.from(response.patch!, 'base64').toString('utf8'))).toEqual(patch);
  });

  test('gives no patch for a Function that is already defaulted', () => {
    for (const fn of VALID_FUNCTIONS) {
      const result = reviewDefaulting(requestOf(defaultFunction(fn, defaults), { uid: 'done' }), defaults);
      expect({ name: fn.metadata.name, ...result }).toEqual({ name: fn.metadata.name, response: { uid: 'done', allowed: true }, patch: [] });
    }
  });

  test('defaults on UPDATE too', () => {
    const fn = bareFunction('python312', { source: PYTHON_SOURCE });
    const { patch } = reviewDefaulting(requestOf(fn, { operation: 'UPDATE', oldObject: defaultFunction(fn) }), defaults);
    expect(patch.map(op => op.path).sort()).toEqual(['/spec/replicas', '/spec/resourceConfiguration']);
  });

  test.each(['DELETE', 'CONNECT'])('gives no patch on %s', operation => {
    const request = requestOf(null, { operation, oldObject: bareFunction('python312', { source: PYTHON_SOURCE }) });
    expect(reviewDefaulting(request, defaults)).toEqual({ response: { uid: request.uid, allowed: true }, patch: [] });
  });

  test('gives no patch for a Function being deleted', () => {
    const fn = bareFunction('python312', { source: PYTHON_SOURCE });
    fn.metadata.deletionTimestamp = '2025-01-01T00:00:00Z';
    expect(reviewDefaulting(requestOf(fn, { operation: 'UPDATE', oldObject: fn }), defaults).patch).toEqual([]);
  });

  test('gives no patch for an object that is no v1alpha2 Function, or has no spec', () => {
    const alpha1 = { ...bareFunction('python312', { source: PYTHON_SOURCE }), apiVersion: 'serverless.kyma-project.io/v1alpha1' };
    const noSpec = { apiVersion: 'serverless.kyma-project.io/v1alpha2', kind: 'Function', metadata: { name: 'x' } };
    expect(reviewDefaulting(requestOf(alpha1), defaults).patch).toEqual([]);
    expect(reviewDefaulting(requestOf(noSpec), defaults).patch).toEqual([]);
  });

  // `resources: {}` counts as given: a profile beside it would break the CRD's "Use profile or resources".
  test('keeps a Function with empty resources valid', () => {
    const fn = bareFunction('python312', { source: PYTHON_SOURCE });
    fn.spec.resourceConfiguration = { function: { resources: {} }, build: { resources: {} } };
    expect(validateFunction(fn)).toEqual([]);
    const { patch } = reviewDefaulting(requestOf(fn), defaults);
    expect(validateFunction(patched(fn, patch))).toEqual([]);
  });
});

describe('reviews under release 1.13.0', () => {
  const V1_13_0 = ServerlessRelease.V1_13_0;
  const R = { release: V1_13_0 };
  const defaults = DEFAULT_FUNCTION_DEFAULTS;

  test.each(ruleFailureCases(V1_13_0))('denies a Function when $failsWhen ($id)', ({ id }) => {
    const fn = brokenFunction(id);
    const violations = validateFunction(fn, R);
    expect(violations.map(v => v.rule)).toContain(id);
    const { response } = reviewValidation(requestOf(fn, { uid: `uid-${id}` }), R);
    expect(response.allowed).toBe(false);
    for (const v of violations) expect(response.status!.message).toContain(clip(describeViolation(v), REVIEW_LIMITS.maxLineChars).replace(/…\[\d+ more chars\]$/, ''));
  });

  test('allows what 1.11.1 denies: nodejs24 and security contexts', () => {
    const fn = validFunction('hello24');
    expect(reviewValidation(requestOf(fn), R).response.allowed).toBe(true);
    expect(reviewValidation(requestOf(fn)).response.allowed).toBe(false);
  });

  test('warns of nodejs20 whether it allows or denies, and 1.11.1 never does', () => {
    const fn = validFunction('legacy20');
    expect(reviewValidation(requestOf(fn), R).response.warnings).toEqual([expect.stringContaining('"nodejs20" reached its end of life in April 2026')]);
    const denied = reviewValidation(requestOf({ ...fn, spec: { ...fn.spec, replicas: -1 } }), R).response;
    expect(denied.allowed).toBe(false);
    expect(denied.warnings).toHaveLength(1);
    expect(reviewValidation(requestOf(fn)).response).toEqual({ uid: 'e911857d-c318-11e8-bbad-025000000001', allowed: true });
  });

  test('defaults no build profile, and the rest as under 1.11.1', () => {
    const fn = bareFunction('nodejs24', { source: NODE_SOURCE });
    const { patch } = reviewDefaulting(requestOf(fn), defaults, V1_13_0);
    const after = patched(fn, patch);
    expect(after.spec).toEqual({
      runtime: 'nodejs24',
      replicas: 1,
      resourceConfiguration: { function: { profile: defaults.functionProfile } },
      source: { inline: { source: NODE_SOURCE, dependencies: '{}' } },
    });
    expect(validateFunction(after, R)).toEqual([]);
    expect(defaultFunction(fn, defaults, undefined, V1_13_0)).toEqual(after);
  });

  test.each(VALID_FUNCTIONS_1_13_0.map(fn => [fn.metadata.name, fn]))('keeps %s valid and defaulting it twice changes nothing', (_name, fn) => {
    const once = defaultFunction(fn, defaults, undefined, V1_13_0);
    expect(validateFunction(once, R)).toEqual([]);
    expect(defaultFunction(once, defaults, undefined, V1_13_0)).toEqual(once);
  });

  test('removes, with a warning, a build profile that 1.11.1\'s defaulting left in a stored Function', () => {
    const stored = defaultFunction(bareFunction('nodejs22', { source: NODE_SOURCE }), defaults);
    expect(stored.spec.resourceConfiguration.build).toEqual({ profile: defaults.buildProfile });
    const updated = { ...stored, spec: { ...stored.spec, replicas: 3 } };
    const { patch, response } = reviewDefaulting(requestOf(updated, { operation: 'UPDATE', oldObject: stored }), defaults, V1_13_0);
    expect(patch).toEqual([{ op: 'remove', path: '/spec/resourceConfiguration/build' }]);
    expect(response.warnings).toEqual([expect.stringMatching(/^spec\.resourceConfiguration\.build: removed: release 1\.13\.0 builds nothing/)]);
    expect(validateFunction(patched(updated, patch), R)).toEqual([]);
  });

  test('keeps build resources a change brings, so that validation refuses them with the reason', () => {
    const stored = defaultFunction(bareFunction('nodejs22', { source: NODE_SOURCE }), defaults, undefined, V1_13_0);
    const explicit = { ...stored, spec: { ...stored.spec, resourceConfiguration: { ...stored.spec.resourceConfiguration, build: { profile: 'fast' } } } };
    expect(reviewDefaulting(requestOf(explicit, { operation: 'UPDATE', oldObject: stored }), defaults, V1_13_0).patch).toEqual([]);
    expect(reviewDefaulting(requestOf(explicit), defaults, V1_13_0).patch).toEqual([]);
    const resources = { ...explicit, spec: { ...explicit.spec, resourceConfiguration: { build: { resources: { limits: { cpu: '1' } } } } } };
    expect(defaultFunction(resources, defaults, resources, V1_13_0).spec.resourceConfiguration.build).toEqual({ resources: { limits: { cpu: '1' } } });
    expect(validateFunction(explicit, R).map(v => v.rule)).toEqual(['buildResources']);
  });
});
