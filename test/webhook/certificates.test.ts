import { X509Certificate, createPrivateKey } from 'node:crypto';
import * as forge from 'node-forge';
import {
  CA_VALIDITY_DAYS, CertificatePair, SERVING_VALIDITY_DAYS, certificateProblems, createCertificateAuthority, createServingCertificate, expiryOf,
  splitPemBundle,
} from '../../src/webhook/certificates';
import { serviceDnsNames } from '../../src/webhook/config';

const DAY = 24 * 60 * 60 * 1000;
const HOUR = 60 * 60 * 1000;
const T0 = new Date('2027-03-01T12:00:00Z');
const NAMES = serviceDnsNames('serverless-webhook', 'kyma-system');

const validFrom = (pem: string) => new Date(new X509Certificate(pem).validFrom);
const validTo = (pem: string) => new Date(new X509Certificate(pem).validTo);
const extension = (pem: string, name: string) => forge.pki.certificateFromPem(pem).getExtension(name) as any;

let ca: CertificatePair;
let serving: CertificatePair;
let otherCa: CertificatePair;

beforeAll(() => {
  ca = createCertificateAuthority('serverless-webhook-ca', T0);
  serving = createServingCertificate(ca, NAMES, T0);
  otherCa = createCertificateAuthority('another-ca', T0);
});

describe('serviceDnsNames', () => {
  test('lists the short and the long names of a Service', () => {
    expect(serviceDnsNames('svc', 'ns')).toEqual(['svc', 'svc.ns', 'svc.ns.svc', 'svc.ns.svc.cluster.local']);
  });
});

describe('createCertificateAuthority', () => {
  test('creates a self-signed CA certificate', () => {
    const cert = new X509Certificate(ca.cert);
    expect(cert.ca).toBe(true);
    expect(cert.subject).toBe('CN=serverless-webhook-ca');
    expect(cert.issuer).toBe(cert.subject);
    expect(cert.verify(cert.publicKey)).toBe(true);
    expect(cert.checkPrivateKey(createPrivateKey(ca.key))).toBe(true);
  });

  test('marks basicConstraints critical and allows signing certificates', () => {
    expect(extension(ca.cert, 'basicConstraints')).toMatchObject({ cA: true, critical: true });
    expect(extension(ca.cert, 'keyUsage')).toMatchObject({ keyCertSign: true, cRLSign: true, critical: true });
  });

  test('is valid ten years, from an hour before now', () => {
    expect(CA_VALIDITY_DAYS).toBe(3650);
    expect(validFrom(ca.cert)).toEqual(new Date(T0.getTime() - HOUR));
    expect(validTo(ca.cert)).toEqual(new Date(T0.getTime() + 3650 * DAY));
    expect(expiryOf(ca.cert)).toEqual(validTo(ca.cert));
  });

  test('uses RSA 2048, SHA-256 and a positive serial number', () => {
    const cert = forge.pki.certificateFromPem(ca.cert);
    expect((cert.publicKey as forge.pki.rsa.PublicKey).n.bitLength()).toBe(2048);
    expect(forge.pki.oids[cert.signatureOid]).toBe('sha256WithRSAEncryption');
    expect(parseInt(new X509Certificate(ca.cert).serialNumber[0], 16)).toBeLessThan(8);
  });

  test('expires on the right day when the expiry is past 2049', () => {
    const late = new Date('2045-06-01T00:00:00Z');
    const lateCa = createCertificateAuthority('late-ca', late);
    expect(expiryOf(lateCa.cert)).toEqual(new Date(late.getTime() + 3650 * DAY));
    expect(certificateProblems(lateCa, { now: new Date('2050-06-01T00:00:00Z'), validForDays: 30 })).toEqual([]);
  });
});

describe('createServingCertificate', () => {
  test('is signed by the CA', () => {
    const cert = new X509Certificate(serving.cert);
    expect(cert.verify(new X509Certificate(ca.cert).publicKey)).toBe(true);
    expect(cert.verify(new X509Certificate(otherCa.cert).publicKey)).toBe(false);
    expect(cert.issuer).toBe('CN=serverless-webhook-ca');
    expect(cert.checkIssued(new X509Certificate(ca.cert))).toBe(true);
  });

  test('holds the Service\'s DNS names, the first as its CN', () => {
    const cert = new X509Certificate(serving.cert);
    expect(cert.subjectAltName).toBe(NAMES.map(n => `DNS:${n}`).join(', '));
    expect(cert.subject).toBe('CN=serverless-webhook');
    for (const name of NAMES) expect(cert.checkHost(name)).toBe(name);
    expect(cert.checkHost('other.kyma-system.svc')).toBeUndefined();
  });

  test('is a server certificate, not a CA', () => {
    const cert = new X509Certificate(serving.cert);
    expect(cert.ca).toBe(false);
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    expect(extension(serving.cert, 'keyUsage')).toMatchObject({ digitalSignature: true, keyEncipherment: true, keyCertSign: false });
  });

  test('is valid one year, from an hour before now', () => {
    expect(SERVING_VALIDITY_DAYS).toBe(365);
    expect(validFrom(serving.cert)).toEqual(new Date(T0.getTime() - HOUR));
    expect(validTo(serving.cert)).toEqual(new Date(T0.getTime() + 365 * DAY));
  });

  test('never outlives its CA', () => {
    const late = new Date(T0.getTime() + 3500 * DAY);
    const lastOne = createServingCertificate(ca, NAMES, late);
    expect(validTo(lastOne.cert)).toEqual(validTo(ca.cert));
    expect(certificateProblems(lastOne, { now: late, validForDays: 30, dnsNames: NAMES, issuer: ca.cert })).toEqual([]);
  });

  test('gets a new key every time', () => {
    expect(serving.key).not.toBe(ca.key);
    expect(certificateProblems({ cert: serving.cert, key: ca.key }, { now: T0, validForDays: 0 })).toEqual(['the key does not belong to the certificate']);
  });
});

describe('certificateProblems', () => {
  const good = { now: T0, validForDays: 30, dnsNames: NAMES };

  test('is empty for a good pair', () => {
    expect(certificateProblems(serving, { ...good, issuer: ca.cert })).toEqual([]);
    expect(certificateProblems(ca, { now: T0, validForDays: 30 })).toEqual([]);
  });

  test.each([
    ['no certificate', { key: 'k' }],
    ['no key', { cert: 'c' }],
    ['an empty certificate', { cert: '', key: 'k' }],
    ['nothing', {}],
  ])('reports a missing certificate or key: %s', (_what, pair) => {
    expect(certificateProblems(pair, good)).toEqual(['the certificate or its key is missing']);
  });

  test('reports a key that does not belong to the certificate', () => {
    expect(certificateProblems({ cert: serving.cert, key: otherCa.key }, good)).toEqual(['the key does not belong to the certificate']);
  });

  test('reports a certificate or key that does not parse', () => {
    expect(certificateProblems({ cert: 'garbage', key: serving.key }, good)).toEqual([expect.stringMatching(/^it does not parse: /)]);
    expect(certificateProblems({ cert: serving.cert, key: 'garbage' }, good)).toEqual([expect.stringMatching(/^it does not parse: /)]);
  });

  test('reports a certificate expiring within validForDays', () => {
    const expiry = validTo(serving.cert);
    const at = (daysBefore: number) => new Date(expiry.getTime() - daysBefore * DAY);
    expect(certificateProblems(serving, { ...good, now: at(31) })).toEqual([]);
    expect(certificateProblems(serving, { ...good, now: at(29) })).toEqual([
      `it expires ${expiry.toISOString()}, less than 30 days from now`,
    ]);
    // Exactly validForDays left is not enough.
    expect(certificateProblems(serving, { ...good, now: at(30) })).toHaveLength(1);
  });

  test('reports an expired certificate', () => {
    const after = new Date(validTo(serving.cert).getTime() + DAY);
    expect(certificateProblems(serving, { ...good, now: after, validForDays: 0 })).toEqual([expect.stringMatching(/^it expires .*, less than 0 days from now$/)]);
  });

  test('reports a certificate that is not valid yet', () => {
    const before = new Date(T0.getTime() - 2 * HOUR);
    expect(certificateProblems(serving, { ...good, now: before })).toEqual([`it is not valid before ${validFrom(serving.cert).toISOString()}`]);
    // The hour of slack: valid when the clock lags by less than an hour.
    expect(certificateProblems(serving, { ...good, now: new Date(T0.getTime() - 59 * 60 * 1000) })).toEqual([]);
  });

  test('reports every missing DNS name', () => {
    const other = serviceDnsNames('serverless-webhook', 'other-namespace');
    expect(certificateProblems(serving, { ...good, dnsNames: [...NAMES, 'extra.example.com'] })).toEqual(['it is not valid for extra.example.com']);
    expect(certificateProblems(serving, { ...good, dnsNames: other })).toEqual(other.slice(1).map(n => `it is not valid for ${n}`));
  });

  test('does not accept a wildcard for a DNS name', () => {
    expect(certificateProblems(serving, { ...good, dnsNames: ['*.kyma-system.svc'] })).toEqual(['it is not valid for *.kyma-system.svc']);
  });

  test('reports a certificate another CA signed', () => {
    expect(certificateProblems(serving, { ...good, issuer: otherCa.cert })).toEqual(['the CA did not sign it']);
    expect(certificateProblems(serving, { ...good, issuer: 'not a certificate' })).toEqual(['the CA did not sign it']);
  });

  test('reports several problems at once', () => {
    const after = new Date(validTo(serving.cert).getTime() + DAY);
    expect(certificateProblems(serving, { now: after, validForDays: 30, dnsNames: ['x'], issuer: otherCa.cert })).toEqual([
      expect.stringMatching(/^it expires /), 'it is not valid for x', 'the CA did not sign it',
    ]);
  });

  test('checks the first certificate of a chain', () => {
    expect(certificateProblems({ cert: serving.cert + ca.cert, key: serving.key }, { ...good, issuer: ca.cert })).toEqual([]);
  });
});

describe('splitPemBundle', () => {
  const fingerprints = (pems: string[]) => pems.map(p => new X509Certificate(p).fingerprint256);
  const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256;

  test('splits a bundle into its certificates, in order, each ending in one newline', () => {
    const parts = splitPemBundle(ca.cert + otherCa.cert);
    expect(fingerprints(parts)).toEqual([fingerprint(ca.cert), fingerprint(otherCa.cert)]);
    for (const part of parts) expect(part).toMatch(/^-----BEGIN CERTIFICATE-----[\s\S]+-----END CERTIFICATE-----\n$/);
  });

  test('accepts a bundle without newlines at the end or between certificates', () => {
    const parts = splitPemBundle(ca.cert.trimEnd() + otherCa.cert.trimEnd());
    expect(fingerprints(parts)).toEqual([fingerprint(ca.cert), fingerprint(otherCa.cert)]);
  });

  test('accepts LF and CRLF line ends', () => {
    const lf = (ca.cert + otherCa.cert).replace(/\r\n/g, '\n');
    expect(splitPemBundle(lf)).toEqual(lf.match(/-----BEGIN[\s\S]+?-----END CERTIFICATE-----\n/g));
    const crlf = lf.replace(/\n/g, '\r\n');
    expect(fingerprints(splitPemBundle(crlf))).toEqual([fingerprint(ca.cert), fingerprint(otherCa.cert)]);
  });

  test('skips everything that is not a certificate', () => {
    expect(fingerprints(splitPemBundle(`# comment\n${ca.key}${ca.cert}text\n`))).toEqual([fingerprint(ca.cert)]);
  });

  test('returns nothing for an empty or certificate-less text', () => {
    expect(splitPemBundle('')).toEqual([]);
    expect(splitPemBundle('garbage')).toEqual([]);
    expect(splitPemBundle(ca.key)).toEqual([]);
  });

  test('gives its own output back unchanged', () => {
    const once = splitPemBundle(ca.cert + otherCa.cert + serving.cert);
    expect(splitPemBundle(once.join(''))).toEqual(once);
  });

  // node-forge writes CRLF; the PEM we hand out is LF, so a stored bundle and its rebuilt parts compare equal.
  test('gives a new CA\'s PEM back unchanged, so a stored bundle compares equal', () => {
    expect(splitPemBundle(ca.cert + otherCa.cert).join('')).toBe(ca.cert + otherCa.cert);
  });
});
