/**
 * Runs the XML pre-pass's rewrite in a worker thread, as the structured-data engines run
 * (`engines/structured/run-in-worker.ts`): the document is hostile input, so it is never
 * parsed on the service's event loop; the worker gets a heap cap, a small stack, the job's
 * time-out (then `terminate()`) and its cancel signal.
 */
import { Worker } from 'node:worker_threads';
import { failed } from '../errors.js';
import type { JobContext } from '../engines/engine.js';
import type { XmlEncoding } from './xml-entities.js';

/** What the worker is asked to do. */
export interface ExpandJob {
  readonly input: string;
  readonly output: string;
  readonly ext: string;
  readonly encoding: XmlEncoding;
  readonly maxExpansion: number;
}

/** The worker's answer. */
export type ExpandAnswer = { readonly ok: true; readonly references: number } | { readonly ok: false; readonly message: string; readonly detail?: string };

/** Heap cap of the worker in MiB (lowered to the job's memory cap). */
const MAX_HEAP_MB = 512;
const WORKER_URL = new URL('./xml-entities-worker.js', import.meta.url);

/** Expands `task.input` into `task.output`; answers the references expanded, throws `conversion_failed` otherwise. */
export function expandInWorker(task: ExpandJob, job: JobContext): Promise<number> {
  const jobHeap = job.maxMemoryBytes ? Math.floor(job.maxMemoryBytes / 1024 ** 2) : MAX_HEAP_MB;
  const heap = Math.max(64, Math.min(MAX_HEAP_MB, jobHeap));
  return new Promise<number>((resolve, reject) => {
    if (job.signal?.aborted) return reject(failed('The conversion was cancelled.', 'xml entities worker aborted'));
    const worker = new Worker(WORKER_URL, { workerData: task, resourceLimits: { maxOldGenerationSizeMb: heap, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 }, stdout: true, stderr: true });
    let settled = false;
    const finish = (err: Error | undefined, references = 0): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      job.signal?.removeEventListener('abort', onAbort);
      void worker.terminate();
      if (err) reject(err);
      else resolve(references);
    };
    const timer = setTimeout(() => finish(failed(`Expanding the ${task.ext} file's XML entities took too long and was stopped.`, `xml entities worker timed out after ${job.timeoutMs} ms`)), job.timeoutMs);
    const onAbort = (): void => finish(failed('The conversion was cancelled.', 'xml entities worker aborted'));
    job.signal?.addEventListener('abort', onAbort, { once: true });
    worker.once('message', (a: ExpandAnswer) => finish(a.ok ? undefined : failed(a.message, a.detail ?? a.message), a.ok ? a.references : 0));
    worker.once('error', (e: Error & { code?: string }) => {
      if (e.code === 'ERR_WORKER_OUT_OF_MEMORY') finish(failed(`Expanding the ${task.ext} file's XML entities needs more memory than the ${heap} MiB allowed; it was stopped.`, e.message));
      else finish(failed(`The ${task.ext} file's XML entities could not be expanded.`, e.message));
    });
    worker.once('exit', (code) => finish(failed(`The ${task.ext} file's XML entities could not be expanded.`, `xml entities worker exited with ${code}`)));
  });
}
