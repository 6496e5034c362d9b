import { createHash } from 'node:crypto';
import { Type } from 'typebox';
import type { Kysely } from 'kysely';
import { AppError, type ServiceApp } from '@mailconv/platform';
import type { EmailTables } from '../../db/schema.js';
import { planOf, type EmailDeps } from '../../deps.js';
import { MAX_EMAIL_INPUT } from '../../jobs/job-list.js';
import { SECURED, errors } from '../../schemas.js';
import { BatchResponse, SingleResponse } from '../../verification/schemas.js';
import type { RecordedEvent } from '../../repositories/events.repository.js';
import type { BatchAnswer } from '../../verification/verification.service.js';
import { throwValidationError } from '../validation-errors.js';

const SingleBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: MAX_EMAIL_INPUT, description: 'The address to verify, as the user typed it.' }),
    use_smtp: Type.Optional(Type.Boolean({ default: false, description: 'Probe the mailbox over SMTP (plans with `features.smtp`).' })),
  },
  { additionalProperties: false },
);

const BatchBody = Type.Object(
  {
    emails: Type.Array(Type.String({ minLength: 1, maxLength: MAX_EMAIL_INPUT }), { minItems: 1, maxItems: 10_000, description: 'At most 10,000, or the plan’s lower batch cap.' }),
    use_smtp: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
);

const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
/** How long a batch's deliveries wait for its answer to be sent (only reached if the process dies in between). */
const BATCH_EVENT_HOLD_MS = 10_000;
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** `POST /api/v1/verify-single` and `POST /api/v1/verify-batch`. */
export function registerVerifyRoutes(app: ServiceApp, deps: EmailDeps, options: { batchBodyLimit: number }): void {
  app.post(
    '/api/v1/verify-single',
    {
      attachValidation: true,
      schema: {
        tags: ['verification'],
        summary: 'Verify one address (one unit of quota)',
        description:
          'Charges one verification before the work and answers with the quota after the charge. An address that is not syntactically valid is still a verdict (`invalid` / `invalid_syntax`, charged); a missing, empty or non-string `email` is 400 `invalid_email` and charges nothing.',
        security: SECURED,
        body: SingleBody,
        response: { 200: SingleResponse, ...errors(400, 401, 403, 413, 415, 429, 500, 503) },
      },
    },
    async (request) => {
      throwValidationError(request);
      const principal = request.principal!;
      const { result, quota } = await deps.verification.single(principal, planOf(deps, principal.plan), request.body.email, request.body.use_smtp ?? false);
      return { success: true, ...result, quota };
    },
  );

  /** Events of answered batches, by request: their deliveries are held until the answer is sent. */
  const batchEvents = new WeakMap<object, RecordedEvent>();
  /**
   * Records `batch.completed` before the answer is sent (nothing lost should the process
   * stop right after), its deliveries held until `onResponse` releases them, so that no
   * webhook arrives before the caller has its answer (contract: delivered after the API
   * response). Should the process die first, they go out after the hold.
   */
  const recordBatch = async (request: object, accountId: string, answer: BatchAnswer, also?: (trx: Kysely<EmailTables>) => Promise<void>) => {
    const { total, valid, invalid, risky } = answer.summary;
    const now = deps.clock();
    const payload = { event: 'batch.completed', batch_id: answer.batch_id, summary: { total, valid, invalid, risky }, timestamp: now.toISOString() };
    const event = await deps.core.database.writeTransaction(async (trx) => {
      await also?.(trx);
      return deps.events.record(accountId, 'batch.completed', payload, now, trx, { holdMs: BATCH_EVENT_HOLD_MS });
    });
    batchEvents.set(request, event);
  };

  app.post(
    '/api/v1/verify-batch',
    {
      bodyLimit: options.batchBodyLimit,
      schema: {
        tags: ['verification'],
        summary: 'Verify up to 10,000 addresses inline',
        description:
          'The whole batch is charged atomically before the work, or refused with 429 `quota_exceeded` charging nothing. Results keep the input order. ' +
          'With an `Idempotency-Key` header, a retry with the same key and body within 24 h returns the first answer (header `Idempotent-Replayed: true`) and charges nothing; the same key with another body is 409 `conflict`. ' +
          'A `batch.completed` event is recorded after the answer is sent.',
        security: SECURED,
        headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String({ description: 'Unique per request, 1–255 visible ASCII characters.' })) }),
        body: BatchBody,
        response: { 200: BatchResponse, ...errors(400, 401, 403, 409, 413, 415, 429, 500, 503) },
      },
      onResponse: async (request) => {
        // The answer is out: the event's deliveries may go now.
        const event = batchEvents.get(request);
        if (event?.deliveries) await deps.events.release(event.id, deps.clock());
      },
    },
    async (request, reply) => {
      const principal = request.principal!;
      const plan = planOf(deps, principal.plan);
      const key = request.headers['idempotency-key'];
      const useSmtp = request.body.use_smtp ?? false;
      if (key === undefined) {
        const answer = await deps.verification.batch(principal, plan, request.body.emails, useSmtp);
        await recordBatch(request, principal.accountId, answer);
        return answer;
      }
      if (!IDEMPOTENCY_KEY.test(key)) throw new AppError('invalid_request', 'Idempotency-Key must be 1–255 visible ASCII characters.', { field: 'Idempotency-Key' });
      const hash = createHash('sha256').update(`verify-batch\n${useSmtp}\n${JSON.stringify(request.body.emails)}`).digest('hex');
      const claim = await deps.idempotency.claim(principal.accountId, key, hash, deps.clock(), IDEMPOTENCY_TTL_MS);
      if (claim.kind === 'mismatch') throw new AppError('conflict', 'This Idempotency-Key was already used with a different request body.');
      if (claim.kind === 'in_progress') throw new AppError('conflict', 'A request with this Idempotency-Key is still being processed; retry shortly.');
      if (claim.kind === 'replay') {
        // The stored bytes are sent as they are (a string payload skips serialisation).
        return reply.code(claim.statusCode as 200).header('idempotent-replayed', 'true').type('application/json; charset=utf-8').send(claim.body as never);
      }
      try {
        const answer = await deps.verification.batch(principal, plan, request.body.emails, useSmtp);
        const body = reply.serialize(answer) as string;
        // The stored answer and the event commit together.
        await recordBatch(request, principal.accountId, answer, (trx) => deps.idempotency.complete(principal.accountId, key, 200, body, trx));
        return reply.type('application/json; charset=utf-8').send(body as never);
      } catch (err) {
        await deps.idempotency.release(principal.accountId, key);
        throw err;
      }
    },
  );
}
