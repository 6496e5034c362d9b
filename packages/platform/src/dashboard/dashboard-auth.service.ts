import type { AccountsRepository } from '../accounts/accounts.repository.js';
import { AppError } from '../errors/app-error.js';
import { BEARER_CHALLENGE } from '../http/auth.js';
import { decoyHash, hashPassword, passwordProblem, verifyPassword } from './passwords.js';
import type { DashboardSessionsRepository } from './sessions.repository.js';
import type { SignInThrottle } from './sign-in-throttle.js';

/** What the dashboard shows of the signed-in account. */
export interface SessionAccount {
  id: string;
  email: string;
  plan: string;
}

/** A session just started: the cookie value (never stored) and what the answer shows. */
export interface StartedSession {
  sessionId: string;
  account: SessionAccount;
  csrfToken: string;
}

/** The one answer for an unknown address and a wrong password, so neither can be told from the other. */
const WRONG_CREDENTIALS = 'Wrong e-mail address or password.';

/**
 * Dashboard sign-in, sign-up and sign-out over the accounts, sessions and the failed
 * sign-in throttle. Refusals are AppErrors of the closed list: 401 `unauthorized` (the same
 * message whether the address is unknown or the password wrong), 429 `rate_limited` with
 * `Retry-After` after 5 failures per address or per client address within 15 minutes;
 * open sign-up likewise after 10 sign-ups from one client address within 15 minutes.
 */
export class DashboardAuthService {
  constructor(
    private readonly deps: {
      accounts: AccountsRepository;
      sessions: DashboardSessionsRepository;
      throttle: SignInThrottle;
      /** Open sign-ups per client address (`signup:<address>`). */
      signUpThrottle: SignInThrottle;
      clock: () => Date;
    },
  ) {}

  async signIn(input: { email: string; password: string; ip: string }): Promise<StartedSession> {
    const email = input.email.trim().toLowerCase();
    const subjects = [`email:${email}`, `ip:${input.ip}`];
    const decision = await this.deps.throttle.check(subjects, this.deps.clock());
    if (!decision.allowed) {
      throw new AppError('rate_limited', `Too many failed sign-ins; retry in ${decision.retryAfterSeconds} s.`, undefined, { 'retry-after': String(decision.retryAfterSeconds) });
    }
    const found = await this.deps.accounts.findCredentials(email);
    // An unknown address (or an account without a password) costs one scrypt too.
    const ok = await verifyPassword(input.password, found?.passwordHash ?? (await decoyHash()));
    if (!found || !found.passwordHash || !ok) {
      await this.deps.throttle.fail(subjects, this.deps.clock());
      throw new AppError('unauthorized', WRONG_CREDENTIALS, undefined, BEARER_CHALLENGE);
    }
    await this.deps.throttle.clear(subjects[0]!);
    return this.start(found.account);
  }

  /** Open sign-up: an account on `plan` with this password, signed in at once. 409 `conflict` when the address is taken. */
  async signUp(input: { email: string; password: string; plan: string; ip: string }): Promise<StartedSession> {
    const problem = passwordProblem(input.password);
    if (problem) throw new AppError('invalid_request', problem, { field: 'password' });
    const subject = [`signup:${input.ip}`];
    const decision = await this.deps.signUpThrottle.check(subject, this.deps.clock());
    if (!decision.allowed) {
      throw new AppError('rate_limited', `Too many sign-ups from this address; retry in ${decision.retryAfterSeconds} s.`, undefined, { 'retry-after': String(decision.retryAfterSeconds) });
    }
    // Counted before the hash, taken or not: each attempt costs a scrypt.
    await this.deps.signUpThrottle.fail(subject, this.deps.clock());
    const created = await this.deps.accounts.createAccountWithPassword({ email: input.email, plan: input.plan, passwordHash: await hashPassword(input.password) }, this.deps.clock());
    if (!created.ok) throw new AppError('conflict', 'An account with this e-mail address exists already; sign in instead.');
    return this.start(created.account);
  }

  /** The session behind a cookie value, or null when it has ended. */
  async current(sessionId: string): Promise<{ account: SessionAccount; csrfToken: string } | null> {
    const s = await this.deps.sessions.find(sessionId, this.deps.clock());
    return s ? { account: { id: s.accountId, email: s.email, plan: s.plan }, csrfToken: s.csrfToken } : null;
  }

  /** Ends a session; nothing happens for an unknown one. */
  async signOut(sessionId: string): Promise<void> {
    await this.deps.sessions.delete(sessionId);
  }

  /** Sets an account's password (admin CLI): refused when too short or too long. Signs out its sessions. */
  async setPassword(accountId: string, password: string): Promise<boolean> {
    const problem = passwordProblem(password);
    if (problem) throw new AppError('invalid_request', problem, { field: 'password' });
    return this.deps.accounts.setPasswordHash(accountId, await hashPassword(password), this.deps.clock());
  }

  private async start(account: { id: string; email: string; plan: string }): Promise<StartedSession> {
    const now = this.deps.clock();
    // Sessions nobody signs out of are removed here rather than by a timer: a sign-in is rare
    // next to other requests, and each one keeps the table to the sessions still alive.
    await this.deps.sessions.purgeExpired(now);
    const session = await this.deps.sessions.create(account.id, now);
    return { sessionId: session.sessionId, account: { id: account.id, email: account.email, plan: account.plan }, csrfToken: session.csrfToken };
  }
}
