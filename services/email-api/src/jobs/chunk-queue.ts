import { BullWorkQueue } from '@mailconv/platform';

/** A chunk to work on: the message carries only its address in the database. */
export interface ChunkMessage {
  jobId: string;
  idx: number;
}

/**
 * BullMQ as the transport of chunk work between processes (`EMAIL_REDIS_URL` with
 * PostgreSQL): a submit enqueues one message per chunk, and every worker process consumes
 * them. The database stays the state of record: a message only says "look at this chunk";
 * the worker still claims it with a lease, so a duplicate, stale or lost message changes
 * nothing (the workers' slow database poll picks up anything a message did not bring).
 */
export class BullChunkQueue extends BullWorkQueue<ChunkMessage> {
  /** One message per chunk of a stored job. */
  async enqueueJob(jobId: string, chunkCount: number): Promise<void> {
    await this.add(Array.from({ length: chunkCount }, (_, idx) => ({ id: `${jobId}.${idx}`, data: { jobId, idx } })));
  }

  /** A message for one chunk again, after `delayMs` (greylisting retry, or handed back at shutdown); `tag` keeps its id unique. */
  async enqueueChunk(message: ChunkMessage, delayMs: number, tag: string): Promise<void> {
    await this.add([{ id: `${message.jobId}.${message.idx}.${tag}`, data: message, delayMs }]);
  }
}
