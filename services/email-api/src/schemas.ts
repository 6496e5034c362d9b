import { Type } from 'typebox';
import { RATE_LIMIT_HEADERS, errorResponses, errorSchema, securedResponses, securityRequirement, withHeaders, type KeyLocation } from '@mailconv/platform';
import type { TSchema } from 'typebox';
import { EMAIL_ERROR_CODES } from './errors.js';

/** Where the email service accepts API keys: all three forms of the contract. */
export const KEY_LOCATIONS: readonly KeyLocation[] = ['bearer', 'x-api-key', 'query'];

/** The extra fields some error codes carry, documented on the one error shape. */
export const ErrorBody = errorSchema(EMAIL_ERROR_CODES, {
  status: Type.String({ description: '`job_not_completed` and `job_not_cancellable`: the job’s current status.' }),
  progress_pct: Type.Integer({ minimum: 0, maximum: 100, description: '`job_not_completed`: how far the job is.' }),
  remaining: Type.Integer({ description: '`insufficient_quota`: units left this month.' }),
  required: Type.Integer({ description: '`insufficient_quota`: units the job needs.' }),
});

/** Error responses documented on a route, in the contract's error shape. */
export const errors = (...statuses: number[]) => errorResponses(ErrorBody, statuses);

/** `security` of authenticated routes: an API key, or the dashboard session cookie (extension). */
export const SECURED = securityRequirement(KEY_LOCATIONS, { session: true });

/** Responses of an authenticated route, with the `RateLimit-*` headers documented. */
export const secured = (responses: Record<number, TSchema>) => securedResponses(responses);

/** Responses of the public route: its per-address limit is counted first, and sends the same headers. */
export const publicResponses = (responses: Record<number, TSchema>) =>
  Object.fromEntries(Object.entries(responses).map(([status, schema]) => [status, withHeaders(schema, RATE_LIMIT_HEADERS)])) as Record<number, TSchema>;

/** A replayed idempotent answer carries `Idempotent-Replayed: true`. */
export const IDEMPOTENT_REPLAYED = {
  'Idempotent-Replayed': Type.String({ enum: ['true'], description: 'Present when this is the stored answer of an earlier request with the same `Idempotency-Key`.' }),
};
