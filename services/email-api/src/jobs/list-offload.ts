import { Piscina } from 'piscina';
import type { ListTask, ListTaskResult } from './list.worker.js';

/** Bodies from this size on are read in a worker thread (a million addresses is about 29 MB). */
export const OFFLOAD_MIN_BYTES = 1_048_576;

/** A large submit body already read off the event loop: the route's body validation lets it through (the worker checked the same shape). */
export class OffloadedList {
  constructor(readonly result: Exclude<ListTaskResult, { kind: 'fallback' }>) {}
}

/**
 * Reads large `POST /api/v1/jobs` bodies in one worker thread (piscina), so that parsing
 * and preparing a million addresses does not stall every other request of the process.
 */
export class ListReader {
  private pool: Piscina<ListTask, ListTaskResult> | null = null;

  async read(body: Buffer, chunkSize: number, withHash: boolean): Promise<ListTaskResult> {
    this.pool ??= new Piscina<ListTask, ListTaskResult>({ filename: new URL('./list.worker.js', import.meta.url).href, maxThreads: 1, idleTimeout: 60_000 });
    return this.pool.run({ body, chunkSize, withHash });
  }

  async close(): Promise<void> {
    await this.pool?.destroy();
    this.pool = null;
  }
}
