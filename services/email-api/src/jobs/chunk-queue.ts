import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';

/** A chunk to work on: the message carries only its address in the database. */
export interface ChunkMessage {
  jobId: string;
  idx: number;
}

/** Messages per Redis round trip when a job is submitted (a 1,000,000-address job has 1,000 chunks). */
const ENQUEUE_BATCH = 500;

/**
 * BullMQ as the transport of chunk work between processes (`EMAIL_REDIS_URL` with
 * PostgreSQL): a submit enqueues one message per chunk, and every worker process consumes
 * them. The database stays the state of record: a message only says "look at this chunk";
 * the worker still claims it with a lease, so a duplicate, stale or lost message changes
 * nothing (the workers' slow database poll picks up anything a message did not bring).
 */
export class BullChunkQueue {
  private readonly producer: Redis;
  private readonly queue: Queue<ChunkMessage>;
  private consumer: { worker: Worker<ChunkMessage>; connection: Redis } | null = null;

  constructor(
    private readonly redisUrl: string,
    private readonly name: string,
    private readonly log: { error(obj: object, msg: string): void },
  ) {
    this.producer = new Redis(redisUrl, { maxRetriesPerRequest: null });
    this.queue = new Queue<ChunkMessage>(name, { connection: this.producer, defaultJobOptions: { removeOnComplete: true, removeOnFail: 1000 } });
    this.queue.on('error', (err) => this.log.error({ err }, 'chunk queue (Redis) error'));
  }

  /** One message per chunk of a stored job. */
  async enqueueJob(jobId: string, chunkCount: number): Promise<void> {
    for (let start = 0; start < chunkCount; start += ENQUEUE_BATCH) {
      const batch = [];
      for (let idx = start; idx < Math.min(chunkCount, start + ENQUEUE_BATCH); idx++) batch.push({ name: 'chunk', data: { jobId, idx }, opts: { jobId: `${jobId}.${idx}` } });
      await this.queue.addBulk(batch);
    }
  }

  /** A message for one chunk again, after `delayMs` (greylisting retry, or handed back at shutdown); `tag` keeps its id unique. */
  async enqueueChunk(message: ChunkMessage, delayMs: number, tag: string): Promise<void> {
    await this.queue.add('chunk', message, { jobId: `${message.jobId}.${message.idx}.${tag}`, delay: delayMs });
  }

  /** Starts consuming: up to `concurrency` messages handled at once by this process. */
  consume(concurrency: number, handle: (message: ChunkMessage) => Promise<void>): void {
    if (this.consumer) return;
    const connection = new Redis(this.redisUrl, { maxRetriesPerRequest: null });
    const worker = new Worker<ChunkMessage>(this.name, async (job) => handle(job.data), { connection, concurrency });
    worker.on('error', (err) => this.log.error({ err }, 'chunk queue worker (Redis) error'));
    this.consumer = { worker, connection };
  }

  /** Stops consuming; waits for the handlers running. */
  async stopConsuming(): Promise<void> {
    if (!this.consumer) return;
    await this.consumer.worker.close();
    this.consumer.connection.disconnect();
    this.consumer = null;
  }

  /** Stops consuming and closes the connections. */
  async close(): Promise<void> {
    await this.stopConsuming();
    await this.queue.close();
    this.producer.disconnect();
  }
}
