/**
 * Secrets a service must keep for a while but never in clear (issue 24: an export's S3
 * credentials, held until the export ran): sealed with AES-256-GCM under a key of the
 * operator's, read from a file (`…_SECRETS_KEY_FILE`) or, by default, made once beside the
 * service's storage (0600). A sealed value names its key by a short fingerprint so that a
 * value sealed under another key fails with a clear error instead of garbage.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Seals and opens short secrets (credentials, passwords) with one key. */
export class SecretBox {
  private readonly id: string;

  constructor(private readonly key: Buffer) {
    if (key.length !== KEY_BYTES) throw new RangeError(`a secret box key is ${KEY_BYTES} bytes`);
    this.id = createHash('sha256').update(key).digest('hex').slice(0, 8);
  }

  /** `v1.<key id>.<base64 of iv | tag | ciphertext>`; `context` (e.g. the record's id) must be given again to open it. */
  seal(plain: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(context));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `v1.${this.id}.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
  }

  /** The plain text, or throws: another key, another context, or a value that was altered. */
  open(sealed: string, context: string): string {
    const [version, id, data] = sealed.split('.');
    if (version !== 'v1' || !data) throw new Error('not a sealed value');
    if (id !== this.id) throw new Error('sealed under another key (the secrets key file changed)');
    const raw = Buffer.from(data, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  }
}

/**
 * The key in `path` (64 hex digits or 44 base64 characters, whitespace ignored); when the
 * file does not exist and `create` is set, a new random key is written there (0600, its
 * folder made 0700). Any other content is an error naming the file. Read once at start-up.
 */
export function loadSecretsKey(path: string, create: boolean): Buffer {
  let text: string;
  try {
    text = readFileSync(path, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || !create) throw err;
    const key = randomBytes(KEY_BYTES);
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    // wx: two processes starting at once do not overwrite each other's key; the later one reads it.
    try {
      writeFileSync(path, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
      chmodSync(path, 0o600);
      return key;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      return loadSecretsKey(path, false);
    }
  }
  const hex = /^[0-9a-f]{64}$/i.test(text);
  const key = hex ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  if (key.length !== KEY_BYTES || (!hex && key.toString('base64') !== text)) throw new Error(`${path}: a secrets key is 32 bytes, written as 64 hex digits or in base64`);
  return key;
}
