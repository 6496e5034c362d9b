import { randomBytes, randomFillSync } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * Random base62 string from the CSPRNG. Rejection sampling keeps every character
 * uniformly distributed (no modulo bias): 62 * 4 = 248, so bytes >= 248 are dropped.
 */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte >= 248) continue;
      out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

// Ids are made on every request; drawing CSPRNG bytes from a pool refilled 4 KiB at a time
// avoids a system call per id.
const pool = Buffer.allocUnsafe(4096);
let poolOffset = pool.length;

function randomSlice(n: number): Buffer {
  if (poolOffset + n > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  poolOffset += n;
  return pool.subarray(poolOffset - n, poolOffset);
}

/** 40 bits (5 bytes from `offset`) as 8 Crockford base32 characters. */
function base32of40(bytes: Buffer, offset: number): string {
  let v = 0;
  for (let i = 0; i < 5; i++) v = v * 256 + bytes[offset + i]!;
  let out = '';
  for (let i = 0; i < 8; i++) {
    out = CROCKFORD[v % 32] + out;
    v = Math.floor(v / 32);
  }
  return out;
}

/**
 * A prefixed, time-sortable, unguessable id: `prefix_` + 10 Crockford base32 characters
 * of the millisecond clock + 16 of 80 random bits (the ULID layout, lowercase).
 */
export function newId(prefix: string, now: number = Date.now()): string {
  let time = '';
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const bytes = randomSlice(10);
  return `${prefix}_${(time + base32of40(bytes, 0) + base32of40(bytes, 5)).toLowerCase()}`;
}
