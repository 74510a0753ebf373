/**
 * The self-managed certificates: a CA, and a serving certificate it signs for the webhook's
 * Service. The CA lives ten years and goes into the webhook configurations' `caBundle`; the
 * serving certificate lives one year and is renewed from the same CA, so renewing it never
 * touches a `caBundle`.
 */
import { X509Certificate, createPrivateKey, randomBytes } from 'node:crypto';
import * as forge from 'node-forge';

/** A certificate and its private key, both PEM. */
export interface CertificatePair {
  readonly cert: string;
  readonly key: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** How long a new CA is valid. */
export const CA_VALIDITY_DAYS = 3650;

/** How long a new serving certificate is valid. */
export const SERVING_VALIDITY_DAYS = 365;

function newCertificate(publicKey: forge.pki.PublicKey, now: Date, days: number): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  // A positive serial number: the first bit of the first byte cleared.
  const serial = randomBytes(16);
  serial[0] &= 0x7f;
  cert.serialNumber = serial.toString('hex');
  // An hour of slack for clocks that lag behind.
  cert.validity.notBefore = new Date(now.getTime() - 60 * 60 * 1000);
  cert.validity.notAfter = new Date(now.getTime() + days * DAY_MS);
  return cert;
}

/**
 * Creates a CA: RSA 2048, SHA-256, valid {@link CA_VALIDITY_DAYS} days.
 *
 * @param commonName its subject's CN
 * @param now the time it is created
 */
export function createCertificateAuthority(commonName: string, now: Date = new Date()): CertificatePair {
  const keys = forge.pki.rsa.generateKeyPair({ bits: 2048 });
  const cert = newCertificate(keys.publicKey, now, CA_VALIDITY_DAYS);
  const subject = [{ name: 'commonName', value: commonName }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  return pemPair(cert, keys.privateKey);
}

/** PEM with LF line ends (node-forge writes CRLF), so that stored and rebuilt bundles compare equal. */
function pemPair(cert: forge.pki.Certificate, key: forge.pki.PrivateKey): CertificatePair {
  const lf = (pem: string) => pem.replace(/\r\n/g, '\n');
  return { cert: lf(forge.pki.certificateToPem(cert)), key: lf(forge.pki.privateKeyToPem(key)) };
}

/**
 * Creates a serving certificate signed by a CA: RSA 2048, SHA-256, for the given DNS names,
 * valid {@link SERVING_VALIDITY_DAYS} days (never beyond the CA).
 *
 * @param ca the signing CA
 * @param dnsNames its subject alternative names; the first is also its CN
 * @param now the time it is created
 */
export function createServingCertificate(ca: CertificatePair, dnsNames: readonly string[], now: Date = new Date()): CertificatePair {
  const caCert = forge.pki.certificateFromPem(ca.cert);
  const caKey = forge.pki.privateKeyFromPem(ca.key);
  const keys = forge.pki.rsa.generateKeyPair({ bits: 2048 });
  const cert = newCertificate(keys.publicKey, now, SERVING_VALIDITY_DAYS);
  if (cert.validity.notAfter > caCert.validity.notAfter) cert.validity.notAfter = caCert.validity.notAfter;
  cert.setSubject([{ name: 'commonName', value: dnsNames[0] }]);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: dnsNames.map(value => ({ type: 2, value })) },
  ]);
  cert.sign(caKey, forge.md.sha256.create());
  return pemPair(cert, keys.privateKey);
}

/** Splits a PEM bundle into its certificates. */
export function splitPemBundle(bundle: string): string[] {
  return bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g)?.map(p => p.trimEnd() + '\n') ?? [];
}

/** When a PEM certificate expires. @throws when it does not parse */
export function expiryOf(cert: string): Date {
  return new Date(new X509Certificate(cert).validTo);
}

/** Whether a PEM certificate parses and is still valid at `now`. */
export function isUnexpired(cert: string, now: Date): boolean {
  try {
    return expiryOf(cert) > now;
  } catch {
    return false;
  }
}

/** What {@link certificateProblems} requires of a certificate. */
export interface CertificateRequirements {
  /** The current time. */
  readonly now: Date;
  /** It must stay valid this many days beyond `now`. */
  readonly validForDays: number;
  /** Names it must hold (serving certificates). */
  readonly dnsNames?: readonly string[];
  /** The PEM of the CA that must have signed it. */
  readonly issuer?: string;
}

/**
 * Tells why a certificate pair cannot be used: it does not parse, its key does not match, it is
 * not valid yet or not for long enough, it lacks a DNS name, or the CA did not sign it.
 *
 * @param pair the certificate (the first of the PEM) and its key
 * @param required what it must satisfy
 * @returns one reason per problem; empty when the pair is good
 */
export function certificateProblems(pair: Partial<CertificatePair>, required: CertificateRequirements): string[] {
  if (!pair.cert || !pair.key) return ['the certificate or its key is missing'];
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(pair.cert);
    if (!cert.checkPrivateKey(createPrivateKey(pair.key))) return ['the key does not belong to the certificate'];
  } catch (e) {
    return [`it does not parse: ${(e as Error).message}`];
  }
  const problems: string[] = [];
  const renewAt = new Date(required.now.getTime() + required.validForDays * DAY_MS);
  if (new Date(cert.validTo) <= renewAt) {
    problems.push(`it expires ${new Date(cert.validTo).toISOString()}, less than ${required.validForDays} days from now`);
  }
  if (new Date(cert.validFrom) > required.now) problems.push(`it is not valid before ${new Date(cert.validFrom).toISOString()}`);
  for (const name of required.dnsNames ?? []) {
    if (!cert.checkHost(name, { wildcards: false })) problems.push(`it is not valid for ${name}`);
  }
  if (required.issuer) {
    let signed = false;
    try {
      signed = cert.verify(new X509Certificate(required.issuer).publicKey);
    } catch {
      signed = false;
    }
    if (!signed) problems.push('the CA did not sign it');
  }
  return problems;
}
