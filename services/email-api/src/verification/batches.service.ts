import { createHash } from 'node:crypto';
import type { Database, Principal } from '@mailconv/platform';
import type { EmailTables } from '../db/schema.js';
import type { IdempotencyService, IdempotentOutcome } from '../idempotency/idempotency.service.js';
import type { EmailPlan } from '../plans.js';
import type { EventsRepository, RecordedEvent } from '@mailconv/platform';
import type { BatchAnswer, VerificationService } from './verification.service.js';

/** How long a batch's deliveries wait for its answer to be sent (only reached if the process dies in between). */
export const BATCH_EVENT_HOLD_MS = 10_000;

/**
 * `POST /api/v1/verify-batch` as a whole: the batch verified (and charged) once per
 * `Idempotency-Key`, its answer stored and its `batch.completed` event recorded in one
 * transaction before the answer is sent (nothing lost should the process stop right after).
 * The event's deliveries are held until {@link answered} (contract: webhooks arrive after
 * the API response); should the process die first, they go out after the hold.
 */
export class BatchesService {
  constructor(
    private readonly deps: {
      database: Database<EmailTables>;
      verification: VerificationService;
      idempotency: IdempotencyService;
      events: EventsRepository;
      clock: () => Date;
    },
  ) {}

  async verify(
    principal: Principal,
    plan: EmailPlan,
    input: { emails: readonly string[]; useSmtp: boolean; idempotencyKey: string | undefined },
    serialize: (answer: BatchAnswer) => string,
  ): Promise<{ outcome: IdempotentOutcome<BatchAnswer>; event: RecordedEvent | null }> {
    let event: RecordedEvent | null = null;
    const outcome = await this.deps.idempotency.run({
      accountId: principal.accountId,
      key: input.idempotencyKey,
      fingerprint: () => createHash('sha256').update(`verify-batch\n${input.useSmtp}\n${JSON.stringify(input.emails)}`).digest('hex'),
      statusCode: 200,
      work: () => this.deps.verification.batch(principal, plan, input.emails, input.useSmtp),
      serialize,
      commit: async (answer, save) => {
        const { total, valid, invalid, risky } = answer.summary;
        const now = this.deps.clock();
        const payload = { event: 'batch.completed', batch_id: answer.batch_id, summary: { total, valid, invalid, risky }, timestamp: now.toISOString() };
        // The stored answer and the event commit together.
        event = await this.deps.database.writeTransaction(async (trx) => {
          await save(trx);
          return this.deps.events.record(principal.accountId, 'batch.completed', payload, now, trx, { holdMs: BATCH_EVENT_HOLD_MS });
        });
      },
    });
    return { outcome, event };
  }

  /** The answer is out: the batch event's deliveries may go now. */
  async answered(event: RecordedEvent): Promise<void> {
    if (event.deliveries) await this.deps.events.release(event.id, this.deps.clock());
  }
}
