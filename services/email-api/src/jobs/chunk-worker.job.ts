import { randomUUID } from 'node:crypto';
import type { ClaimedChunk, JobsRepository } from '../repositories/jobs.repository.js';
import type { BullChunkQueue, ChunkMessage } from './chunk-queue.js';
import { ACTIVE_STATES } from '../repositories/jobs.repository.js';
import type { VerificationService } from '../verification/verification.service.js';
import type { EmailObserver } from '../observer.js';
import { toStored, type JobsService, type StoredResult } from './jobs.service.js';

export interface ChunkWorkerOptions {
  jobs: JobsRepository;
  service: JobsService;
  verification: VerificationService;
  /** Chunks verified at the same time by this process. */
  concurrency: number;
  /** How long a claim holds without renewal; a killed worker's chunks are taken over after it. */
  leaseMs: number;
  /** How often an idle worker looks for new chunks (a submit in this process wakes it at once). */
  pollMs: number;
  /** Greylisted addresses (SMTP 4xx) are verified again this much later, at most `greylistRetries` times, before they stay `unknown`. */
  greylistRetryMs: number;
  greylistRetries: number;
  /**
   * Rate-limited addresses (issue 49, `smtp_rate_limited`) are verified again once their MX
   * host's cool-down is over, while the chunk has made fewer than this many retries.
   */
  rateLimitRetries?: number;
  /** MX hosts cooling down now and the longest time left: how long a rate-limited chunk waits. */
  smtpCooling?: () => { hosts: number; longestMs: number };
  /** Finished jobs' addresses and results are deleted this many days after they finished (0: kept). */
  retentionDays?: number;
  log: { error(obj: object, msg: string): void };
  /**
   * With a queue (BullMQ), chunks arrive as messages, `concurrency` at once, and the
   * database is polled every `fallbackPollMs` for anything no message brought (a submit
   * whose enqueue failed, a crashed holder's expired lease, messages Redis lost), by one
   * loop per slot that claims only while this process has a slot free.
   */
  queue?: BullChunkQueue | null;
  fallbackPollMs?: number;
  /** Told of lease take-overs and stored chunks (metrics). */
  observer?: Pick<EmailObserver, 'leaseExpired' | 'chunkStored'>;
}

/**
 * Chunks with SMTP probing in flight per worker slot (issue 23). Their time goes to
 * waiting on remote servers, and a chunk's last domains hold its slot while most hosts
 * have nothing to do: with several in flight, the next chunk's domains fill the sessions
 * the tail leaves free. The prober's per-host and per-provider limits bound the sessions,
 * whatever the number of chunks.
 */
export const SMTP_CHUNKS_PER_SLOT = 4;

/** Reasons whose addresses a later attempt of the chunk verifies again. */
const RETRIED: ReadonlySet<string | null> = new Set(['greylisted', 'smtp_rate_limited']);
/** A rate-limited chunk waits at least this long, and this much past the cool-down it waits for. */
const RATE_LIMIT_MIN_WAIT_MS = 1000;
const RATE_LIMIT_SLACK_MS = 100;

/** How often a chunk in flight reads its job's status (a cancel from another process). */
const STATUS_CHECK_MS = 1000;
/** How often an idle worker looks for jobs a dead process left half-stored, and for results past retention. */
const ABANDONED_SWEEP_MS = 600_000;

interface Flight {
  chunk: ClaimedChunk;
  stop: boolean;
}

const sleep = (ms: number, signal: { wake?: () => void }) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.wake = () => {
      clearTimeout(t);
      resolve();
    };
  });

/**
 * The in-process job worker: `concurrency` loops that each claim a chunk (with a lease),
 * verify it grouped by domain, and store its results with the job's counters in one
 * transaction. While a chunk is verified its lease is renewed and the job's status checked,
 * so a cancel made by any process stops the work inside the chunk; a chunk whose lease was
 * lost (this process stalled past it) is never stored. After a crash nothing is renewed,
 * the leases expire and the next worker verifies those chunks again from the start: every
 * address ends up stored exactly once.
 */
export class ChunkWorker {
  /** This worker's id: the first part of the lease tokens of the chunks it holds (`<id>:<n>`). */
  readonly id = randomUUID();
  private claims = 0;
  private stopping = false;
  private loops: Array<Promise<void>> = [];
  private readonly sleepers = new Set<{ wake?: () => void }>();
  private readonly flights = new Set<Flight>();
  /** Chunks this process is claiming or verifying (loops and queue messages). */
  private busy = 0;
  private lastSweep = 0;
  /** SMTP chunks a loop handed off to verify while it claims the next one. */
  private readonly detached = new Set<Promise<void>>();

  constructor(private readonly o: ChunkWorkerOptions) {}

  start(): void {
    if (this.loops.length) return;
    if (this.o.queue) {
      this.o.queue.consume(this.o.concurrency, (m) => this.runMessage(m));
      // One database poll per slot, each claiming only while this process has a free slot:
      // when messages are missing (Redis restarted without persistence, or messages arrived
      // while the database was down and were dropped) the work still runs `concurrency` at a
      // time here, not one chunk at a time (issue #15).
      for (let i = 0; i < this.o.concurrency; i++) this.loops.push(this.loop(this.o.fallbackPollMs ?? this.o.pollMs, true));
    } else {
      for (let i = 0; i < this.o.concurrency; i++) this.loops.push(this.loop(this.o.pollMs));
    }
  }

  /** A queue message: claims the chunk it names, if it is still claimable, and verifies it. */
  private async runMessage(m: ChunkMessage): Promise<void> {
    if (this.stopping) return;
    let chunk: ClaimedChunk | null = null;
    this.busy++;
    try {
      chunk = await this.o.jobs.claim(`${this.id}:${++this.claims}`, new Date(), this.o.leaseMs, m);
      if (chunk) await this.process(chunk);
    } catch (err) {
      this.o.log.error({ err, job_id: m.jobId, chunk: m.idx }, 'job chunk failed');
    } finally {
      this.busy--;
    }
  }

  /** New work was stored: idle loops look now instead of at their next poll. */
  wake(): void {
    for (const s of this.sleepers) s.wake?.();
  }

  /** A job was cancelled in this process: stop its chunks now, not at the next lease renewal. */
  cancelled(jobId: string): void {
    for (const f of this.flights) if (f.chunk.jobId === jobId) f.stop = true;
  }

  /** Stops claiming, hands back unfinished chunks, waits for the loops to end. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const f of this.flights) f.stop = true;
    this.wake();
    await Promise.all([...this.loops, this.o.queue?.stopConsuming()]);
    await Promise.all([...this.detached]);
    this.loops = [];
  }

  private async loop(pollMs: number, onlyWhenFree = false): Promise<void> {
    while (!this.stopping) {
      let chunk: ClaimedChunk | null = null;
      const free = !onlyWhenFree || this.busy < this.o.concurrency;
      if (free) this.busy++;
      try {
        if (free) chunk = await this.o.jobs.claim(`${this.id}:${++this.claims}`, new Date(), this.o.leaseMs);
        if (chunk && chunk.useSmtp && !onlyWhenFree && this.detached.size < this.o.concurrency * (SMTP_CHUNKS_PER_SLOT - 1)) {
          // Verified beside this loop, which claims the next chunk at once.
          this.detach(chunk);
          continue;
        }
        if (chunk) await this.process(chunk);
      } catch (err) {
        this.o.log.error({ err, job_id: chunk?.jobId, chunk: chunk?.idx }, 'job chunk failed');
        chunk = null;
      } finally {
        if (free) this.busy--;
      }
      if (!chunk && !this.stopping && Date.now() - this.lastSweep >= ABANDONED_SWEEP_MS) {
        this.lastSweep = Date.now();
        await this.o.service.discardAbandoned().catch((err: unknown) => this.o.log.error({ err }, 'could not discard abandoned job submissions'));
        await this.o.service.sweepResults(this.o.retentionDays ?? 0).catch((err: unknown) => this.o.log.error({ err }, 'could not delete job results past retention'));
      }
      if (!chunk && !this.stopping) {
        const signal: { wake?: () => void } = {};
        this.sleepers.add(signal);
        await sleep(pollMs, signal);
        this.sleepers.delete(signal);
      }
    }
  }

  private detach(chunk: ClaimedChunk): void {
    const work: Promise<void> = this.process(chunk)
      .catch((err: unknown) => this.o.log.error({ err, job_id: chunk.jobId, chunk: chunk.idx }, 'job chunk failed'))
      .finally(() => {
        this.detached.delete(work);
        // A slot for another SMTP chunk: a loop waiting on its own chunk may now hand it off.
        this.wake();
      });
    this.detached.add(work);
  }

  private async process(chunk: ClaimedChunk): Promise<void> {
    if (chunk.tookOver) this.o.observer?.leaseExpired?.();
    const emails = parseChunk(chunk.emails, chunk.size);
    if (!emails) {
      await this.o.service.fail(chunk.jobId, `stored addresses of chunk ${chunk.idx} are unreadable`);
      return;
    }
    const flight: Flight = { chunk, stop: false };
    this.flights.add(flight);
    let renewing = Promise.resolve();
    // The job's status is read every STATUS_CHECK_MS (a cancel made by another process stops
    // the chunk within about that long); the lease is renewed well before it runs out.
    const renewEvery = Math.max(50, Math.floor(this.o.leaseMs / 3));
    const tick = Math.min(renewEvery, STATUS_CHECK_MS);
    let renewedAt = Date.now();
    const timer = setInterval(() => {
      renewing = renewing.then(async () => {
        try {
          let held = true;
          if (Date.now() - renewedAt + tick >= renewEvery) {
            held = await this.o.jobs.renew(chunk, new Date(Date.now() + this.o.leaseMs));
            renewedAt = Date.now();
          }
          const status = await this.o.jobs.status(chunk.jobId);
          if (!held || !status || !ACTIVE_STATES.includes(status)) flight.stop = true;
        } catch (err) {
          this.o.log.error({ err, job_id: chunk.jobId }, 'lease renewal failed');
        }
      });
    }, tick);
    // A retry verifies only the addresses that were greylisted or rate-limited last time.
    const previous = chunk.results === null ? null : parseResults(chunk.results, chunk.size);
    const todo = previous ? emails.map((_, i) => i).filter((i) => RETRIED.has(previous[i]![2])) : emails.map((_, i) => i);
    let results: StoredResult[] | null = null;
    try {
      const fresh = await this.o.verification.verifyMany(todo.map((i) => emails[i]!), { smtp: chunk.useSmtp, catchAll: chunk.catchAll, cacheScope: chunk.accountId }, () => flight.stop);
      if (fresh) {
        results = previous ? [...previous] : new Array<StoredResult>(emails.length);
        todo.forEach((i, k) => (results![i] = toStored(fresh[k]!)));
      }
    } catch (err) {
      clearInterval(timer);
      await renewing;
      this.flights.delete(flight);
      this.o.log.error({ err, job_id: chunk.jobId, chunk: chunk.idx }, 'verification of a job chunk failed');
      await this.o.service.fail(chunk.jobId, `verification of chunk ${chunk.idx} failed`);
      return;
    }
    clearInterval(timer);
    await renewing;
    this.flights.delete(flight);
    if (results) {
      const greylisted = chunk.useSmtp && chunk.attempts < this.o.greylistRetries && results.some((r) => r[2] === 'greylisted');
      // Issue 49: rate-limited addresses wait for their host's cool-down and are asked again.
      const limited = chunk.useSmtp && chunk.attempts < (this.o.rateLimitRetries ?? 0) && results.some((r) => r[2] === 'smtp_rate_limited');
      if (greylisted || limited) {
        const cooling = limited ? Math.max(RATE_LIMIT_MIN_WAIT_MS, (this.o.smtpCooling?.().longestMs ?? 0) + RATE_LIMIT_SLACK_MS) : 0;
        const delay = Math.max(greylisted ? this.o.greylistRetryMs : 0, cooling);
        if ((await this.o.jobs.defer(chunk, JSON.stringify(results), new Date(Date.now() + delay))) && this.o.queue) {
          await this.o.queue.enqueueChunk({ jobId: chunk.jobId, idx: chunk.idx }, delay, `g${chunk.attempts + 1}`);
        }
      } else if (await this.o.service.storeChunk(chunk, results)) this.o.observer?.chunkStored?.(chunk.size);
    } else if (this.stopping) {
      await this.o.jobs.release(chunk);
      // Handed back: another process gets a message for it at once.
      await this.o.queue?.enqueueChunk({ jobId: chunk.jobId, idx: chunk.idx }, 0, `r${chunk.token.replaceAll(':', '-')}`);
    }
  }
}

/** Results kept from an earlier attempt; null when unreadable (the chunk is then verified afresh). */
function parseResults(text: string, size: number): StoredResult[] | null {
  try {
    const value = JSON.parse(text) as unknown;
    return Array.isArray(value) && value.length === size ? (value as StoredResult[]) : null;
  } catch {
    return null;
  }
}

/** The stored addresses of a chunk, or null when they are not what was written. */
function parseChunk(text: string, size: number): string[] | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (!Array.isArray(value) || value.length !== size || !value.every((v) => typeof v === 'string')) return null;
  return value as string[];
}
