/**
 * The PKCS#12 pre-scan (issue 45): reads a PFX's ASN.1 and every iteration count it asks for
 * before any key is derived, so that a file asking for too many is refused in microseconds
 * rather than after minutes of hashing. A count is a DER INTEGER of any length in the file;
 * the MAC's is used before the password is checked, so a wrong password costs the same.
 *
 * Counts read: `MacData.iterations` (RFC 7292 §4; 1 when absent), the PKCS#12-PBE parameters
 * (RFC 7292 appendix C) and PBES1/PBES2-PBKDF2 parameters (RFC 8018) of the EncryptedData
 * parts and of every shrouded key bag in the clear parts (`safeContentsBag` nesting included).
 * Bags inside an EncryptedData part are seen only after decryption: those counts are held to
 * the same limits when the keys are derived (`pkcs12-kdf.ts`).
 *
 * The reader is a small BER walker (definite and indefinite lengths, constructed OCTET
 * STRINGs, as Java and NSS write them) with a cap on nesting and on the values read; it only
 * descends where the PKCS#12 structure says, and a structure it cannot follow is unreadable.
 */

/** The iteration counts a PKCS#12 file may ask for. */
export interface Pkcs12Limits {
  /** Largest count of one key derivation (the MAC, one PBE or PBKDF2). */
  readonly maxIterations: number;
  /** Largest sum of the counts of all the derivations opening the file needs. */
  readonly maxTotalIterations: number;
}

/**
 * One count at most 600,000 (GnuTLS's certtool writes 600,000 for the MAC and both PBKDF2s,
 * the most a common tool writes; OpenSSL 3 writes 2,048, Java 10,000, Windows 2,000); all of
 * them together at most 2,000,000 (such a GnuTLS file asks for 1,800,000).
 */
export const PKCS12_LIMITS: Pkcs12Limits = { maxIterations: 600_000, maxTotalIterations: 2_000_000 };

/** What a count is for, as the refusal names it. */
export type IterationUse = 'MAC' | 'PKCS#12-PBE' | 'PBES1' | 'PBKDF2';

/** One key derivation the file asks for. */
export interface IterationCount {
  readonly use: IterationUse;
  readonly count: bigint;
}

/** The pre-scan's verdict, as data. */
export type Pkcs12Scan =
  | { readonly ok: true; readonly counts: readonly IterationCount[] }
  /** `unreadable`: not a PKCS#12 structure this reader follows (the message says the file is not readable). */
  | { readonly ok: false; readonly message: string; readonly unreadable?: true };

/** The refusal of a count above the limit (also used when a hidden count is met while deriving). */
export function tooManyIterations(use: IterationUse, count: bigint | number, limits: Pkcs12Limits): string {
  return `The certificate file's ${use} iteration count ${count} is above the limit ${limits.maxIterations}: export it again with fewer iterations (OpenSSL writes 2048).`;
}

/** The refusal of counts that add up past the total limit. */
export function tooManyIterationsInAll(total: bigint | number, limits: Pkcs12Limits): string {
  return `The certificate file's iteration counts add up to ${total}, above the limit ${limits.maxTotalIterations}: export it again with fewer iterations (OpenSSL writes 2048).`;
}

/** Nesting of constructed values, encapsulated structures included (a PFX needs about 20). */
export const MAX_BER_DEPTH = 40;
/** Values read in one scan (a 64 KB file holds at most 32,768). */
const MAX_VALUES = 50_000;

const OID = {
  data: '1.2.840.113549.1.7.1',
  encryptedData: '1.2.840.113549.1.7.6',
  shroudedKeyBag: '1.2.840.113549.1.12.10.1.2',
  safeContentsBag: '1.2.840.113549.1.12.10.1.6',
  pbes2: '1.2.840.113549.1.5.13',
  pbkdf2: '1.2.840.113549.1.5.12',
} as const;
/** pbeWithSHAAnd128BitRC4 … pbewithSHAAnd40BitRC2-CBC (RFC 7292 appendix C). */
const PKCS12_PBE = /^1\.2\.840\.113549\.1\.12\.1\.[1-6]$/;
/** pbeWithMD2AndDES-CBC … pbeWithSHA1AndRC2-CBC (RFC 8018 appendix A.3). */
const PBES1 = /^1\.2\.840\.113549\.1\.5\.(?:1|3|4|6|10|11)$/;

const UNIVERSAL = 0;
const CONTEXT = 2;
const T = { INTEGER: 2, OCTET_STRING: 4, OID: 6, SEQUENCE: 16 } as const;

/** One value: tag and where its contents lie in `bytes`. */
interface Value {
  readonly bytes: Uint8Array;
  readonly cls: number;
  readonly constructed: boolean;
  readonly tag: number;
  readonly body: number;
  readonly bodyEnd: number;
  readonly end: number;
  readonly depth: number;
}

class Unreadable extends Error {}

/** Reads values under the caps; one per scan. */
class BerReader {
  private values = 0;

  /** The value at `pos` of `bytes`, which must end by `limit`. */
  read(bytes: Uint8Array, pos: number, limit: number, depth: number): Value {
    if (depth > MAX_BER_DEPTH) throw new Unreadable('nested too deeply');
    if (++this.values > MAX_VALUES) throw new Unreadable('too many values');
    let p = pos;
    const next = (): number => {
      if (p >= limit) throw new Unreadable('truncated');
      return bytes[p++]!;
    };
    const first = next();
    const cls = first >> 6;
    const constructed = (first & 0x20) !== 0;
    let tag = first & 0x1f;
    if (tag === 0x1f) {
      tag = 0;
      for (let i = 0, b = 0x80; b & 0x80; i++) {
        if (i === 4) throw new Unreadable('tag number too long');
        b = next();
        tag = tag * 128 + (b & 0x7f);
      }
    }
    if (cls === UNIVERSAL && tag === 0) throw new Unreadable('end-of-contents out of place');
    const lengthByte = next();
    if (lengthByte === 0x80) {
      if (!constructed) throw new Unreadable('indefinite length on a primitive value');
      const body = p;
      for (;;) {
        if (p + 1 < limit && bytes[p] === 0 && bytes[p + 1] === 0) return { bytes, cls, constructed, tag, body, bodyEnd: p, end: p + 2, depth };
        p = this.read(bytes, p, limit, depth + 1).end;
      }
    }
    let length = lengthByte;
    if (lengthByte > 0x80) {
      const n = lengthByte & 0x7f;
      if (n > 4) throw new Unreadable('length too long');
      length = 0;
      for (let i = 0; i < n; i++) length = length * 256 + next();
    }
    if (length > limit - p) throw new Unreadable('truncated');
    return { bytes, cls, constructed, tag, body: p, bodyEnd: p + length, end: p + length, depth };
  }

  /** The values inside a constructed value. */
  children(v: Value): Value[] {
    if (!v.constructed) throw new Unreadable('primitive where constructed expected');
    const out: Value[] = [];
    for (let p = v.body; p < v.bodyEnd; ) {
      const c = this.read(v.bytes, p, v.bodyEnd, v.depth + 1);
      out.push(c);
      p = c.end;
    }
    return out;
  }

  /** The one value `bytes` holds (an encapsulated structure continues `depth`). */
  whole(bytes: Uint8Array, depth: number): Value {
    const v = this.read(bytes, 0, bytes.length, depth);
    if (v.end !== bytes.length) throw new Unreadable('bytes after the value');
    return v;
  }

  /** An OCTET STRING's contents, chunks of a constructed one joined (one level, as node-forge reads them). */
  octets(v: Value): Uint8Array {
    expect(v, T.OCTET_STRING);
    if (!v.constructed) return v.bytes.subarray(v.body, v.bodyEnd);
    const chunks = this.children(v).map((c) => {
      if (c.constructed) throw new Unreadable('nested constructed OCTET STRING');
      return expect(c, T.OCTET_STRING).bytes.subarray(c.body, c.bodyEnd);
    });
    return Buffer.concat(chunks);
  }
}

function expect(v: Value | undefined, tag: number, cls = UNIVERSAL): Value {
  if (!v || v.tag !== tag || v.cls !== cls) throw new Unreadable(`expected tag ${tag}`);
  return v;
}

function oid(v: Value | undefined): string {
  const o = expect(v, T.OID);
  if (o.constructed || o.bodyEnd === o.body || o.bodyEnd - o.body > 64) throw new Unreadable('bad OID');
  const arcs: number[] = [];
  let n = 0;
  for (let p = o.body; p < o.bodyEnd; p++) {
    const b = o.bytes[p]!;
    n = n * 128 + (b & 0x7f);
    if (!(b & 0x80)) {
      if (arcs.length === 0) arcs.push(n < 80 ? Math.floor(n / 40) : 2, n < 80 ? n % 40 : n - 80);
      else arcs.push(n);
      n = 0;
    }
  }
  return arcs.join('.');
}

/** A DER INTEGER of any length, as a bigint (two's complement). */
function integer(v: Value | undefined): bigint {
  const i = expect(v, T.INTEGER);
  if (i.constructed || i.bodyEnd === i.body) throw new Unreadable('bad INTEGER');
  let n = 0n;
  for (let p = i.body; p < i.bodyEnd; p++) n = (n << 8n) | BigInt(i.bytes[p]!);
  return i.bytes[i.body]! & 0x80 ? n - (1n << BigInt(8 * (i.bodyEnd - i.body))) : n;
}

/** ContentInfo: its type and the value in `[0] EXPLICIT`. */
function contentInfo(r: BerReader, v: Value): { type: string; content: Value } {
  const [type, wrapped] = r.children(expect(v, T.SEQUENCE));
  const content = r.children(expect(wrapped, 0, CONTEXT))[0];
  if (!content) throw new Unreadable('empty ContentInfo');
  return { type: oid(type), content };
}

/** The counts an AlgorithmIdentifier asks for (none for one that derives no key). */
function algorithm(r: BerReader, v: Value | undefined, out: IterationCount[]): void {
  const [id, params] = r.children(expect(v, T.SEQUENCE));
  const name = oid(id);
  if (PKCS12_PBE.test(name) || PBES1.test(name)) {
    out.push({ use: PKCS12_PBE.test(name) ? 'PKCS#12-PBE' : 'PBES1', count: integer(r.children(expect(params, T.SEQUENCE))[1]) });
  } else if (name === OID.pbes2) {
    const [kdf] = r.children(expect(params, T.SEQUENCE));
    const [kdfId, kdfParams] = r.children(expect(kdf, T.SEQUENCE));
    // Other KDFs (scrypt) are refused by node-forge before any derivation.
    if (oid(kdfId) === OID.pbkdf2) out.push({ use: 'PBKDF2', count: integer(r.children(expect(kdfParams, T.SEQUENCE))[1]) });
  }
}

/** SafeContents: the shrouded key bags' counts, nested SafeContents too. */
function safeContents(r: BerReader, v: Value, out: IterationCount[]): void {
  for (const bag of r.children(expect(v, T.SEQUENCE))) {
    const [bagId, wrapped] = r.children(expect(bag, T.SEQUENCE));
    const type = oid(bagId);
    if (type !== OID.shroudedKeyBag && type !== OID.safeContentsBag) continue;
    const value = r.children(expect(wrapped, 0, CONTEXT))[0];
    if (type === OID.shroudedKeyBag) algorithm(r, r.children(expect(value, T.SEQUENCE))[0], out);
    else safeContents(r, expect(value, T.SEQUENCE), out);
  }
}

/** Every count of the PFX that is readable without its password, in the order they are used. */
function counts(bytes: Uint8Array): IterationCount[] {
  const r = new BerReader();
  const [version, authSafe, macData] = r.children(expect(r.whole(bytes, 0), T.SEQUENCE));
  integer(version);
  const out: IterationCount[] = [];
  if (macData) {
    const iterations = r.children(expect(macData, T.SEQUENCE))[2];
    out.push({ use: 'MAC', count: iterations ? integer(iterations) : 1n });
  }
  const outer = contentInfo(r, expect(authSafe, T.SEQUENCE));
  // Public-key integrity (signedData) is not supported: node-forge refuses it without deriving.
  if (outer.type !== OID.data) throw new Unreadable('not password integrity');
  const safe = r.whole(r.octets(outer.content), outer.content.depth + 1);
  for (const part of r.children(expect(safe, T.SEQUENCE))) {
    const { type, content } = contentInfo(r, part);
    if (type === OID.data) safeContents(r, r.whole(r.octets(content), content.depth + 1), out);
    else if (type === OID.encryptedData) {
      const [, info] = r.children(expect(content, T.SEQUENCE));
      algorithm(r, r.children(expect(info, T.SEQUENCE))[1], out);
    }
  }
  return out;
}

/**
 * The iteration counts of a PKCS#12 file checked against `limits`, before any key is derived:
 * `{ok: false}` names the first count above the limit, or the total, or says the file is not
 * a PKCS#12 structure that can be read.
 */
export function scanPkcs12(bytes: Uint8Array, limits: Pkcs12Limits = PKCS12_LIMITS): Pkcs12Scan {
  let found: IterationCount[];
  try {
    found = counts(bytes);
  } catch (err) {
    if (err instanceof Unreadable) return { ok: false, unreadable: true, message: 'The certificate file is not a readable PKCS#12 (.p12/.pfx) file.' };
    throw err;
  }
  let total = 0n;
  for (const { use, count } of found) {
    if (count < 1n) return { ok: false, message: `The certificate file's ${use} iteration count ${count} is not a positive number.` };
    if (count > BigInt(limits.maxIterations)) return { ok: false, message: tooManyIterations(use, count, limits) };
    // A PKCS#12-PBE derives its key and its IV, each with the whole count; it counts once, as the MAC does.
    total += count;
  }
  if (total > BigInt(limits.maxTotalIterations)) return { ok: false, message: tooManyIterationsInAll(total, limits) };
  return { ok: true, counts: found };
}
