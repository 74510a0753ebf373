/**
 * The self-managed certificates: a CA, and a serving certificate it signs for the webhook's
 * Service. The CA lives ten years and goes into the webhook configurations' `caBundle`; the
 * serving certificate lives one year and is renewed from the same CA, so renewing it never
 * touches a `caBundle`.
 */
import { KeyObject, X509Certificate, createPrivateKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import {
  KeyUsageBit, authorityKeyIdentifier, basicConstraints, buildCertificate, certificatePem, commonNameOnly, dnsSubjectAltName, issuerFields,
  keyIdentifier, keyUsage, serverAuthOnly, servingKeyUsage, subjectKeyIdentifier,
} from './_x509';

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

/** A new ECDSA P-256 key pair: fast to make, small, and accepted by the Kubernetes API server. */
function newKeyPair(): { publicKey: KeyObject; privateKey: KeyObject } {
  return generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
}

/** PKCS#8 PEM with LF line ends, so that stored and rebuilt PEM compare equal. */
function keyPem(key: KeyObject): string {
  return (key.export({ type: 'pkcs8', format: 'pem' }) as string).replace(/\r\n/g, '\n');
}

/** A positive 16-byte serial number: the first bit cleared (not negative), the first byte not zero (exactly 16 bytes). */
function newSerial(): Buffer {
  const serial = randomBytes(16);
  serial[0] = (serial[0] & 0x7f) | 0x01;
  return serial;
}

/** An hour of slack for clocks that lag behind. */
function notBefore(now: Date): Date {
  return new Date(now.getTime() - 60 * 60 * 1000);
}

/**
 * Creates a CA: ECDSA P-256, SHA-256, valid {@link CA_VALIDITY_DAYS} days; basicConstraints
 * critical with `cA` (it signs only serving certificates: path length 0), keyUsage critical with
 * keyCertSign, cRLSign and digitalSignature, and its key identifier.
 *
 * @param commonName its subject's CN
 * @param now the time it is created
 */
export function createCertificateAuthority(commonName: string, now: Date = new Date()): CertificatePair {
  const keys = newKeyPair();
  const name = commonNameOnly(commonName);
  const id = keyIdentifier(keys.publicKey);
  const der = buildCertificate({
    serial: newSerial(),
    issuer: name,
    subject: name,
    notBefore: notBefore(now),
    notAfter: new Date(now.getTime() + CA_VALIDITY_DAYS * DAY_MS),
    publicKey: keys.publicKey,
    extensions: [
      basicConstraints(true),
      keyUsage([KeyUsageBit.DIGITAL_SIGNATURE, KeyUsageBit.KEY_CERT_SIGN, KeyUsageBit.CRL_SIGN]),
      subjectKeyIdentifier(id),
      authorityKeyIdentifier(id),
    ],
    signingKey: keys.privateKey,
  });
  return { cert: certificatePem(der), key: keyPem(keys.privateKey) };
}

/**
 * Creates a serving certificate signed by a CA: ECDSA P-256, for the given DNS names, valid
 * {@link SERVING_VALIDITY_DAYS} days (never beyond the CA). It is not a CA; its keyUsage is
 * digitalSignature (critical), its extKeyUsage serverAuth. The CA may be an ECDSA CA of this
 * module or an RSA CA of its earlier versions (signed then with sha256WithRSAEncryption).
 *
 * @param ca the signing CA
 * @param dnsNames its subject alternative names; the first is also its CN
 * @param now the time it is created
 * @throws when there is no DNS name, or the CA's certificate or key cannot be used
 */
export function createServingCertificate(ca: CertificatePair, dnsNames: readonly string[], now: Date = new Date()): CertificatePair {
  if (!dnsNames.length || dnsNames.some(name => !name)) {
    throw new Error(`A serving certificate needs at least one DNS name, and no empty one: got ${JSON.stringify(dnsNames)}`);
  }
  const caCert = new X509Certificate(ca.cert);
  const caKey = createPrivateKey(ca.key);
  if (!caCert.checkPrivateKey(caKey)) throw new Error('The CA key does not belong to the CA certificate');
  const issuer = issuerFields(caCert);
  const keys = newKeyPair();
  const notAfter = new Date(Math.min(now.getTime() + SERVING_VALIDITY_DAYS * DAY_MS, issuer.notAfter.getTime()));
  const der = buildCertificate({
    serial: newSerial(),
    issuer: issuer.subject,
    subject: commonNameOnly(dnsNames[0]),
    notBefore: notBefore(now),
    notAfter,
    publicKey: keys.publicKey,
    extensions: [
      basicConstraints(false),
      servingKeyUsage(keys.publicKey),
      serverAuthOnly(),
      dnsSubjectAltName(dnsNames),
      subjectKeyIdentifier(keyIdentifier(keys.publicKey)),
      authorityKeyIdentifier(issuer.keyIdentifier),
    ],
    signingKey: caKey,
  });
  return { cert: certificatePem(der), key: keyPem(keys.privateKey) };
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
