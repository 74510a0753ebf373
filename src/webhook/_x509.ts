/**
 * Writes X.509 v3 certificates (RFC 5280) with `node:crypto` and the DER encoder beside it, and
 * reads back the few fields of an issuer that a certificate it signs must copy.
 */
import { KeyObject, X509Certificate, createHash, sign } from 'node:crypto';
import {
  DerError, TAG, bitString, boolean, explicit, ia5Bytes, implicitPrimitive, namedBitString, nullValue, objectIdentifier, octetString, readChildren,
  readObjectIdentifier, readSingle, sequence, setOf, smallInteger, unsignedInteger, utf8String, x509Time,
} from './_der';

/** Object identifiers this module writes or reads. */
export const OID = {
  commonName: '2.5.4.3',
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  authorityKeyIdentifier: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  sha256WithRSAEncryption: '1.2.840.113549.1.1.11',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
} as const;

/** The KeyUsage bits (RFC 5280, 4.2.1.3) this module sets. */
export enum KeyUsageBit {
  DIGITAL_SIGNATURE = 0,
  KEY_ENCIPHERMENT = 2,
  KEY_CERT_SIGN = 5,
  CRL_SIGN = 6,
}

/** One extension: its OID, whether it is critical, and its DER-encoded value. */
export interface Extension {
  readonly oid: string;
  readonly critical: boolean;
  readonly value: Buffer;
}

/** What a new certificate holds. */
export interface CertificateSpec {
  /** The serial number's bytes, big-endian; must be positive. */
  readonly serial: Buffer;
  /** The issuer's Name, DER-encoded: the CA's subject, byte for byte. */
  readonly issuer: Buffer;
  /** The subject's Name, DER-encoded. */
  readonly subject: Buffer;
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** The subject's public key. */
  readonly publicKey: KeyObject;
  readonly extensions: readonly Extension[];
  /** The issuer's private key, which signs. */
  readonly signingKey: KeyObject;
}

/** A Name with only a common name, as a UTF8String (RFC 5280, 4.1.2.6). */
export function commonNameOnly(commonName: string): Buffer {
  return sequence(setOf(sequence(objectIdentifier(OID.commonName), utf8String(commonName))));
}

/**
 * The key identifier of a public key: the SHA-1 of its subjectPublicKey BIT STRING's bits
 * (RFC 5280, 4.2.1.2, method 1), as most CAs compute it.
 */
export function keyIdentifier(publicKey: KeyObject): Buffer {
  const spki = readChildren(readSingle(publicKey.export({ type: 'spki', format: 'der' })));
  const bits = spki[1];
  if (bits?.tag !== TAG.BIT_STRING || bits.content[0] !== 0) throw new DerError('the public key is not a BIT STRING of whole octets');
  return createHash('sha1').update(bits.content.subarray(1)).digest();
}

/** basicConstraints: a CA that signs only end-entity certificates (path length 0), or not a CA. */
export function basicConstraints(ca: boolean): Extension {
  // cA DEFAULT FALSE: DER leaves a default value out.
  return { oid: OID.basicConstraints, critical: true, value: ca ? sequence(boolean(true), smallInteger(0)) : sequence() };
}

/** keyUsage, always critical. */
export function keyUsage(bits: readonly KeyUsageBit[]): Extension {
  return { oid: OID.keyUsage, critical: true, value: namedBitString(bits) };
}

/**
 * The keyUsage of a serving certificate: digitalSignature, and keyEncipherment for an RSA key
 * (TLS 1.2 RSA key exchange encrypts with it; an EC key never does).
 */
export function servingKeyUsage(publicKey: KeyObject): Extension {
  const rsa = publicKey.asymmetricKeyType === 'rsa';
  return keyUsage(rsa ? [KeyUsageBit.DIGITAL_SIGNATURE, KeyUsageBit.KEY_ENCIPHERMENT] : [KeyUsageBit.DIGITAL_SIGNATURE]);
}

/** extKeyUsage: TLS server authentication. */
export function serverAuthOnly(): Extension {
  return { oid: OID.extKeyUsage, critical: false, value: sequence(objectIdentifier(OID.serverAuth)) };
}

/** subjectAltName with DNS names; not critical, as the subject is not empty. */
export function dnsSubjectAltName(dnsNames: readonly string[]): Extension {
  const names = dnsNames.map(name => implicitPrimitive(2, ia5Bytes(name, `The DNS name ${JSON.stringify(name)}`)));
  return { oid: OID.subjectAltName, critical: false, value: sequence(...names) };
}

/** subjectKeyIdentifier. */
export function subjectKeyIdentifier(id: Buffer): Extension {
  return { oid: OID.subjectKeyIdentifier, critical: false, value: octetString(id) };
}

/** authorityKeyIdentifier with the issuer's key identifier only. */
export function authorityKeyIdentifier(id: Buffer): Extension {
  return { oid: OID.authorityKeyIdentifier, critical: false, value: sequence(implicitPrimitive(0, id)) };
}

/** The signature algorithm for a signing key, and how `crypto.sign` is called with it. */
function signatureAlgorithm(key: KeyObject): { identifier: Buffer; digest: string } {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      // RFC 4055: the parameters of sha256WithRSAEncryption are NULL.
      return { identifier: sequence(objectIdentifier(OID.sha256WithRSAEncryption), nullValue()), digest: 'sha256' };
    case 'ec':
      // RFC 5758: ecdsa-with-SHA256 has no parameters.
      return { identifier: sequence(objectIdentifier(OID.ecdsaWithSha256)), digest: 'sha256' };
    default:
      throw new Error(`Cannot sign with a ${key.asymmetricKeyType} key: the CA key must be an RSA or EC key`);
  }
}

function encodeExtension(extension: Extension): Buffer {
  return sequence(objectIdentifier(extension.oid), ...(extension.critical ? [boolean(true)] : []), octetString(extension.value));
}

/** Writes and signs a certificate; returns its DER. */
export function buildCertificate(spec: CertificateSpec): Buffer {
  if (!spec.serial.length || spec.serial[0] & 0x80 || spec.serial.every(octet => octet === 0)) throw new RangeError('The serial number must be positive');
  if (spec.notAfter.getTime() <= spec.notBefore.getTime()) {
    throw new RangeError(`notAfter (${spec.notAfter.toISOString()}) must be later than notBefore (${spec.notBefore.toISOString()})`);
  }
  const algorithm = signatureAlgorithm(spec.signingKey);
  const tbs = sequence(
    explicit(0, smallInteger(2)), // v3
    unsignedInteger(spec.serial),
    algorithm.identifier,
    spec.issuer,
    sequence(x509Time(spec.notBefore), x509Time(spec.notAfter)),
    spec.subject,
    spec.publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, sequence(...spec.extensions.map(encodeExtension))),
  );
  const signature = sign(algorithm.digest, tbs, spec.signingKey);
  return sequence(tbs, algorithm.identifier, bitString(signature));
}

/** PEM of a DER certificate: base64 in lines of 64, LF line ends. */
export function certificatePem(der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}

/** What a certificate that an issuer signs copies from it. */
export interface IssuerFields {
  /** The issuer's subject Name, DER, byte for byte. */
  readonly subject: Buffer;
  /** Its subjectKeyIdentifier, or one computed from its key when it has none. */
  readonly keyIdentifier: Buffer;
  /** When it expires. */
  readonly notAfter: Date;
}

/**
 * Reads what {@link IssuerFields} lists from a certificate.
 *
 * @throws when the certificate is not X.509 v3 DER as RFC 5280 lays it out
 */
export function issuerFields(cert: X509Certificate): IssuerFields {
  try {
    const [tbs] = readChildren(readSingle(cert.raw));
    const fields = readChildren(tbs);
    // version [0] is optional (absent for v1); serial, signature, issuer, validity, subject follow.
    const base = fields[0]?.tag === 0xa0 ? 1 : 0;
    const subject = fields[base + 4];
    if (subject?.tag !== TAG.SEQUENCE) throw new DerError('no subject Name');
    let id: Buffer | undefined;
    const extensions = fields.find(f => f.tag === 0xa3);
    if (extensions) {
      for (const extension of readChildren(readChildren(extensions)[0])) {
        const parts = readChildren(extension);
        if (readObjectIdentifier(parts[0]) !== OID.subjectKeyIdentifier) continue;
        const value = parts[parts.length - 1];
        const inner = readSingle(value.content);
        if (inner.tag !== TAG.OCTET_STRING) throw new DerError('a subjectKeyIdentifier that is not an OCTET STRING');
        id = Buffer.from(inner.content);
      }
    }
    return {
      subject: Buffer.from(subject.encoded),
      keyIdentifier: id ?? keyIdentifier(cert.publicKey),
      notAfter: new Date(cert.validTo),
    };
  } catch (e) {
    if (e instanceof DerError) throw new Error(`The CA certificate cannot be read: ${e.message}`);
    throw e;
  }
}
