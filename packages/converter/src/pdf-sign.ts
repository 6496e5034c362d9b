/**
 * `sign` (issue 25): a PAdES baseline B-B signature (SubFilter ETSI.CAdES.detached) on the
 * finished PDF, the last PDF operation. The work is split by trust:
 * - the sandbox (pikepdf, `python/pdf-sign-prepare.py`) parses the hostile PDF and appends an
 *   incremental update with the signature field, its widget and appearance, and a signature
 *   dictionary whose /ByteRange and /Contents are fixed-width placeholders behind a comment
 *   carrying a random nonce;
 * - this process, which alone holds the private key, finds that nonce exactly once, checks the
 *   placeholders' shape, hashes the byte ranges and writes the CMS SignedData (pkijs) into
 *   /Contents. Signed attributes: content-type, message-digest, ESS signing-certificate-v2; no
 *   signing-time (ETSI EN 319 142-1: the claimed time is the dictionary's /M).
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { failed, invalid } from './errors.js';
import type { JobContext } from './engines/engine.js';
import { runPikepdfScript } from './engines/pikepdf-script.js';
import { acceptEngineOutput } from './guards/output-guard.js';
import type { SignOptions } from './sign-options.js';
import type { SigningCredential } from './signing-credential.js';

/** Bytes reserved for the CMS in /Contents (hex doubles it): a signature and a chain of a few certificates. */
export const SIGNATURE_BYTES = 16_384;

const OID = {
  data: '1.2.840.113549.1.7.1',
  signedData: '1.2.840.113549.1.7.2',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47',
  sha256: '2.16.840.1.101.3.4.2.1',
} as const;

/** Signs `file` with `credential`; answers the signed file's path (in the job folder). */
export async function signPdf(file: string, sign: SignOptions, credential: SigningCredential, job: JobContext, now: Date = new Date()): Promise<string> {
  const nonce = randomBytes(16).toString('hex');
  const prepared = join(job.dir, 'sign-prepared.pdf');
  await prepare(file, prepared, sign, credential, nonce, now, job);
  await acceptEngineOutput(prepared, job, 'pikepdf');
  const pdf = await readFile(prepared);
  const slot = findPlaceholder(pdf, nonce);
  const byteRange = [0, slot.contentsStart, slot.contentsEnd, pdf.length - slot.contentsEnd];
  const rangeText = Buffer.from(`/ByteRange [${byteRange.join(' ')}]`.padEnd(slot.byteRangeLength, ' ').replace(/\] +$/, (m) => ' '.repeat(m.length - 1) + ']'), 'latin1');
  rangeText.copy(pdf, slot.byteRangeStart);
  const digest = createHash('sha256').update(pdf.subarray(0, slot.contentsStart)).update(pdf.subarray(slot.contentsEnd)).digest();
  const cms = await buildCms(digest, credential);
  if (cms.length > SIGNATURE_BYTES) throw failed('The signature is larger than the space reserved for it.', `CMS ${cms.length} bytes`);
  Buffer.from(cms.toString('hex').padEnd(SIGNATURE_BYTES * 2, '0'), 'latin1').copy(pdf, slot.contentsStart + 1);
  const out = join(job.dir, 'signed.pdf');
  await writeFile(out, pdf);
  return out;
}

async function prepare(input: string, output: string, sign: SignOptions, credential: SigningCredential, nonce: string, now: Date, job: JobContext): Promise<void> {
  await rm(output, { force: true });
  const name = credential.facts.commonName;
  const date = now.toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
  const params = {
    nonce,
    contents_bytes: SIGNATURE_BYTES,
    m: `D:${now.toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`,
    name,
    visible: sign.visible,
    page: sign.page,
    box: sign.box ? [sign.box.x, sign.box.y, sign.box.width, sign.box.height] : null,
    reason: sign.reason ?? null,
    location: sign.location ?? null,
    contact: sign.contact ?? null,
    lines: [`Digitally signed by ${name}`, `Date: ${date}`, ...(sign.reason ? [`Reason: ${sign.reason}`] : []), ...(sign.location ? [`Location: ${sign.location}`] : [])],
  };
  const r = await runPikepdfScript('pdf-sign-prepare.py', [input, output, JSON.stringify(params)], job);
  if (r.exitCode === 3) throw invalid('sign', `sign.page ${sign.page} is not a page of the document.`);
  if (r.exitCode === 4) throw invalid('sign', 'sign: the visible box does not fit on the page.');
  if (r.exitCode === 5) throw invalid('sign', 'sign: signing encrypted output is not supported.');
  if (r.timedOut || r.exitCode !== 0) throw failed('The PDF could not be prepared for signing.', `pdf-sign-prepare exit ${r.exitCode}: ${r.stderr.toString().slice(-300)}`);
}

/** Where the sandbox's placeholders sit; offsets into the file. */
interface Placeholder {
  readonly byteRangeStart: number;
  readonly byteRangeLength: number;
  /** The `<` of /Contents. */
  readonly contentsStart: number;
  /** Just after the `>` of /Contents. */
  readonly contentsEnd: number;
}

/**
 * Finds the signature dictionary's placeholders by the nonce only this process and the sandbox
 * know; a hostile file cannot have guessed it. Exactly one occurrence, in exactly the written
 * shape, or the signing fails.
 */
export function findPlaceholder(pdf: Buffer, nonce: string): Placeholder {
  const marker = Buffer.from(`%mailconv-sign ${nonce}\n`, 'latin1');
  const at = pdf.indexOf(marker);
  if (at < 0 || pdf.indexOf(marker, at + 1) >= 0) throw failed('The PDF could not be prepared for signing.', at < 0 ? 'signature placeholder missing' : 'signature placeholder found twice');
  const byteRangeStart = at + marker.length;
  const expectedRange = '/ByteRange [0 0000000000 0000000000 0000000000]\n/Contents <';
  if (pdf.toString('latin1', byteRangeStart, byteRangeStart + expectedRange.length) !== expectedRange) throw failed('The PDF could not be prepared for signing.', 'signature placeholder malformed');
  const contentsStart = byteRangeStart + expectedRange.length - 1;
  const contentsEnd = contentsStart + 2 + SIGNATURE_BYTES * 2;
  if (contentsEnd > pdf.length || pdf[contentsEnd - 1] !== 0x3e) throw failed('The PDF could not be prepared for signing.', 'signature contents malformed');
  for (let i = contentsStart + 1; i < contentsEnd - 1; i++) {
    if (pdf[i] !== 0x30) throw failed('The PDF could not be prepared for signing.', 'signature contents not zero-filled');
  }
  if (pdf.length > 9_999_999_999) throw failed('The PDF is too large to sign.');
  return { byteRangeStart, byteRangeLength: '/ByteRange [0 0000000000 0000000000 0000000000]'.length, contentsStart, contentsEnd };
}

/** The DER CMS SignedData (detached) over `digest`, the SHA-256 of the signed byte ranges. */
async function buildCms(digest: Buffer, credential: SigningCredential): Promise<Buffer> {
  const cert = pkijs.Certificate.fromBER(new Uint8Array(credential.certificate));
  const chain = credential.chain.map((der) => pkijs.Certificate.fromBER(new Uint8Array(der)));
  // RFC 5035 ESSCertIDv2 with SHA-256 (the default algorithm, so omitted in DER) and the issuer and serial.
  const essCertId = new asn1js.Sequence({
    value: [
      new asn1js.OctetString({ valueHex: new Uint8Array(createHash('sha256').update(credential.certificate).digest()) }),
      new pkijs.IssuerSerial({ issuer: new pkijs.GeneralNames({ names: [new pkijs.GeneralName({ type: 4, value: cert.issuer })] }), serialNumber: cert.serialNumber }).toSchema(),
    ],
  });
  const signingCertificateV2 = new asn1js.Sequence({ value: [new asn1js.Sequence({ value: [essCertId] })] });
  const signer = new pkijs.SignerInfo({
    version: 1,
    sid: new pkijs.IssuerAndSerialNumber({ issuer: cert.issuer, serialNumber: cert.serialNumber }),
    signedAttrs: new pkijs.SignedAndUnsignedAttributes({
      type: 0,
      attributes: [
        new pkijs.Attribute({ type: OID.contentType, values: [new asn1js.ObjectIdentifier({ value: OID.data })] }),
        new pkijs.Attribute({ type: OID.messageDigest, values: [new asn1js.OctetString({ valueHex: new Uint8Array(digest) })] }),
        new pkijs.Attribute({ type: OID.signingCertificateV2, values: [signingCertificateV2] }),
      ],
    }),
  });
  const signed = new pkijs.SignedData({
    version: 1,
    encapContentInfo: new pkijs.EncapsulatedContentInfo({ eContentType: OID.data }),
    signerInfos: [signer],
    certificates: [cert, ...chain],
  });
  await signed.sign(await webCryptoKey(credential), 0, 'SHA-256');
  const info = new pkijs.ContentInfo({ contentType: OID.signedData, content: signed.toSchema(true) });
  return Buffer.from(info.toSchema().toBER(false));
}

/** The key as a WebCrypto key for pkijs (non-extractable, sign only). */
async function webCryptoKey(credential: SigningCredential): Promise<CryptoKey> {
  // Node's webcrypto types and the DOM lib's differ by newer key usages only.
  const key = credential.privateKey;
  if (key.asymmetricKeyType === 'ec') {
    const curve = { prime256v1: 'P-256', secp384r1: 'P-384', secp521r1: 'P-521' }[key.asymmetricKeyDetails?.namedCurve ?? ''];
    if (!curve) throw failed('The signing key’s curve is not supported.');
    return key.toCryptoKey({ name: 'ECDSA', namedCurve: curve }, false, ['sign']) as unknown as CryptoKey;
  }
  return key.toCryptoKey({ name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, false, ['sign']) as unknown as CryptoKey;
}
