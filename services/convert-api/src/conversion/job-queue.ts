/** One queued unit of work. */
interface Waiting {
  accountId: string;
  limit: number;
  run: () => Promise<void>;
}

/**
 * The in-process conversion queue: at most `maxRunning` conversions at once in this
 * process, and at most the plan's `max_concurrent_jobs` per account; the rest wait in
 * arrival order. An account at its limit does not hold up other accounts behind it.
 */
export class JobQueue {
  private running = 0;
  private readonly perAccount = new Map<string, number>();
  private readonly waiting: Waiting[] = [];
  private readonly active = new Set<Promise<void>>();

  constructor(private readonly maxRunning: number) {}

  /** Queues `run` for `accountId`, whose plan allows `limit` at once. `run` must not throw. */
  push(accountId: string, limit: number, run: () => Promise<void>): void {
    this.waiting.push({ accountId, limit, run });
    this.pump();
  }

  /** Conversions running and waiting, for logs and tests. */
  stats(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }

  /** Resolves when nothing is running (waiting work is dropped: the process is stopping). */
  async drain(): Promise<void> {
    this.waiting.length = 0;
    while (this.active.size) await Promise.allSettled([...this.active]);
  }

  private pump(): void {
    for (let i = 0; i < this.waiting.length && this.running < this.maxRunning; ) {
      const job = this.waiting[i]!;
      const busy = this.perAccount.get(job.accountId) ?? 0;
      if (busy >= job.limit) {
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      this.running++;
      this.perAccount.set(job.accountId, busy + 1);
      const p = job.run().finally(() => {
        this.running--;
        const left = (this.perAccount.get(job.accountId) ?? 1) - 1;
        if (left > 0) this.perAccount.set(job.accountId, left);
        else this.perAccount.delete(job.accountId);
        this.active.delete(p);
        this.pump();
      });
      this.active.add(p);
    }
  }
}
