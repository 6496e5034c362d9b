/**
 * Runs a pure-TypeScript conversion in a worker thread so that hostile input cannot stall
 * the service's event loop or exhaust its heap: the worker gets its own heap cap
 * (`resourceLimits`), a small stack, the step's time-out (then `terminate()`), and the job's
 * cancel signal; the input size is capped before it is read.
 */
import { Worker } from 'node:worker_threads';
import { failed } from '../../errors.js';
import type { JobContext, Step } from '../engine.js';

/** What the worker is asked to do. */
export interface WorkerJob {
  readonly kind: 'data' | 'subtitle';
  readonly input: string;
  readonly output: string;
  readonly from: string;
  readonly to: string;
  readonly maxInputBytes: number;
  readonly maxOutputBytes: number;
}

/** The worker's answer. */
export type WorkerAnswer = { readonly ok: true } | { readonly ok: false; readonly message: string; readonly detail?: string };

/** Limits of the structured-data worker. */
export interface WorkerLimits {
  /** Largest input read; default 32 MiB (parsed text takes several times its size in heap). */
  readonly maxInputBytes: number;
  /** Heap cap of the worker in MiB; default 512 (lowered to the job's memory cap). */
  readonly maxHeapMb: number;
}

export const DEFAULT_WORKER_LIMITS: WorkerLimits = { maxInputBytes: 32 * 1024 ** 2, maxHeapMb: 512 };

const WORKER_URL = new URL('./worker.js', import.meta.url);

/** The message of a step whose worker crashed. */
export function stepFailure(step: Step): string {
  return `The ${step.from} file could not be converted to ${step.to}.`;
}

/** Runs one step in a fresh worker; throws `conversion_failed` with a safe message on any failure. */
export async function runInWorker(step: Step, kind: WorkerJob['kind'], limits: WorkerLimits = DEFAULT_WORKER_LIMITS): Promise<void> {
  const job: WorkerJob = {
    kind, input: step.input, output: step.output, from: step.from, to: step.to,
    maxInputBytes: limits.maxInputBytes, maxOutputBytes: Math.min(step.job.maxFileBytes, 4 * limits.maxInputBytes + 1024 ** 2),
  };
  await runWorkerThread<{ ok: true }>(WORKER_URL, job, step.job, { kind, maxHeapMb: limits.maxHeapMb, failure: stepFailure(step) });
}

/** How {@link runWorkerThread} runs one worker. */
export interface WorkerThreadOptions {
  /** Names the worker in log details (`data`, `qoi`, `xml-entities`). */
  readonly kind: string;
  /** Heap cap in MiB (lowered to the job's memory cap). */
  readonly maxHeapMb: number;
  /** The message when the worker crashes or exits without answering. */
  readonly failure: string;
  /** Buffers moved to the worker instead of copied. */
  readonly transfer?: readonly ArrayBuffer[];
  /** The message when the time-out stops the worker (default: a conversion's). */
  readonly timeoutMessage?: string;
  /** The message when the worker runs out of its heap (default: a conversion's, naming the cap). */
  readonly memoryMessage?: string;
}

/**
 * Runs `url` in a fresh worker thread with `data` as its `workerData` and answers its message
 * (`{ok: true, …}`), under the job's limits: a heap cap of `maxHeapMb` (lower if the job's
 * memory cap is), a 4 MiB stack, the job's time-out then `terminate()`, its cancel signal.
 * An `{ok: false, message, detail?}` answer, a crash or a limit throws `conversion_failed`.
 */
export function runWorkerThread<T extends { readonly ok: true }>(url: URL, data: unknown, job: Pick<JobContext, 'timeoutMs' | 'maxMemoryBytes' | 'signal'>, opts: WorkerThreadOptions): Promise<T> {
  const { kind } = opts;
  const jobHeap = job.maxMemoryBytes ? Math.floor(job.maxMemoryBytes / 1024 ** 2) : opts.maxHeapMb;
  const heap = Math.max(32, Math.min(opts.maxHeapMb, jobHeap));
  return new Promise<T>((resolve, reject) => {
    if (job.signal?.aborted) return reject(failed('The conversion was cancelled.', `${kind} worker aborted`));
    const worker = new Worker(url, { workerData: data, transferList: [...(opts.transfer ?? [])], resourceLimits: { maxOldGenerationSizeMb: heap, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 }, stdout: true, stderr: true });
    let settled = false;
    const finish = (err?: Error, answer?: T): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      job.signal?.removeEventListener('abort', onAbort);
      void worker.terminate();
      if (err) reject(err);
      else resolve(answer as T);
    };
    const timer = setTimeout(() => finish(failed(opts.timeoutMessage ?? 'The conversion took too long and was stopped.', `${kind} worker timed out after ${job.timeoutMs} ms`)), job.timeoutMs);
    const onAbort = (): void => finish(failed('The conversion was cancelled.', `${kind} worker aborted`));
    job.signal?.addEventListener('abort', onAbort, { once: true });
    worker.once('message', (a: T | { ok: false; message: string; detail?: string }) => (a.ok ? finish(undefined, a) : finish(failed(a.message, a.detail ?? a.message))));
    worker.once('error', (e: Error & { code?: string }) => {
      if (e.code === 'ERR_WORKER_OUT_OF_MEMORY') finish(failed(opts.memoryMessage ?? `The file needs more memory to convert than the ${heap} MiB allowed per conversion; it was stopped.`, `${kind} worker: ${e.message}`));
      else finish(failed(opts.failure, e.message));
    });
    worker.once('exit', (code) => finish(failed(opts.failure, `${kind} worker exited with ${code}`)));
  });
}
