/**
 * Opens a customer's PKCS#12 file off the event loop (issue 45): the size and iteration counts
 * are checked first, in this thread (microseconds: a file asking for too many is refused at
 * once), then `loadPkcs12` runs in a fresh worker thread (`pkcs12-worker.ts`) with a heap
 * cap and a hard time-out that terminates it, at most {@link PKCS12_CONCURRENCY} at once per
 * process. Every failure is a {@link CredentialError}: a 400 naming `file` or `password`.
 */
import { runWorkerThread } from './engines/structured/run-in-worker.js';
import { ConversionError } from './errors.js';
import { PKCS12_LIMITS, type Pkcs12Limits } from './pkcs12-scan.js';
import { checkPkcs12, credentialFromText, CredentialError, type SigningCredential } from './signing-credential.js';

/** Wall time one file may take to open; then its worker is terminated. */
export const PKCS12_TIMEOUT_MS = 5000;
/** Heap of the worker, in MiB (a file is at most 64 KB). */
export const PKCS12_HEAP_MB = 64;
/** Files opened at once in one process; more wait their turn (each may use a core for the time-out). */
export const PKCS12_CONCURRENCY = 2;

/** What the worker is given. */
export interface Pkcs12Job {
  readonly bytes: Uint8Array;
  readonly password: string;
  /** `now` of the validity check, ms since the epoch. */
  readonly now: number;
  readonly limits: Pkcs12Limits;
}

/** The worker's answer: `ok` says it ran to the end; the file's verdict is `credential` or `refused`. */
export type Pkcs12Answer =
  | { readonly ok: true; readonly credential: string }
  | { readonly ok: true; readonly refused: { readonly message: string; readonly field: 'file' | 'password' } }
  | { readonly ok: false; readonly message: string; readonly detail?: string };

/** Limits of one {@link openPkcs12} call (tests lower the time-out). */
export interface OpenPkcs12Options {
  readonly limits?: Pkcs12Limits;
  readonly timeoutMs?: number;
}

const WORKER_URL = new URL('./pkcs12-worker.js', import.meta.url);

/** A first-come first-served count of turns. */
class Turns {
  private busy = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly size: number) {}

  async take(): Promise<void> {
    if (this.busy < this.size) {
      this.busy++;
      return;
    }
    // The turn is handed over by give(): busy stays as it is.
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.busy--;
  }
}

const turns = new Turns(PKCS12_CONCURRENCY);

/**
 * `loadPkcs12` of `bytes` with `password`, in a worker thread under the limits above;
 * throws {@link CredentialError} for every refusal (over the limits, too slow, wrong password,
 * no key, expired, …).
 */
export async function openPkcs12(bytes: Uint8Array, password: string, now: Date = new Date(), o: OpenPkcs12Options = {}): Promise<SigningCredential> {
  const limits = o.limits ?? PKCS12_LIMITS;
  const timeoutMs = o.timeoutMs ?? PKCS12_TIMEOUT_MS;
  checkPkcs12(bytes, limits);
  const job: Pkcs12Job = { bytes, password, now: now.getTime(), limits };
  let answer: Extract<Pkcs12Answer, { ok: true }>;
  await turns.take();
  try {
    answer = await runWorkerThread<Extract<Pkcs12Answer, { ok: true }>>(WORKER_URL, job, { timeoutMs }, {
      kind: 'pkcs12',
      maxHeapMb: PKCS12_HEAP_MB,
      failure: 'The certificate file could not be opened.',
      timeoutMessage: `The certificate file took longer than ${timeoutMs / 1000} s to open and was refused: export it again with fewer iterations (OpenSSL writes 2048).`,
      memoryMessage: `The certificate file needs more than the ${PKCS12_HEAP_MB} MiB allowed to open it and was refused.`,
    });
  } catch (err) {
    if (err instanceof ConversionError) throw new CredentialError(err.message);
    throw err;
  } finally {
    turns.give();
  }
  if ('refused' in answer) throw new CredentialError(answer.refused.message, answer.refused.field);
  return credentialFromText(answer.credential);
}
