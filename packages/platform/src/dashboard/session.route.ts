import { Type, type TSchema } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors/app-error.js';
import { csrfRefusal, csrfTokenMatches } from '../http/auth.js';
import { clearedCookie, readCookie, sessionCookie } from '../http/cookies.js';
import type { ServiceApp } from '../http/create-app.js';
import { Nullable, required, withHeaders } from '../http/schemas.js';
import type { DashboardAuthService, StartedSession } from './dashboard-auth.service.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from './passwords.js';

export interface DashboardSessionRoutesOptions {
  auth: DashboardAuthService;
  /** `ev_session`, `cv_session`: each service its own. */
  cookieName: string;
  /** Mark the cookie Secure even on plain-HTTP requests (a TLS proxy that does not say so). */
  secureCookie: boolean;
  /** Open sign-up: the plan new accounts get, or null when sign-up is off (403 `forbidden`). */
  signupPlan: string | null;
  /** The service's documented error responses for these statuses. */
  errors: (...statuses: number[]) => Record<number, TSchema>;
}

const Credentials = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 320, description: 'The account’s e-mail address (case does not matter).' }),
    password: Type.String({ minLength: 1, maxLength: PASSWORD_MAX_LENGTH }),
  },
  { additionalProperties: false },
);

const SessionBody = Type.Object({
  account: Type.Object({ id: Type.String({ description: '`acct_…`' }), email: Type.String(), plan: Type.String() }),
  csrf_token: Type.String({ description: 'Send it as `X-CSRF-Token` on every POST, PUT, PATCH and DELETE made with the session cookie.' }),
});

/**
 * `GET /api/dashboard/session`: the signed-in account, or nulls without a live session — not an
 * error, since asking is how every page load starts (a 401 there was logged as an error by
 * every browser console, issue 30).
 */
const SessionState = Type.Object({
  account: Nullable(Type.Object({ id: Type.String({ description: '`acct_…`' }), email: Type.String(), plan: Type.String() }, { description: 'Null without a live session (no cookie, or the session has ended).' })),
  csrf_token: Nullable(Type.String({ description: 'Send it as `X-CSRF-Token` on every POST, PUT, PATCH and DELETE made with the session cookie. Null without a live session.' })),
});

const SET_COOKIE = (name: string) => ({
  'Set-Cookie': Type.String({ description: `\`${name}=<session id>; HttpOnly; SameSite=Strict; Path=/\`, plus \`; Secure\` over HTTPS. The id is 32 random bytes, base64url; the server keeps only its SHA-256.` }),
});

const EXTENSION = 'Extension (dashboard): not part of the API contract; for the service’s own dashboard pages.';

/**
 * `POST|GET|DELETE /api/dashboard/session` and `POST /api/dashboard/signup`: sign-in with
 * e-mail and password into a server-side session held in an HttpOnly, SameSite=Strict
 * cookie. These routes take no API key. Registered outside the authenticated scope.
 */
export function registerDashboardSessionRoutes(app: ServiceApp, options: DashboardSessionRoutesOptions): void {
  const { auth, cookieName, errors } = options;
  const tags = ['dashboard'];
  const secure = (request: FastifyRequest) => options.secureCookie || request.protocol === 'https';
  const cookieOf = (request: FastifyRequest) => readCookie(request.headers.cookie, cookieName) || undefined;
  const answer = (request: FastifyRequest, reply: FastifyReply, started: StartedSession) => {
    reply.header('set-cookie', sessionCookie(cookieName, started.sessionId, secure(request)));
    return { account: started.account, csrf_token: started.csrfToken };
  };
  /** A sign-in replaces the session the browser already had (no session id survives a sign-in). */
  const endPrevious = async (request: FastifyRequest) => {
    const previous = cookieOf(request);
    if (previous) await auth.signOut(previous);
  };

  app.post(
    '/api/dashboard/session',
    {
      schema: {
        tags,
        summary: 'Sign in to the dashboard with e-mail and password',
        description: `${EXTENSION} Sets the \`${cookieName}\` session cookie (idle limit 12 h, absolute 7 days). A wrong password and an unknown address get the same 401. After 5 failed sign-ins for one address, or from one client address, within 15 minutes: 429 \`rate_limited\` with \`Retry-After\`.`,
        security: [],
        body: Credentials,
        response: { 200: withHeaders(SessionBody, required(SET_COOKIE(cookieName))), ...errors(400, 401, 413, 415, 429, 500) },
      },
    },
    async (request, reply) => {
      await endPrevious(request);
      return answer(request, reply, await auth.signIn({ email: request.body.email, password: request.body.password, ip: request.ip }));
    },
  );

  app.get(
    '/api/dashboard/session',
    {
      schema: {
        tags,
        summary: 'The signed-in account and the session’s CSRF token',
        description: `${EXTENSION} Reads the \`${cookieName}\` cookie. Without a live session (no cookie, or the session has ended) the answer is 200 \`{"account": null, "csrf_token": null}\`, not an error: asking whether one is signed in is how a page starts.`,
        security: [],
        response: { 200: SessionState, ...errors(500) },
      },
    },
    async (request) => {
      const id = cookieOf(request);
      const current = id ? await auth.current(id) : null;
      if (!current) return { account: null, csrf_token: null };
      return { account: current.account, csrf_token: current.csrfToken };
    },
  );

  app.delete(
    '/api/dashboard/session',
    {
      schema: {
        tags,
        summary: 'Sign out: end the session and clear the cookie',
        description: `${EXTENSION} With a live session, \`X-CSRF-Token\` is required (403 \`forbidden\` without it). Without a live session there is nothing to end: 204 all the same.`,
        security: [],
        response: { 204: withHeaders({ type: 'null', description: 'Signed out; no body.' }, required(SET_COOKIE(cookieName))), ...errors(403, 500) },
      },
    },
    async (request, reply) => {
      const id = cookieOf(request);
      const current = id ? await auth.current(id) : null;
      if (id && current) {
        if (!csrfTokenMatches(request, current.csrfToken)) throw csrfRefusal();
        await auth.signOut(id);
      }
      reply.header('set-cookie', clearedCookie(cookieName, secure(request)));
      return reply.code(204).send(undefined as never);
    },
  );

  app.post(
    '/api/dashboard/signup',
    {
      schema: {
        tags,
        summary: 'Open sign-up: create an account on the free plan and sign in',
        description: `${EXTENSION} Off unless the operator enables it (403 \`forbidden\` then). The password must be ${PASSWORD_MIN_LENGTH}–${PASSWORD_MAX_LENGTH} characters. The account starts with no API key: create one in the dashboard. 409 \`conflict\` when the address has an account. At most 10 sign-ups per client address within 15 minutes (429 \`rate_limited\` with \`Retry-After\`).`,
        security: [],
        body: Credentials,
        response: { 201: withHeaders(SessionBody, required(SET_COOKIE(cookieName))), ...errors(400, 403, 409, 413, 415, 429, 500) },
      },
    },
    async (request, reply) => {
      if (options.signupPlan === null) throw new AppError('forbidden', 'Open sign-up is off on this service; ask its operator for an account.');
      const { email, password } = request.body;
      if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email.trim())) throw new AppError('invalid_request', 'The e-mail address is not valid.', { field: 'email' });
      await endPrevious(request);
      const started = await auth.signUp({ email, password, plan: options.signupPlan, ip: request.ip });
      reply.code(201);
      return answer(request, reply, started);
    },
  );
}
