import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';

/** One message to add: its BullMQ job id (duplicates of a live id are ignored), data and delay. */
export interface WorkMessage<M> {
  id: string;
  data: M;
  delayMs?: number;
}

/** Messages per Redis round trip. */
const ADD_BATCH = 500;

/**
 * BullMQ as the transport of work between processes. A message only says "look at this
 * record"; the database stays the state of record and the consumer still claims the work
 * with a lease there, so a duplicate, stale or lost message changes nothing. Both services
 * use it: the email service for job chunks, the conversion service for conversions.
 */
export class BullWorkQueue<M extends object> {
  private readonly producer: Redis;
  private readonly queue: Queue<M>;
  private consumer: { worker: Worker<M>; connection: Redis } | null = null;

  constructor(
    private readonly redisUrl: string,
    private readonly name: string,
    private readonly log: { error(obj: object, msg: string): void },
  ) {
    // Fail fast while Redis is down (BullMQ's advice for producers behind an HTTP request):
    // with the offline queue a submit waited for Redis to come back (issue #15). A message
    // that could not be added is not lost work: the consumers' database poll finds the record.
    this.producer = new Redis(redisUrl, { maxRetriesPerRequest: null, enableOfflineQueue: false });
    this.queue = new Queue<M>(name, { connection: this.producer, defaultJobOptions: { removeOnComplete: true, removeOnFail: 1000 } });
    this.queue.on('error', (err) => this.log.error({ err, queue: name }, 'work queue (Redis) error'));
  }

  /** Adds messages, `ADD_BATCH` per round trip; rejects at once while Redis is not connected. */
  async add(messages: ReadonlyArray<WorkMessage<M>>): Promise<void> {
    for (let start = 0; start < messages.length; start += ADD_BATCH) {
      const batch = messages.slice(start, start + ADD_BATCH).map((m) => ({
        name: this.name,
        data: m.data,
        opts: { jobId: m.id, ...(m.delayMs ? { delay: m.delayMs } : {}) },
      }));
      // BullMQ's job-name type is derived from the data type; the name is only a label here.
      await this.queue.addBulk(batch as Parameters<Queue<M>['addBulk']>[0]);
    }
  }

  /** Starts consuming: up to `concurrency` messages handled at once by this process. */
  consume(concurrency: number, handle: (message: M) => Promise<void>): void {
    if (this.consumer) return;
    const connection = new Redis(this.redisUrl, { maxRetriesPerRequest: null });
    const worker = new Worker<M>(this.name, async (job) => handle(job.data), { connection, concurrency });
    worker.on('error', (err) => this.log.error({ err, queue: this.name }, 'work queue consumer (Redis) error'));
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
