/**
 * Signing credentials for the `sign` option (issue 25): a PKCS#12 file (.p12/.pfx) opened
 * in memory with node-forge (which reads the legacy 3DES/RC2 files of older tools as well as
 * OpenSSL 3's AES/PBKDF2 ones), its key handed to node:crypto as a KeyObject. The key never
 * leaves this process: engines (the sandbox) only ever see the PDF.
 *
 * A customer's file is hostile input (issue 45): its iteration counts are read and held to
 * {@link PKCS12_LIMITS} before any key is derived (`pkcs12-scan.ts`), node-forge's
 * derivations run native and bounded (`pkcs12-kdf.ts`), and the service opens uploads with
 * `openPkcs12` (`pkcs12-open.ts`), in a worker thread with a heap cap and a time-out.
 */
import { createHash, createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import forge from 'node-forge';
import { DerivationRefused, withBoundedDerivations } from './pkcs12-kdf.js';
import { PKCS12_LIMITS, scanPkcs12, type Pkcs12Limits } from './pkcs12-scan.js';

/** A certificate and its private key, ready to sign; never serialised into answers, logs or errors. */
export interface SigningCredential {
  readonly privateKey: KeyObject;
  /** The signer's certificate, DER. */
  readonly certificate: Buffer;
  /** The other certificates of the file (issuers), DER, carried in the signature for validators. */
  readonly chain: readonly Buffer[];
  readonly facts: CertificateFacts;
}

/** What may be shown of a certificate. */
export interface CertificateFacts {
  /** The subject's common name (or the whole subject when it has none). */
  readonly commonName: string;
  readonly subject: string;
  readonly issuer: string;
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** SHA-256 of the certificate's DER, lower-case hex. */
  readonly sha256: string;
}

/** Why a PKCS#12 file cannot be used; `message` is safe to send (it never carries the password). */
export class CredentialError extends Error {
  constructor(
    message: string,
    /** The upload's part at fault: `password` for a wrong one, else `file`. */
    readonly field: 'file' | 'password' = 'file',
  ) {
    super(message);
    this.name = 'CredentialError';
  }
}

/** Largest PKCS#12 file accepted (a key and a chain of a few certificates is a few KB). */
export const MAX_PKCS12_BYTES = 64 * 1024;

/** Refuses a file past {@link MAX_PKCS12_BYTES} or whose iteration counts are past `limits` (no key derived yet). */
export function checkPkcs12(bytes: Uint8Array, limits: Pkcs12Limits = PKCS12_LIMITS): void {
  if (bytes.length === 0 || bytes.length > MAX_PKCS12_BYTES) throw new CredentialError(`The certificate file must be a PKCS#12 (.p12/.pfx) file of at most ${MAX_PKCS12_BYTES / 1024} KB.`);
  const scan = scanPkcs12(bytes, limits);
  if (!scan.ok) throw new CredentialError(scan.message);
}

/**
 * Opens a PKCS#12 file with its password: the one private key it holds and the certificate
 * that matches it (the others become the chain). Throws {@link CredentialError} for a wrong
 * password, a file without a key or certificate, a certificate outside its validity at `now`,
 * or iteration counts past `limits`. Synchronous: the service opens customers' files with
 * `openPkcs12`, which runs this in a worker thread.
 */
export function loadPkcs12(bytes: Uint8Array, password: string, now: Date = new Date(), limits: Pkcs12Limits = PKCS12_LIMITS): SigningCredential {
  checkPkcs12(bytes, limits);
  let p12: forge.pkcs12.Pkcs12Pfx;
  try {
    const asn1 = forge.asn1.fromDer(forge.util.createBuffer(Buffer.from(bytes).toString('binary')));
    p12 = withBoundedDerivations(() => forge.pkcs12.pkcs12FromAsn1(asn1, false, password), limits);
  } catch (err) {
    if (err instanceof DerivationRefused) throw new CredentialError(err.message);
    const wrong = err instanceof Error && /password|mac|decrypt|invalid/i.test(err.message);
    if (wrong) throw new CredentialError('The certificate file could not be opened: wrong password, or not a PKCS#12 file.', 'password');
    throw new CredentialError('The certificate file is not a readable PKCS#12 (.p12/.pfx) file.');
  }
  const bags = (type: string | undefined): forge.pkcs12.Bag[] => (type ? (p12.getBags({ bagType: type })[type] ?? []) : []);
  const keyBags = [...bags(forge.pki.oids.pkcs8ShroudedKeyBag), ...bags(forge.pki.oids.keyBag)];
  const certBags = bags(forge.pki.oids.certBag);
  if (keyBags.length !== 1) throw new CredentialError(keyBags.length ? 'The certificate file holds more than one private key.' : 'The certificate file holds no private key.');
  const keyBag = keyBags[0]!;
  // forge decodes RSA keys and certificates itself; others (EC) it leaves as ASN.1.
  const keyAsn1 = keyBag.key ? forge.pki.wrapRsaPrivateKey(forge.pki.privateKeyToAsn1(keyBag.key)) : (keyBag as { asn1?: forge.asn1.Asn1 }).asn1;
  if (!keyAsn1) throw new CredentialError('The certificate file holds no usable private key.');
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({ key: Buffer.from(forge.asn1.toDer(keyAsn1).getBytes(), 'binary'), format: 'der', type: 'pkcs8' });
  } catch {
    throw new CredentialError('The private key of the certificate file is of an unsupported kind.');
  }
  if (privateKey.asymmetricKeyType !== 'rsa' && privateKey.asymmetricKeyType !== 'ec') throw new CredentialError('Only RSA and EC (P-256, P-384, P-521) keys can sign.');
  const certs: Buffer[] = [];
  for (const bag of certBags) {
    const asn1 = bag.cert ? forge.pki.certificateToAsn1(bag.cert) : (bag as { asn1?: forge.asn1.Asn1 }).asn1;
    if (asn1) certs.push(Buffer.from(forge.asn1.toDer(asn1).getBytes(), 'binary'));
  }
  const own = certs.find((der) => {
    try {
      return new X509Certificate(der).checkPrivateKey(privateKey);
    } catch {
      return false;
    }
  });
  if (!own) throw new CredentialError('The certificate file holds no certificate for its private key.');
  const x509 = new X509Certificate(own);
  const notBefore = new Date(x509.validFrom);
  const notAfter = new Date(x509.validTo);
  if (now < notBefore) throw new CredentialError(`The certificate is not valid yet (from ${notBefore.toISOString()}).`);
  if (now > notAfter) throw new CredentialError(`The certificate expired on ${notAfter.toISOString()}.`);
  return { privateKey, certificate: own, chain: certs.filter((c) => c !== own), facts: certificateFacts(x509) };
}

function certificateFacts(x509: X509Certificate): CertificateFacts {
  const subject = x509.subject.split('\n').join(', ');
  const cn = /(?:^|\n)CN=([^\n]+)/.exec(x509.subject)?.[1];
  return {
    commonName: cn ?? subject,
    subject,
    issuer: x509.issuer.split('\n').join(', '),
    notBefore: new Date(x509.validFrom),
    notAfter: new Date(x509.validTo),
    sha256: createHash('sha256').update(x509.raw).digest('hex'),
  };
}

/** A credential as one string (its key PKCS#8 and certificates DER, base64), to be sealed at rest by the caller. */
export function credentialToText(c: SigningCredential): string {
  const der = (b: Buffer): string => b.toString('base64');
  return JSON.stringify({ key: der(c.privateKey.export({ type: 'pkcs8', format: 'der' })), certificate: der(c.certificate), chain: c.chain.map(der) });
}

/** The credential {@link credentialToText} wrote. */
export function credentialFromText(text: string): SigningCredential {
  const o = JSON.parse(text) as { key: string; certificate: string; chain: string[] };
  const certificate = Buffer.from(o.certificate, 'base64');
  return {
    privateKey: createPrivateKey({ key: Buffer.from(o.key, 'base64'), format: 'der', type: 'pkcs8' }),
    certificate,
    chain: o.chain.map((c) => Buffer.from(c, 'base64')),
    facts: certificateFacts(new X509Certificate(certificate)),
  };
}
