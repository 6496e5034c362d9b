import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * scrypt cost: N = 2^15, r = 8, p = 1 (32 MiB and roughly 50–100 ms per hash on one core),
 * the OWASP minimum for scrypt. Stored with each hash, so raising it later leaves existing
 * hashes verifiable.
 */
export const SCRYPT_PARAMS = { logN: 15, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;
const SALT_BYTES = 16;

/** Passwords shorter than this are refused; longer than the maximum too (scrypt reads all of it). */
export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 1024;

function derive(password: string, salt: Buffer, params: { logN: number; r: number; p: number }): Promise<Buffer> {
  const N = 2 ** params.logN;
  // Node refuses more than 32 MiB by default; scrypt needs 128·N·r bytes, and a little over.
  const options: ScryptOptions = { N, r: params.r, p: params.p, maxmem: 128 * N * params.r * params.p + 16 * 1024 * 1024 };
  return new Promise((resolve, reject) => {
    // The asynchronous form runs on libuv's thread pool: the event loop keeps serving.
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/**
 * A password's stored form, `$scrypt$ln=15,r=8,p=1$<salt>$<hash>` (PHC string format,
 * base64 without padding). The salt is 16 random bytes; the password is NFC-normalised so
 * that the same characters typed on another system match.
 */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, SCRYPT_PARAMS);
  const b64 = (b: Buffer) => b.toString('base64').replace(/=+$/, '');
  return `$scrypt$ln=${SCRYPT_PARAMS.logN},r=${SCRYPT_PARAMS.r},p=${SCRYPT_PARAMS.p}$${b64(salt)}$${b64(key)}`;
}

const PHC = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

/** Whether `password` matches `stored` (compared in constant time). A malformed stored value never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const m = PHC.exec(stored);
  if (!m) return false;
  const [logN, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (logN < 10 || logN > 20 || r < 1 || p < 1) return false;
  const expected = Buffer.from(m[5]!, 'base64');
  const key = await derive(password, Buffer.from(m[4]!, 'base64'), { logN, r, p });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/**
 * A hash of no one's password, verified against when the e-mail address is unknown, so an
 * unknown address costs the same time as a wrong password and cannot be told apart by it.
 */
let decoy: Promise<string> | undefined;
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(24).toString('base64'));
  return decoy;
}

/** Why a new password is refused, or null when it is acceptable. */
export function passwordProblem(password: string): string | null {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) return `The password must be at least ${PASSWORD_MIN_LENGTH} characters long.`;
  if (length > PASSWORD_MAX_LENGTH) return `The password must be at most ${PASSWORD_MAX_LENGTH} characters long.`;
  return null;
}
