/**
 * AdmissionReview requests as the API server sends them, and the upstream sample Functions, for
 * the webhook's tests.
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { FUNCTION_GROUP, FUNCTION_KIND, FUNCTION_VERSION } from '../../src/api';
import { HAS_UPSTREAM_REFERENCE, UPSTREAM_REFERENCE, loadYamlDocuments } from './fixtures';

/** What to put in a review besides the object. */
export interface ReviewOptions {
  /** @default a random UUID */
  readonly uid?: string;
  /** @default 'CREATE' */
  readonly operation?: string;
  /** The stored object (UPDATE, DELETE). */
  readonly oldObject?: unknown;
  /** @default the Function's group, version and kind */
  readonly kind?: { group: string; version: string; kind: string };
  /** @default the object's name */
  readonly name?: string;
  /** @default the object's namespace, or 'default' */
  readonly namespace?: string;
}

const OPTIONS_KIND: Record<string, string> = { CREATE: 'CreateOptions', UPDATE: 'UpdateOptions', DELETE: 'DeleteOptions' };

/**
 * An `admission.k8s.io/v1` AdmissionReview about a Function, shaped like the API server's
 * (`oldObject: null` on CREATE, `object: null` on DELETE).
 */
export function admissionReviewOf(object: unknown, options: ReviewOptions = {}): any {
  const operation = options.operation ?? 'CREATE';
  const metadata = (object as any)?.metadata ?? (options.oldObject as any)?.metadata ?? {};
  const gvk = { group: FUNCTION_GROUP, version: FUNCTION_VERSION, kind: FUNCTION_KIND };
  const gvr = { group: FUNCTION_GROUP, version: FUNCTION_VERSION, resource: 'functions' };
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: options.uid ?? randomUUID(),
      kind: options.kind ?? gvk,
      resource: gvr,
      requestKind: options.kind ?? gvk,
      requestResource: gvr,
      name: options.name ?? metadata.name ?? '',
      namespace: options.namespace ?? metadata.namespace ?? 'default',
      operation,
      userInfo: { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] },
      object: object ?? null,
      oldObject: options.oldObject ?? null,
      dryRun: false,
      options: OPTIONS_KIND[operation] ? { apiVersion: 'meta.k8s.io/v1', kind: OPTIONS_KIND[operation] } : null,
    },
  };
}

/** One document of an upstream sample file. */
export interface UpstreamSample {
  /** The file's name, such as sample-function-git-nodejs20.yaml. */
  readonly file: string;
  /** The Function. */
  readonly fn: any;
}

/** Every Function of /work/shared/reference/upstream/sample-function-*.yaml; none when that folder is missing. */
export function upstreamSamples(): UpstreamSample[] {
  if (!HAS_UPSTREAM_REFERENCE) return [];
  return fs.readdirSync(UPSTREAM_REFERENCE).filter(f => f.startsWith('sample-function-') && f.endsWith('.yaml')).sort()
    .flatMap(file => loadYamlDocuments(path.join(UPSTREAM_REFERENCE, file)).map(fn => ({ file, fn })));
}

/** The upstream sample that mounts a Secret by the placeholder name `SECRET_NAME`. */
export const PLACEHOLDER_SAMPLE = 'sample-function-inline-nodejs20-full.yaml';

/** The placeholder, and the real Secret name tests put in its place. */
export const PLACEHOLDER_SECRET = { placeholder: 'SECRET_NAME', real: 'function-secret' } as const;

/** A copy of a sample with its placeholder Secret name (if any) replaced by a real one. */
export function withRealSecretName(fn: any): any {
  const copy = structuredClone(fn);
  for (const mount of copy.spec?.secretMounts ?? []) {
    if (mount.secretName === PLACEHOLDER_SECRET.placeholder) mount.secretName = PLACEHOLDER_SECRET.real;
  }
  return copy;
}
