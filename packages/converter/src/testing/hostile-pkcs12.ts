/**
 * Hostile PKCS#12 files for the iteration-count tests (issue 45): real files made by openssl
 * with large `-iter`/`-maciter`, and crafted ones (counts as DER INTEGERs of any length, a
 * key bag hidden inside the encrypted part, many key bags, BER indefinite lengths), built
 * with node-forge's ASN.1 and node:crypto. Tests only.
 */
import { createCipheriv, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import forge from 'node-forge';
import type { TestPki } from './test-pki.js';
import { tool } from './tools.js';

const { asn1 } = forge;
type Asn1 = forge.asn1.Asn1;

const OID = {
  data: '1.2.840.113549.1.7.1',
  encryptedData: '1.2.840.113549.1.7.6',
  shroudedKeyBag: '1.2.840.113549.1.12.10.1.2',
  pbes2: '1.2.840.113549.1.5.13',
  pbkdf2: '1.2.840.113549.1.5.12',
  hmacWithSha256: '1.2.840.113549.2.9',
  aes256Cbc: '2.16.840.1.101.3.4.1.42',
  sha256: '2.16.840.1.101.3.4.2.1',
  pbeSha1TripleDes: '1.2.840.113549.1.12.1.3',
} as const;

/**
 * `openssl pkcs12 -export` of the PKI's RSA signer (key, certificate and CA) with `args`
 * added (`-iter N`, `-maciter`, `-legacy`, `-certpbe …`), password `password`.
 */
export async function exportP12(pki: TestPki, name: string, password: string, args: readonly string[]): Promise<Buffer> {
  const out = join(pki.dir, `${name}.p12`);
  const file = (n: string): string => join(pki.dir, n);
  tool('/usr/bin/openssl', ['pkcs12', '-export', '-inkey', file('rsa.key'), '-in', file('rsa.pem'), '-certfile', pki.caPem, '-out', out, '-passout', `pass:${password}`, ...args]);
  return readFile(out);
}

/** A DER INTEGER's content octets for `n` (≥ 0), shortest form. */
export function integerOctets(n: bigint): Buffer {
  let hex = n.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  if (parseInt(hex.slice(0, 2), 16) & 0x80) hex = `00${hex}`;
  return Buffer.from(hex, 'hex');
}

const int = (octets: Buffer): Asn1 => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.INTEGER, false, octets.toString('binary'));
const oid = (o: string): Asn1 => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OID, false, asn1.oidToDer(o).getBytes());
const octets = (b: Buffer): Asn1 => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OCTETSTRING, false, b.toString('binary'));
const seq = (...items: Asn1[]): Asn1 => asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, items);
const explicit0 = (item: Asn1): Asn1 => asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, [item]);
const der = (a: Asn1): Buffer => Buffer.from(asn1.toDer(a).getBytes(), 'binary');
const parse = (b: Buffer): Asn1 => asn1.fromDer(forge.util.createBuffer(b.toString('binary')));
const children = (a: Asn1): Asn1[] => a.value as Asn1[];

/** The PFX with its MacData's iteration count replaced by an INTEGER of `count`'s octets (the MAC is left as it was). */
export function withMacIterations(p12: Buffer, count: Buffer): Buffer {
  const pfx = parse(p12);
  const mac = children(pfx)[2];
  if (!mac) throw new Error('no MacData');
  const items = children(mac);
  items[2] = int(count);
  return der(pfx);
}

/**
 * The PFX with every PBKDF2 and PKCS#12-PBE iteration count of its authenticated safe that is
 * visible without the password (the encrypted part's own algorithm, the shrouded key bags')
 * replaced by `count`'s octets. The MAC no longer matches: only a check that reads the counts
 * before the MAC can refuse such a file for its counts.
 */
export function withBagIterations(p12: Buffer, count: Buffer): Buffer {
  const pfx = parse(p12);
  const content = children(children(children(pfx)[1]!)[1]!)[0]!;
  const safe = parse(Buffer.from(content.value as string, 'binary'));
  for (const info of children(safe)) {
    const type = asn1.derToOid(children(info)[0]!.value as string);
    const inner = children(children(info)[1]!)[0]!;
    if (type === OID.encryptedData) setCount(children(children(inner)[1]!)[1]!, count);
    else {
      const safeContents = parse(Buffer.from(inner.value as string, 'binary'));
      for (const bag of children(safeContents)) {
        if (asn1.derToOid(children(bag)[0]!.value as string) === OID.shroudedKeyBag) setCount(children(children(children(bag)[1]!)[0]!)[0]!, count);
      }
      inner.value = der(safeContents).toString('binary');
    }
  }
  content.value = der(safe).toString('binary');
  return der(pfx);
}

/** Sets the iteration count of a PBES2 or PKCS#12-PBE AlgorithmIdentifier. */
function setCount(alg: Asn1, count: Buffer): void {
  const [id, params] = children(alg);
  if (asn1.derToOid(id!.value as string) === OID.pbes2) children(children(children(params!)[0]!)[1]!)[1] = int(count);
  else children(params!)[1] = int(count);
}

/** PBES2 (PBKDF2 with HMAC-SHA256, AES-256-CBC) parameters and their AlgorithmIdentifier. */
function pbes2(salt: Buffer, count: Buffer, iv: Buffer): Asn1 {
  const kdf = seq(oid(OID.pbkdf2), seq(octets(salt), int(count), seq(oid(OID.hmacWithSha256), asn1.create(asn1.Class.UNIVERSAL, asn1.Type.NULL, false, ''))));
  return seq(oid(OID.pbes2), seq(kdf, seq(oid(OID.aes256Cbc), octets(iv))));
}

/** A shrouded key bag whose PBES2 count is `count` (its encrypted key is random bytes: it is refused before decryption). */
export function shroudedKeyBag(count: Buffer): Asn1 {
  return seq(oid(OID.shroudedKeyBag), explicit0(seq(pbes2(randomBytes(8), count, randomBytes(16)), octets(randomBytes(48)))));
}

/** A PKCS#12-PBE (SHA-1, 3DES) shrouded key bag of `count` iterations (random encrypted key). */
export function legacyKeyBag(count: Buffer): Asn1 {
  const alg = seq(oid(OID.pbeSha1TripleDes), seq(octets(randomBytes(8)), int(count)));
  return seq(oid(OID.shroudedKeyBag), explicit0(seq(alg, octets(randomBytes(48)))));
}

/**
 * A PFX with a valid HMAC-SHA256 MAC (2,048 iterations, `password`) whose authenticated safe
 * holds `plainBags` in a plain Data part and `encryptedBags` in an EncryptedData part
 * (PBES2, 2,048 iterations): bags inside the encrypted part are seen only after decryption.
 */
export function craftPfx(password: string, o: { plainBags?: Asn1[]; encryptedBags?: Asn1[] }): Buffer {
  const infos: Asn1[] = [];
  if (o.plainBags?.length) infos.push(seq(oid(OID.data), explicit0(octets(der(seq(...o.plainBags))))));
  if (o.encryptedBags?.length) {
    const salt = randomBytes(8);
    const iv = randomBytes(16);
    const key = pbkdf2Sync(Buffer.from(password, 'latin1'), salt, 2048, 32, 'sha256');
    const cipher = createCipheriv('aes-256-cbc', key, iv);
    const ct = Buffer.concat([cipher.update(der(seq(...o.encryptedBags))), cipher.final()]);
    const eci = seq(oid(OID.data), pbes2(salt, integerOctets(2048n), iv), asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, false, ct.toString('binary')));
    infos.push(seq(oid(OID.encryptedData), explicit0(seq(int(integerOctets(0n)), eci))));
  }
  const authSafe = der(seq(...infos));
  const macSalt = randomBytes(8);
  // node-forge's own PKCS#12 key derivation (not the service's): the fixture checks it independently.
  const macKey = Buffer.from(forge.pkcs12.generateKey(password, forge.util.createBuffer(macSalt.toString('binary')), 3, 2048, 32, forge.md.sha256.create()).getBytes(), 'binary');
  const mac = createHmac('sha256', macKey).update(authSafe).digest();
  const macData = seq(seq(seq(oid(OID.sha256), asn1.create(asn1.Class.UNIVERSAL, asn1.Type.NULL, false, '')), octets(mac)), octets(macSalt), int(integerOctets(2048n)));
  return der(seq(int(integerOctets(3n)), seq(oid(OID.data), explicit0(octets(authSafe))), macData));
}

/**
 * The PFX written again the way BER writers (Java, NSS) do: every constructed value of the
 * outer structure with an indefinite length, and the authenticated safe's OCTET STRING cut
 * into constructed chunks of `chunk` bytes. The MAC still matches (it covers the content octets).
 */
export function asBer(p12: Buffer, chunk = 500): Buffer {
  const encode = (a: Asn1, chunked: boolean): Buffer => {
    const tag = (a.tagClass as number) | (a.constructed ? 0x20 : 0) | (a.type as number);
    if (a.constructed) return Buffer.concat([Buffer.from([tag, 0x80]), ...children(a).map((c) => encode(c, chunked)), Buffer.from([0, 0])]);
    if (chunked && a.type === asn1.Type.OCTETSTRING && a.tagClass === asn1.Class.UNIVERSAL) {
      const bytes = Buffer.from(a.value as string, 'binary');
      const parts: Buffer[] = [];
      for (let at = 0; at < bytes.length; at += chunk) parts.push(der(octets(bytes.subarray(at, at + chunk))));
      return Buffer.concat([Buffer.from([0x24, 0x80]), ...parts, Buffer.from([0, 0])]);
    }
    return der(a);
  };
  const [version, authSafe, mac] = children(parse(p12));
  const body = [encode(version!, false), encode(authSafe!, true), ...(mac ? [der(mac)] : [])];
  return Buffer.concat([Buffer.from([0x30, 0x80]), ...body, Buffer.from([0, 0])]);
}

/** `depth` nested SEQUENCEs (BER indefinite lengths): a structure that only a depth cap stops. */
export function deeplyNested(depth: number): Buffer {
  return Buffer.concat([Buffer.alloc(depth * 2, 0).fill(Buffer.from([0x30, 0x80])), Buffer.alloc(depth * 2, 0)]);
}
