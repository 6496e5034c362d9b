/**
 * Runs the XML pre-pass's rewrite in a worker thread through the structured-data engines'
 * runner (`engines/structured/run-in-worker.ts`): the document is hostile input, so it is
 * never parsed on the service's event loop; the worker gets a heap cap, a small stack, the
 * job's time-out (then `terminate()`) and its cancel signal.
 */
import type { JobContext } from '../engines/engine.js';
import { runWorkerThread } from '../engines/structured/run-in-worker.js';
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
export async function expandInWorker(task: ExpandJob, job: JobContext): Promise<number> {
  const answer = await runWorkerThread<{ ok: true; references: number }>(WORKER_URL, task, job, {
    kind: 'xml-entities', maxHeapMb: MAX_HEAP_MB, failure: `The ${task.ext} file's XML entities could not be expanded.`,
  });
  return answer.references;
}
