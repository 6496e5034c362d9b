import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { AccountsRepository, Principal } from '../accounts/accounts.repository.js';
import type { KeyUsageRecorder } from '../accounts/key-usage-recorder.js';
import { AppError } from '../errors/app-error.js';
import type { RateLimiter } from '../ratelimit/rate-limiter.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller; set by the auth hook on protected routes. */
    principal: Principal | null;
  }
}

/** Where a service accepts its API key. */
export type KeyLocation = 'bearer' | 'x-api-key' | 'query';

/** Finds the key in the request, or explains what is wrong with how it was sent. */
export function extractApiKey(request: FastifyRequest, accepted: readonly KeyLocation[]): { key: string } | { problem: string } {
  const authorization = request.headers.authorization;
  if (accepted.includes('bearer') && authorization !== undefined) {
    const match = /^Bearer[ ]+(\S+)[ ]*$/i.exec(authorization);
    if (!match?.[1]) return { problem: 'The Authorization header must be "Bearer <API key>".' };
    return { key: match[1] };
  }
  const header = request.headers['x-api-key'];
  if (accepted.includes('x-api-key') && header !== undefined) {
    const value = Array.isArray(header) ? header[0] : header;
    if (!value?.trim()) return { problem: 'The X-API-Key header is empty.' };
    return { key: value.trim() };
  }
  if (accepted.includes('query')) {
    const value = (request.query as Record<string, unknown> | undefined)?.api_key;
    if (typeof value === 'string' && value.trim()) return { key: value.trim() };
  }
  const forms = accepted.map((f) => (f === 'bearer' ? 'Authorization: Bearer <key>' : f === 'x-api-key' ? 'X-API-Key: <key>' : '?api_key=<key>'));
  return { problem: `Missing API key: send ${forms.join(', or ')}.` };
}

export interface ApiKeyAuthOptions {
  accounts: AccountsRepository;
  usage: KeyUsageRecorder;
  accept: readonly KeyLocation[];
  /** Per-account requests-per-minute limit, counted on every authenticated request. */
  rateLimit?: { limiter: RateLimiter; perMinute: (principal: Principal) => number };
}

/**
 * An onRequest hook that authenticates every request of the routes it is added to, then
 * applies the account's per-minute rate limit. It runs before the body is read, so an
 * unauthenticated or rate-limited caller cannot make the server parse a large body. Every
 * request's key is looked up in the database (lookups of one turn share a query): a revoked
 * key stops working at once on every node. Every
 * answer carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`; a refusal
 * is 429 `rate_limited` with `Retry-After`.
 */
export function apiKeyAuth(options: ApiKeyAuthOptions): onRequestAsyncHookHandler {
  return async (request, reply) => {
    const found = extractApiKey(request, options.accept);
    if ('problem' in found) throw new AppError('unauthorized', found.problem, undefined, { 'www-authenticate': 'Bearer' });
    const principal = await options.accounts.findPrincipal(found.key);
    if (!principal) throw new AppError('unauthorized', 'The API key is not valid or has been revoked.', undefined, { 'www-authenticate': 'Bearer error="invalid_token"' });
    request.principal = principal;
    options.usage.record(principal.keyId);
    if (!options.rateLimit) return;
    const decision = await options.rateLimit.limiter.consume(principal.accountId, options.rateLimit.perMinute(principal));
    reply.headers({ 'ratelimit-limit': decision.limit, 'ratelimit-remaining': decision.remaining, 'ratelimit-reset': decision.resetSeconds });
    if (!decision.allowed) {
      throw new AppError('rate_limited', `Rate limit of ${decision.limit} requests per minute reached; retry in ${decision.resetSeconds} s.`, undefined, {
        'retry-after': String(decision.resetSeconds),
      });
    }
  };
}
