import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { AccountsRepository, Principal } from '../accounts/accounts.repository.js';
import type { SessionRecord } from '../dashboard/sessions.repository.js';
import { readCookie } from './cookies.js';
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
  // Every key the request carries, wherever the service accepts one: a request must not mean
  // one account to us and another to a proxy that reads the last header or the query (issue 29).
  const found: Array<{ where: string; key: string }> = [];
  if (accepted.includes('bearer') && request.headers.authorization !== undefined) {
    // Node keeps only the first of repeated Authorization headers: they are counted in the raw headers.
    if (rawHeaderCount(request, 'authorization') > 1) return { problem: 'Send one Authorization header, not several.' };
    const match = /^Bearer[ ]+(\S+)[ ]*$/i.exec(request.headers.authorization);
    if (!match?.[1]) return { problem: 'The Authorization header must be "Bearer <API key>".' };
    found.push({ where: 'Authorization', key: match[1] });
  }
  const header = request.headers['x-api-key'];
  if (accepted.includes('x-api-key') && header !== undefined) {
    if (Array.isArray(header) || rawHeaderCount(request, 'x-api-key') > 1) return { problem: 'Send one X-API-Key header, not several.' };
    if (!header.trim()) return { problem: 'The X-API-Key header is empty.' };
    found.push({ where: 'X-API-Key', key: header.trim() });
  }
  if (accepted.includes('query')) {
    const value = (request.query as Record<string, unknown> | undefined)?.api_key;
    if (Array.isArray(value)) return { problem: 'Send one api_key parameter, not several.' };
    if (typeof value === 'string' && value.trim()) found.push({ where: 'api_key', key: value.trim() });
  }
  const first = found[0];
  if (!first) {
    const forms = accepted.map((f) => (f === 'bearer' ? 'Authorization: Bearer <key>' : f === 'x-api-key' ? 'X-API-Key: <key>' : '?api_key=<key>'));
    return { problem: `Missing API key: send ${forms.join(', or ')}.` };
  }
  // A key where this service does not read one still names an account to whoever does (a
  // proxy, the other service's conventions): a different one there is a conflict too.
  const elsewhere: Array<{ where: string; key: string }> = [];
  if (!accepted.includes('x-api-key') && typeof header === 'string' && header.trim()) elsewhere.push({ where: 'X-API-Key', key: header.trim() });
  const query = accepted.includes('query') ? undefined : (request.query as Record<string, unknown> | undefined)?.api_key;
  for (const value of [query].flat()) if (typeof value === 'string' && value.trim()) elsewhere.push({ where: 'api_key', key: value.trim() });
  const all = [...found, ...elsewhere];
  if (all.some((f) => f.key !== first.key)) return { problem: `Conflicting API keys in ${all.map((f) => f.where).join(' and ')}: send one key.` };
  return { key: first.key };
}

/** How many times a header was sent (names compared without case). */
function rawHeaderCount(request: FastifyRequest, name: string): number {
  const raw = request.raw.rawHeaders;
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]?.toLowerCase() === name) n++;
  return n;
}

/** Whether the request sends an API key in a form the service accepts (well-formed or not). */
function sendsApiKey(request: FastifyRequest, accepted: readonly KeyLocation[]): boolean {
  if (accepted.includes('bearer') && request.headers.authorization !== undefined) return true;
  if (accepted.includes('x-api-key') && request.headers['x-api-key'] !== undefined) return true;
  if (accepted.includes('query')) {
    const value = (request.query as Record<string, unknown> | undefined)?.api_key;
    if (value !== undefined) return true;
  }
  return false;
}

/**
 * The challenge every 401 carries (RFC 9110 §11.6.1; issue 29): the API and the dashboard
 * routes take a Bearer key, which is what a client can send again.
 */
export const BEARER_CHALLENGE: Readonly<Record<string, string>> = { 'www-authenticate': 'Bearer' };

/** Methods that change state: with a session cookie they must carry the session's CSRF token. */
const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The header carrying the session's CSRF token. */
export const CSRF_HEADER = 'x-csrf-token';

/** The 403 `forbidden` of a session request without its CSRF token. */
export function csrfRefusal(): AppError {
  return new AppError('forbidden', 'Missing or wrong CSRF token: send the X-CSRF-Token header with the csrf_token given at sign-in.');
}

/** Whether the request's `X-CSRF-Token` equals `expected` (constant-time). */
export function csrfTokenMatches(request: FastifyRequest, expected: string): boolean {
  const sent = request.headers[CSRF_HEADER];
  const value = Array.isArray(sent) ? sent[0] : sent;
  if (typeof value !== 'string') return false;
  const a = Buffer.from(value, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A dashboard session as a second way in: the cookie's name and the session lookup. */
export interface SessionAuth {
  cookieName: string;
  find(sessionId: string): Promise<SessionRecord | null>;
}

export interface ApiKeyAuthOptions {
  accounts: AccountsRepository;
  usage: KeyUsageRecorder;
  accept: readonly KeyLocation[];
  /** Per-account requests-per-minute limit, counted on every authenticated request. */
  rateLimit?: { limiter: RateLimiter; perMinute: (principal: Principal) => number };
  /** When set, a request that sends no API key may sign in with the dashboard session cookie. */
  session?: SessionAuth;
}

/** The caller behind the request's session cookie, or an AppError to throw. */
async function sessionPrincipal(request: FastifyRequest, session: SessionAuth, cookie: string): Promise<Principal> {
  const found = await session.find(cookie);
  if (!found) throw new AppError('unauthorized', 'The dashboard session has ended (signed out or expired); sign in again.', undefined, BEARER_CHALLENGE);
  // The cookie goes along with any request the browser makes to this origin; only a page of
  // the dashboard itself knows the token, so a state change without it is refused.
  if (STATE_CHANGING.has(request.method) && !csrfTokenMatches(request, found.csrfToken)) {
    throw csrfRefusal();
  }
  return { keyId: null, accountId: found.accountId, email: found.email, plan: found.plan };
}

/**
 * An onRequest hook that authenticates every request of the routes it is added to, then
 * applies the account's per-minute rate limit. A request that sends no API key may instead
 * carry the dashboard session cookie (`options.session`); then every POST, PUT, PATCH or
 * DELETE must carry `X-CSRF-Token` equal to the session's token, else 403 `forbidden`. An
 * API key, when sent, always wins over a cookie. It runs before the body is read, so an
 * unauthenticated or rate-limited caller cannot make the server parse a large body. Every
 * request's key is looked up in the database (lookups of one turn share a query): a revoked
 * key stops working at once on every node. Every
 * answer carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`; a refusal
 * is 429 `rate_limited` with `Retry-After`.
 */
export function apiKeyAuth(options: ApiKeyAuthOptions): onRequestAsyncHookHandler {
  return async (request, reply) => {
    const cookie = options.session && !sendsApiKey(request, options.accept) ? readCookie(request.headers.cookie, options.session.cookieName) : undefined;
    let principal: Principal;
    if (options.session && cookie) {
      principal = await sessionPrincipal(request, options.session, cookie);
    } else {
      const found = extractApiKey(request, options.accept);
      if ('problem' in found) throw new AppError('unauthorized', found.problem, undefined, BEARER_CHALLENGE);
      const byKey = await options.accounts.findPrincipal(found.key);
      if (!byKey) throw new AppError('unauthorized', 'The API key is not valid or has been revoked.', undefined, { 'www-authenticate': 'Bearer error="invalid_token"' });
      principal = byKey;
    }
    request.principal = principal;
    // Per-key request counts: a session has no key, so its requests count for the account only.
    if (principal.keyId) options.usage.record(principal.keyId);
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
