import { Type } from 'typebox';
import { withHeaders, type RecordedEvent, type ServiceApp } from '@mailconv/platform';
import { planOf, type EmailDeps } from '../../deps.js';
import { MAX_EMAIL_INPUT } from '../../jobs/job-list.js';
import { IDEMPOTENT_REPLAYED, SECURED, errors, secured } from '../../schemas.js';
import { BatchResponse, SingleResponse } from '../../verification/schemas.js';
import { sendIdempotent } from '../idempotent-reply.js';
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
        response: secured({ 200: SingleResponse, ...errors(400, 401, 403, 413, 415, 429, 500, 503) }),
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
        response: secured({ 200: withHeaders(BatchResponse, IDEMPOTENT_REPLAYED), ...errors(400, 401, 403, 409, 413, 415, 429, 500, 503) }),
      },
      onResponse: async (request) => {
        // The answer is out: the event's deliveries may go now.
        const event = batchEvents.get(request);
        if (event) await deps.batches.answered(event);
      },
    },
    async (request, reply) => {
      const principal = request.principal!;
      const input = { emails: request.body.emails, useSmtp: request.body.use_smtp ?? false, idempotencyKey: request.headers['idempotency-key'] };
      const { outcome, event } = await deps.batches.verify(principal, planOf(deps, principal.plan), input, (answer) => reply.serialize(answer) as string);
      if (event) batchEvents.set(request, event);
      return sendIdempotent(reply, outcome, 200);
    },
  );
}
