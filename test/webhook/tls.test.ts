import { X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CoreV1Api, V1Secret } from '@kubernetes/client-node';
import {
  CertificatePair, certificateProblems, createCertificateAuthority, createServingCertificate, expiryOf, splitPemBundle,
} from '../../src/webhook/certificates';
import { SelfManagedTlsConfig, WEBHOOK_NAMES, resolveWebhookConfig, serviceDnsNames } from '../../src/webhook/config';
import { KubeClient, kubeconfigConnection } from '../../src/webhook/kube-client';
import { LogLevel } from '../../src/log-level';
import { createLogger } from '../../src/webhook/log';
import { FIELD_MANAGER, FileCertificates, SECRET_KEYS, SelfManagedCertificates, SelfManagedCertificatesOptions } from '../../src/webhook/tls';
import {
  FakeKubeApi, KubeObject, MUTATING_WEBHOOK_CONFIGURATIONS, SECRETS, VALIDATING_WEBHOOK_CONFIGURATIONS, kubeConfigFor, objectPath, writeKubeconfig,
} from '../util/fake-kube-api';

const DAY = 24 * 60 * 60 * 1000;
// In the past: the clock-driven tests do not care, and FileCertificates (real time) gets an expired pair.
const T0 = new Date('2024-03-01T12:00:00Z');
const NS = 'kyma-system';
const CONFIG: SelfManagedTlsConfig = resolveWebhookConfig({ selfManagedTls: { namespace: NS } }).selfManagedTls!;
const DNS_NAMES = serviceDnsNames(WEBHOOK_NAMES.service, NS);
const SECRET = `${NS}/${WEBHOOK_NAMES.secret}`;
const SECRET_PATH = objectPath(SECRETS, WEBHOOK_NAMES.secret, NS);
const MUTATING_PATH = objectPath(MUTATING_WEBHOOK_CONFIGURATIONS, WEBHOOK_NAMES.mutating);
const VALIDATING_PATH = objectPath(VALIDATING_WEBHOOK_CONFIGURATIONS, WEBHOOK_NAMES.validating);
const OTHER_CA_BUNDLE = Buffer.from('another CA').toString('base64');

interface LogLine {
  level: string;
  msg: string;
  [key: string]: any;
}

/** A logger whose lines the test reads. */
function collectingLogger() {
  const lines: LogLine[] = [];
  const logger = createLogger(LogLevel.DEBUG, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines, messages: () => lines.map(l => l.msg) };
}

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
const unb64 = (text: string) => Buffer.from(text, 'base64').toString('utf8');
const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256;
/** A bundle as SelfManagedCertificates settles on it (see the splitPemBundle bug in certificates.test.ts). */
const settled = (...pems: string[]) => splitPemBundle(pems.join('')).join('');

interface Contents {
  caBundle: string;
  caKey: string;
  cert: string;
  key: string;
}

function webhook(name: string, clientConfig: object) {
  return {
    name,
    clientConfig,
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    rules: [{ apiGroups: ['serverless.kyma-project.io'], apiVersions: ['v1alpha2'], operations: ['CREATE', 'UPDATE'], resources: ['functions'] }],
  };
}

const ours = (name: string, urlPath: string) => webhook(name, { service: { name: WEBHOOK_NAMES.service, namespace: NS, path: urlPath } });

function mutatingConfiguration(caBundle?: string): KubeObject {
  const our = ours(WEBHOOK_NAMES.mutating, '/defaulting/functions');
  if (caBundle !== undefined) (our.clientConfig as any).caBundle = caBundle;
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: WEBHOOK_NAMES.mutating, labels: { 'app.kubernetes.io/part-of': 'serverless' } },
    webhooks: [
      our,
      // Another service's webhook in the same configuration: never ours to touch.
      webhook('other.example.com', { service: { name: 'other-webhook', namespace: NS, path: '/mutate' }, caBundle: OTHER_CA_BUNDLE }),
      // Our Service's name in another namespace: not ours either.
      webhook('elsewhere.example.com', { service: { name: WEBHOOK_NAMES.service, namespace: 'elsewhere', path: '/mutate' } }),
    ],
  };
}

function validatingConfiguration(caBundle?: string): KubeObject {
  const our = ours(WEBHOOK_NAMES.validating, '/validation/function');
  if (caBundle !== undefined) (our.clientConfig as any).caBundle = caBundle;
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: WEBHOOK_NAMES.validating },
    webhooks: [our, webhook('by-url.example.com', { url: 'https://validator.example.com/validate' })],
  };
}

function secretOf(contents: Partial<Contents>, type = 'kubernetes.io/tls', labels?: { [key: string]: string }): KubeObject {
  const data: { [key: string]: string } = {};
  if (contents.caBundle !== undefined) data[SECRET_KEYS.caBundle] = b64(contents.caBundle);
  if (contents.caKey !== undefined) data[SECRET_KEYS.caKey] = b64(contents.caKey);
  if (contents.cert !== undefined) data[SECRET_KEYS.cert] = b64(contents.cert);
  if (contents.key !== undefined) data[SECRET_KEYS.key] = b64(contents.key);
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name: WEBHOOK_NAMES.secret, namespace: NS, labels }, type, data };
}

/** A waiting helper for timer-driven behaviour: polls until `check` returns something truthy. */
async function waitFor<T>(what: string, check: () => T | undefined | false, timeoutMs = 4000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const result = check();
    if (result) return result;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise(resolve => setTimeout(resolve, 20));
  }
}

const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));

/** The Status body of a client-node ApiException (client-node 1.4 keeps it as text). */
const statusBody = (error: any) => JSON.parse(error.body);

/** A client of the fake API server, as a kubeconfig for it would connect. */
const clientOf = (api: FakeKubeApi) => new KubeClient({ server: api.url, token: api.token, source: 'the fake API server' });

// Generated once.
let ca: CertificatePair;
let serving: CertificatePair;
let expiredCa: CertificatePair;
/** A good Secret's contents, as they settle. */
let stable: Contents;
/** The same, with an expired CA left in the bundle: a reconcile rewrites the Secret without creating keys. */
let withExpiredCa: Contents;

beforeAll(() => {
  ca = createCertificateAuthority(`${WEBHOOK_NAMES.service}-ca`, T0);
  serving = createServingCertificate(ca, DNS_NAMES, T0);
  expiredCa = createCertificateAuthority(`${WEBHOOK_NAMES.service}-ca`, new Date(T0.getTime() - 3651 * DAY));
  stable = { caBundle: settled(ca.cert), caKey: ca.key, cert: serving.cert, key: serving.key };
  withExpiredCa = { ...stable, caBundle: settled(ca.cert, expiredCa.cert) };
});

describe('SelfManagedCertificates', () => {
  let api: FakeKubeApi;
  let log: ReturnType<typeof collectingLogger>;
  let now: Date;
  const clock = () => now;
  const started: SelfManagedCertificates[] = [];

  function replica(config: Partial<SelfManagedTlsConfig> = {}, options: SelfManagedCertificatesOptions = {}): SelfManagedCertificates {
    const instance = new SelfManagedCertificates(clientOf(api), { ...CONFIG, ...config }, log.logger, { clock, ...options });
    started.push(instance);
    return instance;
  }

  function stored(): Contents & { secret: KubeObject } {
    const secret = api.get(SECRET_PATH);
    if (!secret) throw new Error('no Secret');
    const data = secret.data ?? {};
    return {
      secret,
      caBundle: unb64(data[SECRET_KEYS.caBundle]),
      caKey: unb64(data[SECRET_KEYS.caKey]),
      cert: unb64(data[SECRET_KEYS.cert]),
      key: unb64(data[SECRET_KEYS.key]),
    };
  }

  const caBundleOf = (configurationPath: string, webhookIndex = 0): string | undefined =>
    api.get(configurationPath)!.webhooks[webhookIndex].clientConfig.caBundle;

  const writes = () => api.requests.filter(r => r.method !== 'GET');

  beforeEach(async () => {
    api = await FakeKubeApi.start();
    log = collectingLogger();
    now = T0;
    api.put(mutatingConfiguration());
    api.put(validatingConfiguration());
  });

  afterEach(async () => {
    for (const instance of started.splice(0)) instance.stop();
    await api.close();
  });

  describe('creating', () => {
    test('creates the Secret when there is none, and injects its CA into our webhooks', async () => {
      const pair = await replica().reconcile();

      expect(api.requestsOf('POST', objectPath(SECRETS, undefined, NS))).toEqual([
        expect.objectContaining({ status: 201, query: { fieldManager: FIELD_MANAGER } }),
      ]);
      const { secret, caBundle, caKey, cert, key } = stored();
      expect(secret.type).toBe('kubernetes.io/tls');
      expect(Object.keys(secret.data).sort()).toEqual(['ca.crt', 'ca.key', 'tls.crt', 'tls.key']);
      expect(secret.metadata!.labels).toEqual({ 'app.kubernetes.io/managed-by': FIELD_MANAGER });
      expect(pair).toEqual({ cert, key });

      const caCert = new X509Certificate(caBundle);
      expect(splitPemBundle(caBundle)).toHaveLength(1);
      expect(caCert.ca).toBe(true);
      expect(caCert.subject).toBe(`CN=${WEBHOOK_NAMES.service}-ca`);
      expect(certificateProblems({ cert: caBundle, key: caKey }, { now, validForDays: 3649 })).toEqual([]);
      expect(certificateProblems(pair, { now, validForDays: 364, dnsNames: DNS_NAMES, issuer: caBundle })).toEqual([]);

      expect(log.lines).toContainEqual(expect.objectContaining({
        level: 'info', msg: 'created the serving certificate', secret: SECRET, expires: expiryOf(cert).toISOString(),
      }));

      // The CA goes into the caBundle of our webhooks of both configurations, and only ours.
      const expected = b64(caBundle);

      const mutating = api.get(MUTATING_PATH)!;
      expect(mutating.webhooks.map((w: any) => w.clientConfig.caBundle)).toEqual([expected, OTHER_CA_BUNDLE, undefined]);
      expect(mutating.metadata!.labels).toEqual({ 'app.kubernetes.io/part-of': 'serverless' });
      const validating = api.get(VALIDATING_PATH)!;
      expect(validating.webhooks.map((w: any) => w.clientConfig.caBundle)).toEqual([expected, undefined]);
      expect(validating.webhooks[1].clientConfig).toEqual({ url: 'https://validator.example.com/validate' });

      for (const p of [MUTATING_PATH, VALIDATING_PATH]) {
        expect(api.requestsOf('PUT', p)).toEqual([expect.objectContaining({ status: 200, query: { fieldManager: FIELD_MANAGER } })]);
      }
      const injected = log.lines.filter(l => l.msg === 'injected the CA bundle');
      expect(injected).toEqual([
        expect.objectContaining({ level: 'info', kind: 'MutatingWebhookConfiguration', name: WEBHOOK_NAMES.mutating, webhooks: 1 }),
        expect.objectContaining({ level: 'info', kind: 'ValidatingWebhookConfiguration', name: WEBHOOK_NAMES.validating, webhooks: 1 }),
      ]);
    });

    test('writes nothing when the Secret and both caBundles are as they should be', async () => {
      api.put(secretOf(stable));
      api.put(mutatingConfiguration(b64(stable.caBundle)));
      api.put(validatingConfiguration(b64(stable.caBundle)));

      const pair = await replica().reconcile();

      expect(pair).toEqual(serving);
      expect(writes()).toEqual([]);
      expect(api.requests.map(r => `${r.method} ${r.path}`)).toEqual([`GET ${SECRET_PATH}`, `GET ${MUTATING_PATH}`, `GET ${VALIDATING_PATH}`]);
    });

    test('a second replica reuses the Secret the first one created, without writing', async () => {
      const pair = await replica().reconcile();
      api.clearRequests();

      await expect(replica().reconcile()).resolves.toEqual(pair);
      expect(writes().map(r => `${r.method} ${r.path}`)).toEqual([]);
    });

    test('uses the other replica\'s Secret when it wins the race to create it', async () => {
      api.intercept('POST', objectPath(SECRETS, undefined, NS), (_request, fake) => {
        fake.put(secretOf(stable));
      });

      const pair = await replica().reconcile();

      expect(api.requestsOf('POST').map(r => r.status)).toEqual([409]);
      expect(api.requestsOf('PUT', SECRET_PATH)).toEqual([]);
      expect(pair).toEqual(serving);
      expect(stored()).toMatchObject(stable);
      expect(caBundleOf(MUTATING_PATH)).toBe(b64(stable.caBundle));
      expect(caBundleOf(VALIDATING_PATH)).toBe(b64(stable.caBundle));
      expect(log.messages()).not.toContain('created the serving certificate');
    });
  });

  describe('renewing', () => {
    beforeEach(() => {
      api.put(secretOf(stable));
      api.put(mutatingConfiguration(b64(stable.caBundle)));
      api.put(validatingConfiguration(b64(stable.caBundle)));
    });

    test('keeps a serving certificate that expires in more than renewBeforeDays', async () => {
      now = new Date(expiryOf(serving.cert).getTime() - 31 * DAY);

      await expect(replica().reconcile()).resolves.toEqual(serving);

      expect(writes()).toEqual([]);
      expect(log.messages()).toEqual([]);
    });

    test('renews the serving certificate renewBeforeDays before it expires, from the same CA', async () => {
      now = new Date(expiryOf(serving.cert).getTime() - 29 * DAY);

      const pair = await replica().reconcile();

      expect(pair.cert).not.toBe(serving.cert);
      expect(pair.key).not.toBe(serving.key);
      const after = stored();
      expect(after).toMatchObject({ caBundle: stable.caBundle, caKey: stable.caKey, cert: pair.cert, key: pair.key });
      expect(certificateProblems(pair, { now, validForDays: 364, dnsNames: DNS_NAMES, issuer: ca.cert })).toEqual([]);
      expect(new X509Certificate(pair.cert).subjectAltName).toBe(DNS_NAMES.map(n => `DNS:${n}`).join(', '));
      expect(expiryOf(pair.cert)).toEqual(new Date(now.getTime() + 365 * DAY));

      expect(api.requestsOf('PUT', SECRET_PATH).map(r => r.status)).toEqual([200]);
      // Same CA: the caBundles stay as they are.
      expect(api.requestsOf('PUT', MUTATING_PATH)).toEqual([]);
      expect(api.requestsOf('PUT', VALIDATING_PATH)).toEqual([]);
      expect(log.lines).toContainEqual(expect.objectContaining({ msg: 'renewing the serving certificate', problems: [expect.stringMatching(/^it expires /)] }));
      expect(log.lines).toContainEqual(expect.objectContaining({ msg: 'renewed the serving certificate', secret: SECRET, expires: expiryOf(pair.cert).toISOString() }));
      expect(log.messages()).not.toContain('renewing the CA');
    });

    test('renews the CA before it expires, and trusts the old one until it does', async () => {
      now = new Date(expiryOf(ca.cert).getTime() - 29 * DAY);

      const pair = await replica().reconcile();

      const after = stored();
      const [newCa, oldCa, ...rest] = splitPemBundle(after.caBundle);
      expect(rest).toEqual([]);
      expect(fingerprint(oldCa)).toBe(fingerprint(ca.cert));
      expect(fingerprint(newCa)).not.toBe(fingerprint(ca.cert));
      expect(after.caKey).not.toBe(ca.key);
      expect(certificateProblems({ cert: newCa, key: after.caKey }, { now, validForDays: 3649 })).toEqual([]);
      expect(certificateProblems(pair, { now, validForDays: 364, dnsNames: DNS_NAMES, issuer: newCa })).toEqual([]);
      expect(certificateProblems(pair, { now, validForDays: 0, issuer: oldCa })).toEqual(['the CA did not sign it']);
      expect(log.lines).toContainEqual(expect.objectContaining({ msg: 'renewing the CA', problems: [expect.stringMatching(/^it expires /)] }));

      expect(caBundleOf(MUTATING_PATH)).toBe(b64(after.caBundle));
      expect(caBundleOf(VALIDATING_PATH)).toBe(b64(after.caBundle));
      expect(api.requestsOf('PUT', MUTATING_PATH)).toHaveLength(1);
      expect(api.requestsOf('PUT', VALIDATING_PATH)).toHaveLength(1);

      // Once the old CA has expired, it leaves the bundle; the serving certificate stays.
      now = new Date(expiryOf(ca.cert).getTime() + DAY);
      await expect(replica().reconcile()).resolves.toEqual(pair);
      expect(splitPemBundle(stored().caBundle).map(fingerprint)).toEqual([fingerprint(newCa)]);
      expect(stored().caKey).toBe(after.caKey);
      expect(unb64(caBundleOf(MUTATING_PATH)!)).toBe(stored().caBundle);
      expect(unb64(caBundleOf(VALIDATING_PATH)!)).toBe(stored().caBundle);
    });

    test('renews a serving certificate for other DNS names', async () => {
      const other = createServingCertificate(ca, serviceDnsNames('other-service', NS), T0);
      api.put(secretOf({ ...stable, ...other }));

      const pair = await replica().reconcile();

      expect(certificateProblems(pair, { now, validForDays: 364, dnsNames: DNS_NAMES, issuer: ca.cert })).toEqual([]);
      expect(stored()).toMatchObject({ caBundle: stable.caBundle, caKey: stable.caKey, cert: pair.cert });
      expect(log.lines).toContainEqual(expect.objectContaining({
        msg: 'renewing the serving certificate', problems: DNS_NAMES.map(n => `it is not valid for ${n}`),
      }));
      expect(api.requestsOf('PUT', MUTATING_PATH)).toEqual([]);
      expect(api.requestsOf('PUT', VALIDATING_PATH)).toEqual([]);
    });

    test('drops an expired CA from the bundle, keeping the serving certificate', async () => {
      api.put(secretOf(withExpiredCa));
      api.put(mutatingConfiguration(b64(withExpiredCa.caBundle)));
      api.put(validatingConfiguration(b64(withExpiredCa.caBundle)));

      await expect(replica().reconcile()).resolves.toEqual(serving);

      expect(stored()).toMatchObject(stable);
      expect(caBundleOf(MUTATING_PATH)).toBe(b64(stable.caBundle));
      expect(caBundleOf(VALIDATING_PATH)).toBe(b64(stable.caBundle));
    });
  });

  describe('a Secret of the node-forge version (RSA)', () => {
    // Made by the earlier certificates.ts at 2024-03-01T12:00:00Z for this Service: CA until 2034, serving until 2025.
    const forge: { ca: CertificatePair; serving: CertificatePair } = JSON.parse(
      fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'webhook', 'node-forge-rsa-certificates.json'), 'utf8'),
    );
    const old = () => ({ caBundle: forge.ca.cert, caKey: forge.ca.key, cert: forge.serving.cert, key: forge.serving.key });

    beforeEach(() => {
      api.put(secretOf(old()));
      api.put(mutatingConfiguration(b64(forge.ca.cert)));
      api.put(validatingConfiguration(b64(forge.ca.cert)));
    });

    test('is kept as it is while it is good', async () => {
      now = new Date(T0.getTime() + 100 * DAY);

      await expect(replica().reconcile()).resolves.toEqual(forge.serving);
      expect(writes()).toEqual([]);
    });

    test('gets a new serving certificate from its RSA CA when due, and the same caBundle', async () => {
      now = new Date(expiryOf(forge.serving.cert).getTime() - 29 * DAY);

      const pair = await replica().reconcile();

      expect(certificateProblems(pair, { now, validForDays: 364, dnsNames: DNS_NAMES, issuer: forge.ca.cert })).toEqual([]);
      expect(stored()).toMatchObject({ caBundle: forge.ca.cert, caKey: forge.ca.key, cert: pair.cert, key: pair.key });
      expect(writes().map(r => `${r.method} ${r.path}`)).toEqual([`PUT ${SECRET_PATH}`]);
    });

    test('gets a new CA when its RSA CA is due, and keeps trusting the RSA CA until it expires', async () => {
      now = new Date(expiryOf(forge.ca.cert).getTime() - 29 * DAY);

      const pair = await replica().reconcile();

      const [newCa, oldCa, ...rest] = splitPemBundle(stored().caBundle);
      expect(rest).toEqual([]);
      expect(oldCa).toBe(forge.ca.cert);
      expect(new X509Certificate(newCa).publicKey.asymmetricKeyType).toBe('ec');
      expect(certificateProblems(pair, { now, validForDays: 364, dnsNames: DNS_NAMES, issuer: newCa })).toEqual([]);
      expect(unb64(caBundleOf(MUTATING_PATH)!)).toBe(newCa + oldCa);
      expect(unb64(caBundleOf(VALIDATING_PATH)!)).toBe(newCa + oldCa);
    });
  });

  describe('repairing', () => {
    test('re-injects a caBundle that a re-sync blanked', async () => {
      api.put(secretOf(stable));
      api.put(mutatingConfiguration(b64(stable.caBundle)));
      // The GitOps tool applies the configuration as rendered: without a caBundle.
      api.put(validatingConfiguration(''));
      expect(caBundleOf(VALIDATING_PATH)).toBeUndefined();

      await replica().reconcile();

      expect(caBundleOf(VALIDATING_PATH)).toBe(b64(stable.caBundle));
      expect(writes().map(r => `${r.method} ${r.path}`)).toEqual([`PUT ${VALIDATING_PATH}`]);
      expect(log.lines).toContainEqual(expect.objectContaining({ msg: 'injected the CA bundle', kind: 'ValidatingWebhookConfiguration' }));
    });

    test('replaces a caBundle of another CA', async () => {
      api.put(secretOf(stable));
      api.put(mutatingConfiguration(OTHER_CA_BUNDLE));
      api.put(validatingConfiguration(b64(stable.caBundle)));

      await replica().reconcile();

      expect(caBundleOf(MUTATING_PATH)).toBe(b64(stable.caBundle));
      expect(caBundleOf(MUTATING_PATH, 1)).toBe(OTHER_CA_BUNDLE);
      expect(writes().map(r => `${r.method} ${r.path}`)).toEqual([`PUT ${MUTATING_PATH}`]);
    });

    test('tolerates a missing webhook configuration, and injects once it exists', async () => {
      api.put(secretOf(stable));
      api.remove(VALIDATING_PATH);
      const instance = replica();

      await expect(instance.reconcile()).resolves.toEqual(serving);

      expect(api.requestsOf('GET', VALIDATING_PATH).map(r => r.status)).toEqual([404]);
      expect(caBundleOf(MUTATING_PATH)).toBe(b64(stable.caBundle));
      expect(log.lines).toContainEqual(expect.objectContaining({
        level: 'warn', kind: 'ValidatingWebhookConfiguration', name: WEBHOOK_NAMES.validating,
        msg: 'the webhook configuration does not exist yet; will inject the CA bundle once it does',
      }));

      api.put(validatingConfiguration());
      await instance.reconcile();
      expect(caBundleOf(VALIDATING_PATH)).toBe(b64(stable.caBundle));
    });

    test.each([
      ['only garbage serving data', { cert: 'garbage', key: 'garbage' }],
      ['garbage under every key', { caBundle: 'garbage', caKey: 'garbage', cert: 'garbage', key: 'garbage' }],
    ])('replaces a Secret with %s, keeping its labels', async (_what, contents) => {
      api.put(secretOf(contents, 'kubernetes.io/tls', { team: 'serverless' }));

      const pair = await replica().reconcile();

      const after = stored();
      expect(api.requestsOf('PUT', SECRET_PATH).map(r => r.status)).toEqual([200]);
      expect(certificateProblems({ cert: after.caBundle, key: after.caKey }, { now, validForDays: 3649 })).toEqual([]);
      expect(certificateProblems(pair, { now, validForDays: 364, dnsNames: DNS_NAMES, issuer: after.caBundle })).toEqual([]);
      expect(caBundleOf(MUTATING_PATH)).toBe(b64(after.caBundle));
      expect(caBundleOf(VALIDATING_PATH)).toBe(b64(after.caBundle));
      expect(after.secret.metadata!.labels).toEqual({ 'team': 'serverless', 'app.kubernetes.io/managed-by': FIELD_MANAGER });
    });

    test('replaces a Secret whose CA key does not belong to its CA', async () => {
      api.put(secretOf({ ...stable, caKey: expiredCa.key }));

      const pair = await replica().reconcile();

      const [newCa, oldCa] = splitPemBundle(stored().caBundle);
      expect(fingerprint(newCa)).not.toBe(fingerprint(ca.cert));
      // The old CA, still valid, stays trusted: other replicas may still serve what it signed.
      expect(fingerprint(oldCa)).toBe(fingerprint(ca.cert));
      expect(certificateProblems(pair, { now, validForDays: 364, issuer: newCa })).toEqual([]);
      expect(log.lines).toContainEqual(expect.objectContaining({ msg: 'renewing the CA', problems: ['the key does not belong to the certificate'] }));
    });

    test('replaces a Secret whose CA bundle holds a certificate that does not parse', async () => {
      const broken = '-----BEGIN CERTIFICATE-----\nZ2FyYmFnZQ==\n-----END CERTIFICATE-----\n';
      api.put(secretOf({ ...stable, caBundle: broken }));

      const pair = await replica().reconcile();

      expect(certificateProblems(pair, { now, validForDays: 364, dnsNames: DNS_NAMES, issuer: stored().caBundle })).toEqual([]);
    });
  });

  describe('conflicts and errors', () => {
    beforeEach(() => {
      // Every reconcile here rewrites the Secret (the expired CA leaves the bundle), without new keys.
      api.put(secretOf(withExpiredCa));
      api.put(mutatingConfiguration(b64(stable.caBundle)));
      api.put(validatingConfiguration(b64(stable.caBundle)));
    });

    test('retries a replace that lost to a concurrent change of the Secret', async () => {
      api.intercept('PUT', SECRET_PATH, (_request, fake) => {
        const secret = fake.get(SECRET_PATH)!;
        fake.put({ ...secret, metadata: { ...secret.metadata, labels: { changed: 'meanwhile' } } });
      });

      await expect(replica().reconcile()).resolves.toEqual(serving);

      expect(api.requestsOf('PUT', SECRET_PATH).map(r => r.status)).toEqual([409, 200]);
      expect(api.requestsOf('GET', SECRET_PATH)).toHaveLength(2);
      expect(stored()).toMatchObject(stable);
      expect(stored().secret.metadata!.labels).toEqual({ 'changed': 'meanwhile', 'app.kubernetes.io/managed-by': FIELD_MANAGER });
    });

    test('uses what another replica wrote first', async () => {
      const theirs = { ...stable, ...createServingCertificate(ca, DNS_NAMES, T0) };
      api.intercept('PUT', SECRET_PATH, (_request, fake) => {
        fake.put(secretOf(theirs));
      });

      await expect(replica().reconcile()).resolves.toEqual({ cert: theirs.cert, key: theirs.key });

      expect(api.requestsOf('PUT', SECRET_PATH).map(r => r.status)).toEqual([409]);
      expect(stored()).toMatchObject(theirs);
    });

    test('fails when the Secret keeps changing', async () => {
      api.failNext('PUT', SECRET_PATH, 409, { times: 3 });

      await expect(replica().reconcile()).rejects.toThrow(`Secret ${SECRET} kept changing while the serving certificate was written; will retry`);
      expect(api.requestsOf('PUT', SECRET_PATH)).toHaveLength(3);
    });

    test('retries a webhook configuration update that conflicts', async () => {
      api.put(mutatingConfiguration(''));
      api.failNext('PUT', MUTATING_PATH, 409);

      await replica().reconcile();

      expect(api.requestsOf('PUT', MUTATING_PATH).map(r => r.status)).toEqual([409, 200]);
      expect(caBundleOf(MUTATING_PATH)).toBe(b64(stable.caBundle));
    });

    test('fails when reading the Secret is forbidden, naming the Secret', async () => {
      api.failNext('GET', SECRET_PATH, 403);

      const error: Error = await replica().reconcile().then(() => {
        throw new Error('reconcile resolved');
      }, (e: Error) => e);

      expect(error.message).toMatch(new RegExp(`^Cannot read Secret ${SECRET}: 403 Forbidden: `));
      expect(error.message).toContain('is forbidden: User');
      expect(writes()).toEqual([]);
    });

    test('fails when the API server answers an error, naming the Secret', async () => {
      api.failNext('PUT', SECRET_PATH, 500);

      await expect(replica().reconcile()).rejects.toThrow(new RegExp(`^Cannot write Secret ${SECRET}: 500 InternalError: `));
    });

    test('fails when a webhook configuration cannot be read, naming it', async () => {
      api.failNext('GET', MUTATING_PATH, 403);

      await expect(replica().reconcile()).rejects.toThrow(`Cannot read MutatingWebhookConfiguration ${WEBHOOK_NAMES.mutating}: 403 Forbidden: `);
    });

    test('fails when a webhook configuration cannot be updated, naming it', async () => {
      api.put(validatingConfiguration(''));
      api.failNext('PUT', VALIDATING_PATH, 403);

      await expect(replica().reconcile()).rejects.toThrow(`Cannot update ValidatingWebhookConfiguration ${WEBHOOK_NAMES.validating}: 403 Forbidden: `);
    });

    test('keeps the type of an existing Secret, which the API server does not let an update change', async () => {
      api.put(secretOf(withExpiredCa, 'Opaque'));

      await expect(replica().reconcile()).resolves.toEqual(serving);
      expect(stored().secret.type).toBe('Opaque');
      expect(stored()).toMatchObject(stable);
    });

    test('fails when the API server cannot be reached, naming the Secret', async () => {
      const instance = replica();
      await api.close();

      await expect(instance.reconcile()).rejects.toThrow(`Cannot read Secret ${SECRET}: `);
      api = await FakeKubeApi.start();
    });
  });

  describe('start', () => {
    beforeEach(() => {
      api.put(secretOf(stable));
      api.put(mutatingConfiguration(b64(stable.caBundle)));
      api.put(validatingConfiguration(b64(stable.caBundle)));
    });

    test('hands a renewed certificate to onChange', async () => {
      const changes: CertificatePair[] = [];
      const instance = replica({ checkIntervalSeconds: 0.1 });

      await expect(instance.start(pair => changes.push(pair))).resolves.toEqual(serving);
      await waitFor('two more checks', () => api.requestsOf('GET', SECRET_PATH).length >= 3);
      expect(changes).toEqual([]);

      now = new Date(expiryOf(serving.cert).getTime() - 29 * DAY);
      const [renewed] = await waitFor('onChange', () => changes.length > 0 && changes);
      instance.stop();

      expect(renewed).toEqual({ cert: stored().cert, key: stored().key });
      expect(renewed.cert).not.toBe(serving.cert);
      expect(log.messages()).toContain('renewed the serving certificate');
    });

    test('logs a failed check and keeps checking', async () => {
      const instance = replica({ checkIntervalSeconds: 0.1 });
      await instance.start(() => undefined);
      api.failNext('GET', SECRET_PATH, 500);

      const line = await waitFor('the error', () => log.lines.find(l => l.msg === 'could not check the serving certificate; will retry'));
      expect(line).toMatchObject({ level: 'error', err: expect.stringContaining(`Cannot read Secret ${SECRET}`) });
      const after = api.requestsOf('GET', SECRET_PATH).length;
      await waitFor('another check', () => api.requestsOf('GET', SECRET_PATH).length > after);
    });

    test('stops checking', async () => {
      const instance = replica({ checkIntervalSeconds: 0.05 });
      await instance.start(() => undefined);
      instance.stop();
      const count = api.requests.length;

      await sleep(200);

      expect(api.requests.length).toBe(count);
    });

    test('fails to start when the first check fails', async () => {
      api.failNext('GET', SECRET_PATH, 403);

      await expect(replica({ checkIntervalSeconds: 0.05 }).start(() => undefined)).rejects.toThrow(`Cannot read Secret ${SECRET}`);
    });
  });

  describe('a webhook configuration that does not exist yet', () => {
    const soon = 'will check again soon, until both webhook configurations have the CA bundle';
    const back = 'both webhook configurations have the CA bundle; back to the normal check interval';

    beforeEach(() => {
      api.put(secretOf(stable));
      api.put(mutatingConfiguration(b64(stable.caBundle)));
      // The GitOps tool has not applied it yet: the Pod started first.
      api.remove(VALIDATING_PATH);
    });

    test('is checked for every injectionRetrySeconds, not checkIntervalSeconds, until it has the CA bundle', async () => {
      const instance = replica({ checkIntervalSeconds: 300 }, { injectionRetrySeconds: 0.05 });

      await expect(instance.start(() => undefined)).resolves.toEqual(serving);
      expect(log.lines).toContainEqual(expect.objectContaining({
        level: 'info', msg: soon, missing: ['ValidatingWebhookConfiguration'], retrySeconds: 0.05,
      }));
      await waitFor('three more checks', () => api.requestsOf('GET', VALIDATING_PATH).length >= 4);
      // Warned once; the checks after that log at debug level.
      expect(log.lines.filter(l => l.level === 'warn')).toHaveLength(1);
      expect(log.lines).toContainEqual(expect.objectContaining({ level: 'debug', msg: 'the webhook configuration does not exist yet' }));

      api.put(validatingConfiguration());
      await waitFor('the caBundle', () => caBundleOf(VALIDATING_PATH) === b64(stable.caBundle));
      await waitFor('the log line', () => log.messages().includes(back));
      expect(log.lines).toContainEqual(expect.objectContaining({ level: 'info', msg: back, checkIntervalSeconds: 300 }));
      expect(log.lines).toContainEqual(expect.objectContaining({ msg: 'injected the CA bundle', kind: 'ValidatingWebhookConfiguration' }));

      // Back to every 300 s: nothing more for now.
      const count = api.requests.length;
      await sleep(250);
      expect(api.requests.length).toBe(count);
      expect(log.messages().filter(m => m === soon)).toHaveLength(1);
    });

    test('is checked soon again when it goes missing later', async () => {
      api.put(validatingConfiguration(b64(stable.caBundle)));
      const instance = replica({ checkIntervalSeconds: 0.1 }, { injectionRetrySeconds: 0.02 });
      await instance.start(() => undefined);
      expect(log.messages()).not.toContain(soon);

      api.remove(VALIDATING_PATH);
      await waitFor('the quick checks', () => log.messages().includes(soon));
      api.put(validatingConfiguration());
      await waitFor('the caBundle', () => caBundleOf(VALIDATING_PATH) === b64(stable.caBundle));
      await waitFor('the log line', () => log.messages().includes(back));
    });

    test('keeps being checked soon through failed checks', async () => {
      const instance = replica({ checkIntervalSeconds: 300 }, { injectionRetrySeconds: 0.05 });
      await instance.start(() => undefined);
      api.failNext('GET', SECRET_PATH, 500);

      await waitFor('the error', () => log.messages().includes('could not check the serving certificate; will retry'));
      api.put(validatingConfiguration());
      await waitFor('the caBundle', () => caBundleOf(VALIDATING_PATH) === b64(stable.caBundle));
    });

    test('runs one check at a time, however slow the API server', async () => {
      let inFlight = 0;
      let most = 0;
      api.intercept('GET', SECRET_PATH, async () => {
        most = Math.max(most, ++inFlight);
        await sleep(120);
        inFlight -= 1;
      }, { times: 1000 });
      const instance = replica({ checkIntervalSeconds: 300 }, { injectionRetrySeconds: 0.01 });
      await instance.start(() => undefined);

      await waitFor('several checks', () => api.requestsOf('GET', SECRET_PATH).length >= 4);
      expect(most).toBe(1);
    });

    test('is not checked any more once stopped', async () => {
      const instance = replica({ checkIntervalSeconds: 300 }, { injectionRetrySeconds: 0.02 });
      await instance.start(() => undefined);
      instance.stop();
      const count = api.requests.length;

      await sleep(150);

      expect(api.requests.length).toBe(count);
    });

    test('injects the CA bundle without the quick checks when reconcile is called directly', async () => {
      const instance = replica({}, { injectionRetrySeconds: 0.02 });
      await instance.reconcile();
      await sleep(100);
      expect(api.requestsOf('GET', VALIDATING_PATH)).toHaveLength(1);
      expect(log.messages()).not.toContain(soon);
    });
  });

  test('works with a kubeconfig file', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kubeconfig-'));
    try {
      const client = new KubeClient(kubeconfigConnection(writeKubeconfig(api, path.join(dir, 'config'))));
      api.put(secretOf(stable));

      await expect(new SelfManagedCertificates(client, CONFIG, log.logger, { clock }).reconcile()).resolves.toEqual(serving);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the fake API server', () => {
  let api: FakeKubeApi;
  let core: CoreV1Api;
  const secret = (name: string, resourceVersion?: string): V1Secret => ({
    apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: NS, resourceVersion }, data: { a: b64('x') },
  });

  beforeEach(async () => {
    api = await FakeKubeApi.start();
    core = kubeConfigFor(api).makeApiClient(CoreV1Api);
  });

  afterEach(() => api.close());

  test('answers a missing object with a NotFound Status', async () => {
    const error = await core.readNamespacedSecret({ name: 'x', namespace: NS }).catch(e => e);
    expect(error.code).toBe(404);
    expect(statusBody(error)).toEqual({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'NotFound', code: 404,
      message: 'secrets "x" not found', details: { name: 'x', kind: 'secrets' },
    });
  });

  test('names the group of a missing object of a named group', async () => {
    const error = await kubeConfigFor(api).makeApiClient((await import('@kubernetes/client-node')).AdmissionregistrationV1Api)
      .readMutatingWebhookConfiguration({ name: 'x' }).catch(e => e);
    expect(statusBody(error)).toMatchObject({ reason: 'NotFound', message: 'mutatingwebhookconfigurations.admissionregistration.k8s.io "x" not found' });
  });

  test('counts resourceVersion up on every write', async () => {
    const created = await core.createNamespacedSecret({ namespace: NS, body: secret('s') });
    const replaced = await core.replaceNamespacedSecret({ name: 's', namespace: NS, body: { ...created, data: { a: b64('y') } } });
    expect(Number(replaced.metadata!.resourceVersion)).toBeGreaterThan(Number(created.metadata!.resourceVersion));
    expect(replaced.metadata!.uid).toBe(created.metadata!.uid);
    expect(replaced.type).toBe('Opaque');
  });

  test('refuses to create an object twice', async () => {
    await core.createNamespacedSecret({ namespace: NS, body: secret('s') });
    const error = await core.createNamespacedSecret({ namespace: NS, body: secret('s') }).catch(e => e);
    expect(error.code).toBe(409);
    expect(statusBody(error)).toMatchObject({ reason: 'AlreadyExists', message: 'secrets "s" already exists' });
  });

  test('refuses a replace of a stale resourceVersion, and allows one without', async () => {
    const created = await core.createNamespacedSecret({ namespace: NS, body: secret('s') });
    api.put({ ...api.get(SECRET_PATH.replace(WEBHOOK_NAMES.secret, 's'))!, data: { a: b64('z') } });
    const error = await core.replaceNamespacedSecret({ name: 's', namespace: NS, body: created }).catch(e => e);
    expect(error.code).toBe(409);
    expect(statusBody(error)).toMatchObject({ reason: 'Conflict', message: expect.stringContaining('the object has been modified') });
    await expect(core.replaceNamespacedSecret({ name: 's', namespace: NS, body: secret('s') })).resolves.toBeDefined();
  });

  test('refuses to change the type of a Secret', async () => {
    await core.createNamespacedSecret({ namespace: NS, body: secret('s') });
    const error = await core.replaceNamespacedSecret({
      name: 's', namespace: NS, body: { ...secret('s'), type: 'kubernetes.io/tls', data: { 'tls.crt': '', 'tls.key': '' } },
    }).catch(e => e);
    expect(error.code).toBe(422);
    expect(statusBody(error)).toMatchObject({ reason: 'Invalid', message: 'Secret "s" is invalid: type: Invalid value: "kubernetes.io/tls": field is immutable' });
  });

  test('refuses a request without the token', async () => {
    const error = await kubeConfigFor(api, { token: 'wrong' }).makeApiClient(CoreV1Api).readNamespacedSecret({ name: 'x', namespace: NS }).catch(e => e);
    expect(error.code).toBe(401);
  });

  test('fails the next matching request as asked, then answers normally', async () => {
    api.failNext('GET', /\/secrets\/x$/, 403);
    const error = await core.readNamespacedSecret({ name: 'x', namespace: NS }).catch(e => e);
    expect(statusBody(error)).toMatchObject({
      reason: 'Forbidden',
      message: `secrets "x" is forbidden: User "system:serviceaccount:kyma-system:serverless-webhook" cannot get resource "secrets" in API group "" in the namespace "${NS}"`,
    });
    expect((await core.readNamespacedSecret({ name: 'x', namespace: NS }).catch(e => e)).code).toBe(404);
    expect(api.requests.map(r => r.status)).toEqual([403, 404]);
  });
});

describe('FileCertificates', () => {
  let dir: string;
  let log: ReturnType<typeof collectingLogger>;
  let first: CertificatePair;
  let second: CertificatePair;
  const sources: FileCertificates[] = [];

  const certFile = () => path.join(dir, 'tls.crt');
  const keyFile = () => path.join(dir, 'tls.key');
  const write = (pair: Partial<CertificatePair>) => {
    if (pair.cert !== undefined) fs.writeFileSync(certFile(), pair.cert);
    if (pair.key !== undefined) fs.writeFileSync(keyFile(), pair.key);
  };
  const source = (pollSeconds?: number) => {
    const s = new FileCertificates(certFile(), keyFile(), log.logger, pollSeconds);
    sources.push(s);
    return s;
  };

  beforeAll(() => {
    // Valid now, in real time: FileCertificates checks against the real clock.
    first = createServingCertificate(ca, DNS_NAMES);
    second = createServingCertificate(ca, DNS_NAMES);
  });

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'file-certificates-'));
    log = collectingLogger();
  });

  afterEach(() => {
    for (const s of sources.splice(0)) s.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('reads the certificate and the key', async () => {
    write(first);
    await expect(source().start(() => undefined)).resolves.toEqual(first);
    expect(source().read()).toEqual(first);
    expect(log.lines).toEqual([]);
  });

  test('fails when the certificate file cannot be read, naming it', () => {
    write({ key: first.key });
    expect(() => source().read()).toThrow(new RegExp(`^Cannot read the TLS certificate ${certFile()}: ENOENT`));
  });

  test('fails when the key file cannot be read, naming it', async () => {
    write({ cert: first.cert });
    await expect(source().start(() => undefined)).rejects.toThrow(new RegExp(`^Cannot read the TLS key ${keyFile()}: ENOENT`));
  });

  test('fails when the key does not belong to the certificate, naming both files', () => {
    write({ cert: first.cert, key: second.key });
    expect(() => source().read()).toThrow(
      `The TLS certificate ${certFile()} and key ${keyFile()} cannot be used: the key does not belong to the certificate`,
    );
  });

  test('fails when the certificate does not parse', () => {
    write({ cert: 'garbage', key: first.key });
    expect(() => source().read()).toThrow(/cannot be used: it does not parse/);
  });

  test('loads an expired certificate, and warns', () => {
    // Created at T0, valid one year.
    expect(expiryOf(serving.cert).getTime()).toBeLessThan(Date.now());
    write(serving);
    expect(source().read()).toEqual(serving);
    expect(log.lines).toEqual([expect.objectContaining({
      level: 'warn', msg: 'the TLS certificate is not valid now', certFile: certFile(), problems: [expect.stringMatching(/^it expires /)],
    })]);
  });

  test('reloads changed files and calls onChange', async () => {
    write(first);
    const changes: CertificatePair[] = [];
    await source(0.05).start(pair => changes.push(pair));

    write(second);
    await waitFor('onChange', () => changes.length > 0);
    await sleep(150);

    expect(changes).toEqual([second]);
    expect(log.lines).toContainEqual(expect.objectContaining({
      level: 'info', msg: 'reloaded the TLS certificate', certFile: certFile(), expires: expiryOf(second.cert).toISOString(),
    }));
  });

  test('keeps the current pair while the files are mid-update', async () => {
    write(first);
    const changes: CertificatePair[] = [];
    await source(0.05).start(pair => changes.push(pair));

    write({ cert: second.cert });
    await waitFor('a warning', () => log.lines.some(l => l.msg === 'could not reload the TLS certificate; keeping the current one'));
    expect(changes).toEqual([]);
    expect(log.lines.find(l => l.level === 'warn')).toMatchObject({ err: expect.stringContaining('the key does not belong to the certificate') });

    write({ key: second.key });
    await waitFor('onChange', () => changes.length > 0);
    expect(changes).toEqual([second]);
  });

  test('stops polling', async () => {
    write(first);
    const changes: CertificatePair[] = [];
    const s = source(0.05);
    await s.start(pair => changes.push(pair));
    s.stop();

    write(second);
    await sleep(200);

    expect(changes).toEqual([]);
  });
});
