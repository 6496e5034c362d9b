/**
 * SHA-256 on a thread of its own (issue 24, the transfer path): an upload's bytes are hashed
 * while the main thread goes on parsing the next part of the body and the disk writes the
 * last one. Profiled during a large upload, hashing on the main thread took about a quarter
 * of its time. One thread serves every upload of the process. A stream's bytes lie in memory
 * shared with the thread (a ring of blocks the caller fills): nothing is copied or allocated
 * per block, and each update is acknowledged so that its block may be filled again.
 */
import { Worker } from 'node:worker_threads';

/** Messages to the hashing thread. */
export type HashRequest =
  | { id: number; op: 'open'; memory: SharedArrayBuffer }
  | { id: number; op: 'update'; offset: number; length: number }
  | { id: number; op: 'digest' }
  | { id: number; op: 'drop' };
/** Its answers. */
export type HashReply = { id: number; op: 'updated' } | { id: number; op: 'digest'; hex: string } | { id: number; op: 'unknown' };

/** One stream's hash over its shared memory: update with its blocks in order, then digest (or drop). */
export interface StreamHash {
  /** Hashes `length` bytes of the memory at `offset` next; resolves once hashed (the block may then change). */
  update(offset: number, length: number): Promise<void>;
  digest(): Promise<string>;
  drop(): void;
}

/** The hashing thread, started on first use; it never keeps the process alive. */
export class OffThreadSha256 {
  private worker: Worker | null = null;
  private next = 0;
  private readonly waiting = new Map<number, Array<{ resolve: (reply: HashReply) => void; reject: (err: Error) => void }>>();

  /** A new stream whose bytes the caller puts in `memory`. */
  start(memory: SharedArrayBuffer): StreamHash {
    const id = ++this.next;
    this.thread().postMessage({ id, op: 'open', memory } satisfies HashRequest);
    return {
      update: async (offset, length) => {
        await this.ask({ id, op: 'update', offset, length });
      },
      digest: async () => {
        const reply = await this.ask({ id, op: 'digest' });
        if (reply.op !== 'digest') throw new Error('the hashing thread lost this stream');
        return reply.hex;
      },
      drop: () => this.thread().postMessage({ id, op: 'drop' } satisfies HashRequest),
    };
  }

  /** Stops the thread (tests, shutdown); the next stream starts another. */
  async close(): Promise<void> {
    const w = this.worker;
    this.worker = null;
    await w?.terminate();
  }

  private ask(m: HashRequest): Promise<HashReply> {
    return new Promise((resolve, reject) => {
      const worker = this.thread();
      // Held while an answer is awaited, so that the process waits for it; let go when none is.
      if (!this.waiting.size) worker.ref();
      const queue = this.waiting.get(m.id) ?? [];
      queue.push({ resolve, reject });
      this.waiting.set(m.id, queue);
      worker.postMessage(m);
    });
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(new URL('./sha256-worker.js', import.meta.url));
    worker.on('message', (reply: HashReply) => {
      // Answers come in the order the requests of one stream were sent.
      const queue = this.waiting.get(reply.id);
      const next = queue?.shift();
      if (queue && !queue.length) this.waiting.delete(reply.id);
      if (!this.waiting.size) worker.unref();
      // A stream the thread does not know (it restarted meanwhile) must not yield a digest of part of the bytes.
      if (reply.op === 'unknown') next?.reject(new Error('the hashing thread lost this stream'));
      else next?.resolve(reply);
    });
    const fail = (err: Error) => {
      if (this.worker === worker) this.worker = null;
      for (const queue of this.waiting.values()) for (const w of queue) w.reject(err);
      this.waiting.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the hashing thread stopped (exit ${code})`)));
    // After the listeners (adding one refs the thread again): the thread never keeps the process alive.
    worker.unref();
    this.worker = worker;
    return worker;
  }
}
