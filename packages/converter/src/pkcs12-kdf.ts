/**
 * node-forge's key derivations for PKCS#12, bounded and native (issue 45). node-forge derives
 * keys in JavaScript, 5–25 µs per iteration: a file at GnuTLS's 600,000 took about 15 s to
 * open. While {@link withBoundedDerivations} runs, its three derivation functions (PBKDF2, and
 * the PKCS#12 KDF of RFC 7292 appendix B.2 for the MAC and the legacy PBEs) are replaced by
 * node:crypto ones giving the same bytes (PBKDF2 in OpenSSL; the PKCS#12 KDF one native hash
 * per iteration), and every count is held to the limits first, the counts the pre-scan cannot
 * see (bags inside the encrypted part) included. They are put back afterwards: nothing else
 * in the process sees the change, and node-forge's parsing is synchronous, so nothing runs
 * in between.
 */
import { hash, pbkdf2Sync } from 'node:crypto';
import forge from 'node-forge';
import { PKCS12_LIMITS, tooManyIterations, tooManyIterationsInAll, type IterationUse, type Pkcs12Limits } from './pkcs12-scan.js';

/** A derivation refused for its count; `message` is safe to send. */
export class DerivationRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DerivationRefused';
  }
}

/** The part of a node-forge message digest the derivations read. */
interface Digest {
  readonly algorithm: string;
  readonly digestLength: number;
  readonly blockLength: number;
}
type Pbkdf2 = (password: string, salt: string, count: number, dkLen: number, md?: Digest | string | null, callback?: unknown) => string;
type Pkcs12Kdf = (password: string | null | undefined, salt: forge.util.ByteStringBuffer, id: number, iter: number, n: number, md?: Digest | null) => forge.util.ByteStringBuffer;

const pkcs5 = forge.pkcs5 as unknown as { pbkdf2: Pbkdf2 };
const pbe = (forge.pki as unknown as { pbe: { generatePkcs12Key: Pkcs12Kdf } }).pbe;
const p12 = forge.pkcs12 as unknown as { generateKey: Pkcs12Kdf };
const ORIGINAL = { pbkdf2: pkcs5.pbkdf2, pbeKdf: pbe.generatePkcs12Key, macKdf: p12.generateKey };

/** Digests node:crypto computes for node-forge's (forge names SHA-224 as SHA-512/224: that one stays forge's). */
const NATIVE = new Set(['md5', 'sha1', 'sha256', 'sha384', 'sha512']);

/**
 * The PKCS#12 key derivation (RFC 7292 appendix B.2) with node:crypto: `n` bytes of purpose
 * `id` (1 key, 2 IV, 3 MAC) from `password` as node-forge reads it (each UTF-16 code unit big
 * endian, then two zero bytes; none at all for a missing password), hash `alg` of output `u`
 * and block `v` bytes.
 */
export function pkcs12Kdf(password: string | null | undefined, salt: Uint8Array, id: number, iter: number, n: number, alg: string, u: number, v: number): Buffer {
  if (!(iter >= 1)) throw new Error('PKCS#12 key derivation iteration count must be >= 1.');
  const pass = Buffer.alloc(password == null ? 0 : 2 * password.length + 2);
  for (let i = 0; password != null && i < password.length; i++) pass.writeUInt16BE(password.charCodeAt(i), 2 * i);
  const repeat = (src: Uint8Array, length: number): Buffer => {
    const out = Buffer.alloc(length);
    for (let i = 0; i < length; i++) out[i] = src[i % src.length]!;
    return out;
  };
  const d = Buffer.alloc(v, id);
  const block = Buffer.concat([repeat(salt, v * Math.ceil(salt.length / v)), repeat(pass, v * Math.ceil(pass.length / v))]);
  const out: Buffer[] = [];
  for (let c = Math.ceil(n / u); c > 0; c--) {
    let a = hash(alg, Buffer.concat([d, block]), 'buffer');
    for (let r = 1; r < iter; r++) a = hash(alg, a, 'buffer');
    out.push(a);
    // I_j = (I_j + B + 1) mod 2^(8v) for each v-byte block of I.
    const b = repeat(a, v);
    for (let j = 0; j < block.length; j += v) {
      let carry = 1;
      for (let l = v - 1; l >= 0; l--) {
        const x = block[j + l]! + b[l]! + carry;
        block[j + l] = x & 0xff;
        carry = x >> 8;
      }
    }
  }
  return Buffer.concat(out).subarray(0, n);
}

let active = false;

/**
 * Runs `open` (synchronous node-forge parsing) with node-forge's derivations native and
 * bounded: a count above `limits.maxIterations`, or counts adding up past
 * `limits.maxTotalIterations`, throws {@link DerivationRefused} before that derivation.
 */
export function withBoundedDerivations<T>(open: () => T, limits: Pkcs12Limits = PKCS12_LIMITS): T {
  if (active) throw new Error('withBoundedDerivations does not nest');
  let total = 0;
  const admit = (use: IterationUse, count: number, counted = true): void => {
    if (!(count <= limits.maxIterations)) throw new DerivationRefused(tooManyIterations(use, count, limits));
    if (counted) total += count;
    if (total > limits.maxTotalIterations) throw new DerivationRefused(tooManyIterationsInAll(total, limits));
  };
  const kdf =
    (original: Pkcs12Kdf): Pkcs12Kdf =>
    (password, salt, id, iter, n, md) => {
      // The IV (id 2) is derived with the key's count: the pair counts once.
      admit(id === 3 ? 'MAC' : 'PKCS#12-PBE', iter, id !== 2);
      const digest = md ?? forge.md.sha1.create();
      if (!NATIVE.has(digest.algorithm)) return original(password, salt, id, iter, n, md);
      const key = pkcs12Kdf(password, Buffer.from(salt.bytes(), 'binary'), id, iter, n, digest.algorithm, digest.digestLength, digest.blockLength);
      return forge.util.createBuffer(key.toString('binary'));
    };
  const pbkdf2: Pbkdf2 = (password, salt, count, dkLen, md, callback) => {
    admit('PBKDF2', count);
    const alg = md == null ? 'sha1' : typeof md === 'string' ? md : md.algorithm;
    if (callback !== undefined || typeof md === 'function' || !NATIVE.has(alg)) return ORIGINAL.pbkdf2(password, salt, count, dkLen, md, callback);
    // node-forge reads the password and salt as byte strings (one byte per character).
    return pbkdf2Sync(Buffer.from(password, 'binary'), Buffer.from(salt, 'binary'), count, dkLen, alg).toString('binary');
  };
  active = true;
  pkcs5.pbkdf2 = pbkdf2;
  pbe.generatePkcs12Key = kdf(ORIGINAL.pbeKdf);
  p12.generateKey = kdf(ORIGINAL.macKdf);
  try {
    return open();
  } finally {
    pkcs5.pbkdf2 = ORIGINAL.pbkdf2;
    pbe.generatePkcs12Key = ORIGINAL.pbeKdf;
    p12.generateKey = ORIGINAL.macKdf;
    active = false;
  }
}
