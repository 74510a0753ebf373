/**
 * The self-managed certificates, checked without the code that wrote them: node:crypto's
 * X509Certificate, a small DER reader of this file for the extensions, a real TLS handshake, and
 * openssl where it is on the PATH.
 */
import { execFileSync } from 'node:child_process';
import { X509Certificate, createHash, createPrivateKey, generateKeyPairSync } from 'node:crypto';
import * as fs from 'node:fs';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as fc from 'fast-check';
import { servingKeyUsage } from '../../src/webhook/_x509';
import {
  CA_VALIDITY_DAYS, CertificatePair, SERVING_VALIDITY_DAYS, certificateProblems, createCertificateAuthority, createServingCertificate, expiryOf,
  splitPemBundle,
} from '../../src/webhook/certificates';
import { serviceDnsNames } from '../../src/webhook/config';

const DAY = 24 * 60 * 60 * 1000;
const HOUR = 60 * 60 * 1000;
const T0 = new Date('2027-03-01T12:00:00Z');
const NAMES = serviceDnsNames('serverless-webhook', 'kyma-system');
const SERVICE_HOST = 'serverless-webhook.kyma-system.svc';

/** A CA and a serving certificate the node-forge version of certificates.ts made (RSA 2048), as old Secrets hold them. */
const FORGE: { createdAt: string; dnsNames: string[]; ca: CertificatePair; serving: CertificatePair } = JSON.parse(
  fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'webhook', 'node-forge-rsa-certificates.json'), 'utf8'),
);

const validFrom = (pem: string) => new Date(new X509Certificate(pem).validFrom);
const validTo = (pem: string) => new Date(new X509Certificate(pem).validTo);
/** A date as a certificate holds it: whole seconds. */
const seconds = (date: Date) => new Date(Math.floor(date.getTime() / 1000) * 1000);

// A DER reader of its own, so that the tests do not trust the encoder's reader.
interface Node {
  tag: number;
  bytes: Buffer;
  children: Node[];
}

function parseDer(bytes: Buffer): Node {
  const [node, end] = parseAt(bytes, 0);
  expect(end).toBe(bytes.length);
  return node;
}

function parseAt(bytes: Buffer, at: number): [Node, number] {
  const tag = bytes[at];
  let length = bytes[at + 1];
  let start = at + 2;
  if (length > 0x80) {
    const count = length - 0x80;
    length = bytes.subarray(start, start + count).reduce((sum, octet) => sum * 256 + octet, 0);
    start += count;
  }
  const content = bytes.subarray(start, start + length);
  const children: Node[] = [];
  if (tag & 0x20) {
    for (let offset = 0; offset < content.length;) {
      const [child, next] = parseAt(content, offset);
      children.push(child);
      offset = next;
    }
  }
  return [{ tag, bytes: content, children }, start + length];
}

function oidOf(node: Node): string {
  const values: number[] = [];
  let value = 0;
  for (const octet of node.bytes) {
    value = value * 128 + (octet & 0x7f);
    if (!(octet & 0x80)) {
      values.push(value);
      value = 0;
    }
  }
  return [Math.min(2, Math.floor(values[0] / 40)), values[0] - Math.min(2, Math.floor(values[0] / 40)) * 40, ...values.slice(1)].join('.');
}

interface Decoded {
  version: number;
  signatureAlgorithm: string;
  /** The outer signatureAlgorithm's parameters: undefined when absent, else the tag. */
  signatureParameters?: number;
  issuer: Buffer;
  subject: Buffer;
  /** The tags of notBefore and notAfter: 0x17 UTCTime, 0x18 GeneralizedTime. */
  timeTags: number[];
  extensions: { [oid: string]: { critical: boolean; value: Node } };
}

function decode(pem: string): Decoded {
  const [tbs, algorithm] = parseDer(new X509Certificate(pem).raw).children;
  const [version, , innerAlgorithm, issuer, validity, subject, , extensions] = tbs.children;
  expect(innerAlgorithm.bytes).toEqual(algorithm.bytes);
  const byOid: Decoded['extensions'] = {};
  for (const extension of extensions.children[0].children) {
    const [oid, ...rest] = extension.children;
    const critical = rest.length === 2;
    if (critical) expect(rest[0].bytes).toEqual(Buffer.from([0xff]));
    byOid[oidOf(oid)] = { critical, value: parseDer(rest[rest.length - 1].bytes) };
  }
  return {
    version: version.children[0].bytes[0] + 1,
    signatureAlgorithm: oidOf(algorithm.children[0]),
    signatureParameters: algorithm.children[1]?.tag,
    issuer: issuer.bytes,
    subject: subject.bytes,
    timeTags: validity.children.map(t => t.tag),
    extensions: byOid,
  };
}

const KEY_USAGE_NAMES = ['digitalSignature', 'nonRepudiation', 'keyEncipherment', 'dataEncipherment', 'keyAgreement', 'keyCertSign', 'cRLSign'];

/** The named bits of a keyUsage BIT STRING. */
function keyUsageOf(node: Node): string[] {
  const [unused, ...octets] = node.bytes;
  const names: string[] = [];
  octets.forEach((octet, i) => {
    for (let bit = 0; bit < 8; bit++) if (octet & (0x80 >> bit)) names.push(KEY_USAGE_NAMES[i * 8 + bit]);
  });
  // DER: no trailing zero bits, and the unused ones are zero.
  expect(octets[octets.length - 1] & ((1 << unused) - 1)).toBe(0);
  expect(octets[octets.length - 1] & (1 << unused)).not.toBe(0);
  return names;
}

/** The SHA-1 of a public key's subjectPublicKey bits (RFC 5280, 4.2.1.2, method 1). */
function keyIdOf(pem: string): Buffer {
  const spki = parseDer(new X509Certificate(pem).publicKey.export({ type: 'spki', format: 'der' }));
  return createHash('sha1').update(spki.children[1].bytes.subarray(1)).digest();
}

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
    expect(cert.checkIssued(cert)).toBe(true);
    expect(cert.checkPrivateKey(createPrivateKey(ca.key))).toBe(true);
  });

  test('is an X.509 v3 certificate whose issuer is its subject, byte for byte', () => {
    const decoded = decode(ca.cert);
    expect(decoded.version).toBe(3);
    expect(decoded.issuer).toEqual(decoded.subject);
  });

  test('marks basicConstraints critical, a CA for end-entity certificates only', () => {
    const { critical, value } = decode(ca.cert).extensions['2.5.29.19'];
    expect(critical).toBe(true);
    // cA TRUE, pathLenConstraint 0.
    expect(value.children.map(c => [c.tag, [...c.bytes]])).toEqual([[0x01, [0xff]], [0x02, [0]]]);
  });

  test('allows signing certificates and CRLs, in a critical keyUsage', () => {
    const { critical, value } = decode(ca.cert).extensions['2.5.29.15'];
    expect(critical).toBe(true);
    expect(keyUsageOf(value)).toEqual(['digitalSignature', 'keyCertSign', 'cRLSign']);
  });

  test('identifies its key, as subject and as authority', () => {
    const { extensions } = decode(ca.cert);
    expect(extensions['2.5.29.14']).toEqual({ critical: false, value: expect.objectContaining({ tag: 0x04, bytes: keyIdOf(ca.cert) }) });
    const authority = extensions['2.5.29.35'];
    expect(authority.critical).toBe(false);
    expect(authority.value.children).toEqual([expect.objectContaining({ tag: 0x80, bytes: keyIdOf(ca.cert) })]);
    expect(Object.keys(extensions).sort()).toEqual(['2.5.29.14', '2.5.29.15', '2.5.29.19', '2.5.29.35']);
  });

  test('is valid ten years, from an hour before now', () => {
    expect(CA_VALIDITY_DAYS).toBe(3650);
    expect(validFrom(ca.cert)).toEqual(new Date(T0.getTime() - HOUR));
    expect(validTo(ca.cert)).toEqual(new Date(T0.getTime() + 3650 * DAY));
    expect(expiryOf(ca.cert)).toEqual(validTo(ca.cert));
  });

  test('uses ECDSA P-256, SHA-256 and a positive 16-byte serial number', () => {
    const key = createPrivateKey(ca.key);
    expect(key.asymmetricKeyType).toBe('ec');
    expect(key.asymmetricKeyDetails).toEqual({ namedCurve: 'prime256v1' });
    const decoded = decode(ca.cert);
    expect(decoded.signatureAlgorithm).toBe('1.2.840.10045.4.3.2');
    // RFC 5758: no parameters.
    expect(decoded.signatureParameters).toBeUndefined();
    const serial = new X509Certificate(ca.cert).serialNumber;
    expect(serial).toMatch(/^[0-9A-F]{32}$/);
    expect(parseInt(serial[0], 16)).toBeLessThan(8);
    expect(serial.slice(0, 2)).not.toBe('00');
  });

  test('writes the key as PKCS#8 PEM with LF line ends', () => {
    for (const pair of [ca, serving]) {
      expect(pair.key).toMatch(/^-----BEGIN PRIVATE KEY-----\n[A-Za-z0-9+/=\n]+\n-----END PRIVATE KEY-----\n$/);
      expect(pair.cert).toMatch(/^-----BEGIN CERTIFICATE-----\n([A-Za-z0-9+/=]{64}\n)*[A-Za-z0-9+/=]{1,64}\n-----END CERTIFICATE-----\n$/);
    }
  });

  test('gives every CA its own key and serial number', () => {
    expect(otherCa.key).not.toBe(ca.key);
    expect(new X509Certificate(otherCa.cert).serialNumber).not.toBe(new X509Certificate(ca.cert).serialNumber);
  });

  test('writes UTCTime until 2049 and GeneralizedTime from 2050 on, and expires on the right day', () => {
    const late = new Date('2045-06-01T00:00:00Z');
    const lateCa = createCertificateAuthority('late-ca', late);
    expect(decode(lateCa.cert).timeTags).toEqual([0x17, 0x18]);
    expect(decode(ca.cert).timeTags).toEqual([0x17, 0x17]);
    expect(expiryOf(lateCa.cert)).toEqual(new Date(late.getTime() + 3650 * DAY));
    expect(certificateProblems(lateCa, { now: new Date('2050-06-01T00:00:00Z'), validForDays: 30 })).toEqual([]);

    const later = createCertificateAuthority('later-ca', new Date('2050-01-01T01:00:00Z'));
    expect(decode(later.cert).timeTags).toEqual([0x18, 0x18]);
    expect(validFrom(later.cert)).toEqual(new Date('2050-01-01T00:00:00Z'));
    // One second earlier, the start is still a UTCTime.
    expect(decode(createCertificateAuthority('edge-ca', new Date('2050-01-01T00:59:59Z')).cert).timeTags).toEqual([0x17, 0x18]);
  });

  test('drops the milliseconds of now', () => {
    const now = new Date('2027-03-01T12:00:00.999Z');
    const cert = createCertificateAuthority('ms-ca', now).cert;
    expect(validFrom(cert)).toEqual(new Date('2027-03-01T11:00:00Z'));
  });
});

describe('createServingCertificate', () => {
  test('is signed by the CA', () => {
    const cert = new X509Certificate(serving.cert);
    expect(cert.verify(new X509Certificate(ca.cert).publicKey)).toBe(true);
    expect(cert.verify(new X509Certificate(otherCa.cert).publicKey)).toBe(false);
    expect(cert.issuer).toBe('CN=serverless-webhook-ca');
    expect(cert.checkIssued(new X509Certificate(ca.cert))).toBe(true);
    expect(cert.checkIssued(new X509Certificate(otherCa.cert))).toBe(false);
    expect(decode(serving.cert).issuer).toEqual(decode(ca.cert).subject);
  });

  test('holds the Service\'s DNS names, the first as its CN', () => {
    const cert = new X509Certificate(serving.cert);
    expect(cert.subjectAltName).toBe(NAMES.map(n => `DNS:${n}`).join(', '));
    expect(cert.subject).toBe('CN=serverless-webhook');
    for (const name of NAMES) expect(cert.checkHost(name)).toBe(name);
    expect(cert.checkHost('other.kyma-system.svc')).toBeUndefined();
    const san = decode(serving.cert).extensions['2.5.29.17'];
    expect(san.critical).toBe(false);
    expect(san.value.children.map(c => [c.tag, c.bytes.toString('ascii')])).toEqual(NAMES.map(n => [0x82, n]));
  });

  test('is a server certificate, not a CA', () => {
    const cert = new X509Certificate(serving.cert);
    expect(cert.ca).toBe(false);
    // Node calls the extended key usage keyUsage.
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    const { extensions } = decode(serving.cert);
    // cA FALSE is the default, which DER leaves out.
    expect(extensions['2.5.29.19']).toEqual({ critical: true, value: expect.objectContaining({ tag: 0x30, children: [] }) });
    expect(extensions['2.5.29.15'].critical).toBe(true);
    // An EC key signs; it never enciphers a key.
    expect(keyUsageOf(extensions['2.5.29.15'].value)).toEqual(['digitalSignature']);
    expect(extensions['2.5.29.37'].critical).toBe(false);
    expect(extensions['2.5.29.37'].value.children.map(oidOf)).toEqual(['1.3.6.1.5.5.7.3.1']);
  });

  test('identifies its key, and its CA\'s', () => {
    const { extensions } = decode(serving.cert);
    expect(extensions['2.5.29.14'].value.bytes).toEqual(keyIdOf(serving.cert));
    expect(extensions['2.5.29.35'].value.children).toEqual([expect.objectContaining({ tag: 0x80, bytes: keyIdOf(ca.cert) })]);
    expect(Object.keys(extensions).sort()).toEqual(['2.5.29.14', '2.5.29.15', '2.5.29.17', '2.5.29.19', '2.5.29.35', '2.5.29.37']);
  });

  test('uses ECDSA P-256 and SHA-256', () => {
    expect(createPrivateKey(serving.key).asymmetricKeyDetails).toEqual({ namedCurve: 'prime256v1' });
    expect(decode(serving.cert).signatureAlgorithm).toBe('1.2.840.10045.4.3.2');
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

  test('throws when there is no DNS name', () => {
    expect(() => createServingCertificate(ca, [], T0)).toThrow('A serving certificate needs at least one DNS name, and no empty one: got []');
    expect(() => createServingCertificate(ca, ['a', ''], T0)).toThrow(/no empty one: got \["a",""\]/);
  });

  test('throws when a DNS name is not ASCII', () => {
    expect(() => createServingCertificate(ca, ['bücher.example'], T0)).toThrow('The DNS name "bücher.example" must be ASCII (an IA5String)');
  });

  test('throws when the CA key does not belong to the CA', () => {
    expect(() => createServingCertificate({ cert: ca.cert, key: otherCa.key }, NAMES, T0)).toThrow('The CA key does not belong to the CA certificate');
  });

  test('asks for keyEncipherment only for an RSA key', () => {
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const usage = servingKeyUsage(publicKey);
    expect(usage.critical).toBe(true);
    expect(keyUsageOf(parseDer(usage.value))).toEqual(['digitalSignature', 'keyEncipherment']);
  });
});

describe('an RSA CA of the node-forge version, as old Secrets hold it', () => {
  const createdAt = () => new Date(FORGE.createdAt);

  test('is still accepted, with its serving certificate, until it needs renewal', () => {
    const now = new Date(createdAt().getTime() + 100 * DAY);
    expect(createPrivateKey(FORGE.ca.key).asymmetricKeyType).toBe('rsa');
    expect(certificateProblems(FORGE.ca, { now, validForDays: 30 })).toEqual([]);
    expect(certificateProblems(FORGE.serving, { now, validForDays: 30, dnsNames: NAMES, issuer: FORGE.ca.cert })).toEqual([]);
    const renewAt = new Date(validTo(FORGE.serving.cert).getTime() - 29 * DAY);
    expect(certificateProblems(FORGE.serving, { now: renewAt, validForDays: 30, dnsNames: NAMES, issuer: FORGE.ca.cert }))
      .toEqual([expect.stringMatching(/^it expires /)]);
  });

  test('signs a renewed serving certificate with sha256WithRSAEncryption, naming it as it names itself', () => {
    const now = new Date(createdAt().getTime() + 340 * DAY);
    const renewed = createServingCertificate(FORGE.ca, NAMES, now);

    expect(certificateProblems(renewed, { now, validForDays: 364, dnsNames: NAMES, issuer: FORGE.ca.cert })).toEqual([]);
    const decoded = decode(renewed.cert);
    expect(decoded.signatureAlgorithm).toBe('1.2.840.113549.1.1.11');
    // RFC 4055: the parameters are NULL.
    expect(decoded.signatureParameters).toBe(0x05);
    // node-forge wrote the CN as a PrintableString: the issuer is copied, not rewritten.
    expect(decoded.issuer).toEqual(decode(FORGE.ca.cert).subject);
    expect(decode(FORGE.ca.cert).subject.includes(Buffer.from([0x13, 21]))).toBe(true);
    // The authority key identifier is the CA's own subjectKeyIdentifier.
    expect(decoded.extensions['2.5.29.35'].value.children[0].bytes).toEqual(decode(FORGE.ca.cert).extensions['2.5.29.14'].value.bytes);
    // The new key is ECDSA, whatever the CA's is.
    expect(keyUsageOf(decoded.extensions['2.5.29.15'].value)).toEqual(['digitalSignature']);
  });
});

/** Serves `pair` over HTTPS and connects as the API server does: to the Service's name, trusting `trusted`. */
async function handshake(pair: CertificatePair, trusted: string, servername = SERVICE_HOST): Promise<string> {
  const server = https.createServer({ cert: pair.cert, key: pair.key }, (_req, res) => res.end('hello'));
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  try {
    return await new Promise<string>((resolve, reject) => {
      const port = (server.address() as AddressInfo).port;
      const req = https.get({ host: '127.0.0.1', port, servername, ca: trusted, agent: false, headers: { host: servername } }, res => {
        let body = '';
        res.on('data', chunk => { body += chunk; });
        res.on('end', () => resolve(body));
      });
      req.on('error', reject);
    });
  } finally {
    server.closeAllConnections();
    await new Promise(resolve => server.close(resolve));
  }
}

describe('TLS with the certificates', () => {
  let now: CertificatePair;
  let nowCa: CertificatePair;

  beforeAll(() => {
    // Valid now, in real time, which TLS checks against.
    nowCa = createCertificateAuthority('serverless-webhook-ca');
    now = createServingCertificate(nowCa, NAMES);
  });

  test('a client that trusts only the CA and checks the Service\'s name completes the handshake', async () => {
    await expect(handshake(now, nowCa.cert)).resolves.toBe('hello');
  });

  test('a client that trusts another CA refuses the certificate', async () => {
    await expect(handshake(now, createCertificateAuthority('another-ca').cert)).rejects.toMatchObject({ code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' });
  });

  test('a client that expects another name refuses the certificate', async () => {
    await expect(handshake(now, nowCa.cert, 'other.kyma-system.svc')).rejects.toMatchObject({ code: 'ERR_TLS_CERT_ALTNAME_INVALID' });
  });

  test('a bundle of a new and an old CA trusts certificates of both', async () => {
    const next = createCertificateAuthority('serverless-webhook-ca');
    await expect(handshake(createServingCertificate(next, NAMES), next.cert + nowCa.cert)).resolves.toBe('hello');
    await expect(handshake(now, next.cert + nowCa.cert)).resolves.toBe('hello');
  });

  test('a certificate renewed from an old RSA CA is trusted by that CA', async () => {
    await expect(handshake(createServingCertificate(FORGE.ca, NAMES), FORGE.ca.cert)).resolves.toBe('hello');
  });
});

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const OPENSSL = hasOpenssl();

describe(OPENSSL ? 'openssl' : 'openssl (skipped: openssl is not on the PATH)', () => {
  const itIf = OPENSSL ? test : test.skip;
  let dir: string;
  const write = (name: string, text: string) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, text);
    return file;
  };
  const openssl = (...args: string[]) => execFileSync('openssl', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const attime = (date: Date) => String(Math.floor(date.getTime() / 1000));

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'certificates-'));
  });

  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  itIf('verifies the serving certificate against the CA, strictly, for the Service\'s name and for TLS servers', () => {
    const at = new Date(T0.getTime() + DAY);
    const args = ['verify', '-x509_strict', '-attime', attime(at), '-purpose', 'sslserver', '-verify_hostname', SERVICE_HOST];
    expect(openssl(...args, '-CAfile', write('ca.pem', ca.cert), write('serving.pem', serving.cert))).toContain('OK');
    expect(() => openssl(...args, '-CAfile', write('other.pem', otherCa.cert), write('serving.pem', serving.cert))).toThrow(/unable to get local issuer/);
  });

  itIf('verifies a certificate renewed from an old RSA CA', () => {
    const now = new Date(new Date(FORGE.createdAt).getTime() + 340 * DAY);
    const renewed = createServingCertificate(FORGE.ca, NAMES, now);
    expect(openssl('verify', '-x509_strict', '-attime', attime(now), '-CAfile', write('rsa-ca.pem', FORGE.ca.cert), write('renewed.pem', renewed.cert)))
      .toContain('OK');
  });

  itIf('reads back what was written', () => {
    const text = openssl('x509', '-noout', '-text', '-in', write('serving.pem', serving.cert));
    expect(text).toContain('Version: 3 (0x2)');
    expect(text).toContain('Signature Algorithm: ecdsa-with-SHA256');
    expect(text).toContain('Issuer: CN = serverless-webhook-ca');
    expect(text).toContain('Subject: CN = serverless-webhook');
    expect(text).toContain('ASN1 OID: prime256v1');
    expect(text).toMatch(/X509v3 Basic Constraints: critical\s+CA:FALSE/);
    expect(text).toMatch(/X509v3 Key Usage: critical\s+Digital Signature\n/);
    expect(text).toMatch(/X509v3 Extended Key Usage:\s+TLS Web Server Authentication/);
    expect(text).toContain(NAMES.map(n => `DNS:${n}`).join(', '));
    expect(openssl('x509', '-noout', '-text', '-in', write('ca.pem', ca.cert))).toMatch(/X509v3 Basic Constraints: critical\s+CA:TRUE, pathlen:0/);
  });
});

describe('any date and any names', () => {
  const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,14}[a-z0-9])?$/);
  const dnsName = fc.array(label, { minLength: 1, maxLength: 4 }).map(labels => labels.join('.'));

  test('make certificates that node:crypto reads back as they were meant', () => {
    fc.assert(fc.property(
      fc.date({ min: new Date('1951-01-01T00:00:00Z'), max: new Date('2300-01-01T00:00:00Z'), noInvalidDate: true }),
      fc.uniqueArray(dnsName, { minLength: 1, maxLength: 5 }),
      label,
      (now, names, commonName) => {
        const authority = createCertificateAuthority(commonName, now);
        const cert = createServingCertificate(authority, names, now);
        const x509 = new X509Certificate(cert.cert);
        expect(new X509Certificate(authority.cert).subject).toBe(`CN=${commonName}`);
        expect(x509.issuer).toBe(`CN=${commonName}`);
        expect(x509.subject).toBe(`CN=${names[0]}`);
        expect(validFrom(cert.cert)).toEqual(seconds(new Date(now.getTime() - HOUR)));
        expect(validTo(cert.cert)).toEqual(seconds(new Date(now.getTime() + 365 * DAY)));
        expect(validTo(authority.cert)).toEqual(seconds(new Date(now.getTime() + 3650 * DAY)));
        expect(certificateProblems(cert, { now, validForDays: 364, dnsNames: names, issuer: authority.cert })).toEqual([]);
      },
    ), { numRuns: 40 });
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

  // The PEM we hand out is LF, so a stored bundle and its rebuilt parts compare equal.
  test('gives a new CA\'s PEM back unchanged, so a stored bundle compares equal', () => {
    expect(splitPemBundle(ca.cert + otherCa.cert).join('')).toBe(ca.cert + otherCa.cert);
  });
});
