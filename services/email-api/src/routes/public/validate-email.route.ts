import { Type } from 'typebox';
import { AppError, type RateLimiter, type ServiceApp } from '@mailconv/platform';
import type { EmailDeps } from '../../deps.js';
import { errors, publicResponses } from '../../schemas.js';
import { VerificationResultSchema } from '../../verification/schemas.js';
import { throwValidationError } from '../validation-errors.js';
import { MAX_EMAIL_INPUT } from '../../jobs/job-list.js';

export interface PublicLimits {
  perMinute: number;
  smtpPerDay: number;
  minuteLimiter: RateLimiter;
  dayLimiter: RateLimiter;
}

/** `POST /api/validate-email`: no key, no quota, limited per client IP (behind a proxy, per EMAIL_TRUST_PROXY). */
export function registerPublicRoutes(app: ServiceApp, deps: EmailDeps, limits: PublicLimits): void {
  app.post(
    '/api/validate-email',
    {
      attachValidation: true,
      schema: {
        tags: ['public'],
        summary: 'Verify one address without an API key (for trying the service)',
        description: `No key and no quota. Limited to ${limits.perMinute} requests per minute and ${limits.smtpPerDay} SMTP probes per day per client IP; over either, 429 with Retry-After.`,
        body: Type.Object(
          { email: Type.String({ minLength: 1, maxLength: MAX_EMAIL_INPUT }), use_smtp: Type.Optional(Type.Boolean({ default: false })) },
          { additionalProperties: false },
        ),
        response: publicResponses({ 200: VerificationResultSchema, ...errors(400, 413, 415, 429, 500, 503) }),
      },
      // Counted before the body is read, so a flood costs no parsing.
      onRequest: async (request, reply) => {
        const d = await limits.minuteLimiter.consume(request.ip, limits.perMinute);
        reply.headers({ 'ratelimit-limit': d.limit, 'ratelimit-remaining': d.remaining, 'ratelimit-reset': d.resetSeconds });
        if (!d.allowed) throw new AppError('rate_limited', `At most ${d.limit} requests per minute from one address; retry in ${d.resetSeconds} s.`, undefined, { 'retry-after': String(d.resetSeconds) });
      },
    },
    async (request, reply) => {
      throwValidationError(request);
      const useSmtp = request.body.use_smtp ?? false;
      deps.verification.checkSmtp(useSmtp, null);
      // No probe is made while probing is known to be unavailable: nothing of the day's allowance is used.
      if (useSmtp && !deps.verification.smtpKnownUnavailable()) {
        const d = await limits.dayLimiter.consume(request.ip, limits.smtpPerDay);
        if (!d.allowed) {
          reply.headers({ 'ratelimit-limit': d.limit, 'ratelimit-remaining': 0, 'ratelimit-reset': d.resetSeconds });
          throw new AppError('rate_limited', `At most ${d.limit} SMTP probes per day from one address; retry in ${d.resetSeconds} s, or without use_smtp.`, undefined, { 'retry-after': String(d.resetSeconds) });
        }
      }
      return deps.verification.anonymous(request.body.email, useSmtp);
    },
  );
}
