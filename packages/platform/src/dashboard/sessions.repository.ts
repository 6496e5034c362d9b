import { createHash, randomBytes } from 'node:crypto';
import type { CoreTables } from '../db/core-schema.js';
import type { Database } from '../db/database.js';

/** Session lifetimes: idle (since the last request) and absolute (since sign-in). */
export const SESSION_IDLE_MS = 12 * 3_600_000;
export const SESSION_ABSOLUTE_MS = 7 * 86_400_000;
/** `last_seen_at` is written at most this often per session: one write a minute, not one per request. */
const TOUCH_EVERY_MS = 60_000;

/** The SHA-256 of a session id (hex): all the table keeps of it. */
export function hashSessionId(id: string): string {
  return createHash('sha256').update(id, 'utf8').digest('hex');
}

/** 32 random bytes, base64url (43 characters). */
export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

/** A live session and the account it signs in. */
export interface SessionRecord {
  accountId: string;
  email: string;
  plan: string;
  csrfToken: string;
  expiresAt: string;
}

/**
 * Dashboard sessions, server-side. The cookie carries a random 32-byte id; the table holds
 * only its SHA-256, the account, the CSRF token and the times. A session is live while
 * `now < expires_at` (absolute limit) and `now < last_seen_at + idle limit`; the account's
 * deletion removes its sessions (foreign key, cascade).
 */
export class DashboardSessionsRepository {
  constructor(
    private readonly database: Database<CoreTables>,
    private readonly limits: { idleMs: number; absoluteMs: number } = { idleMs: SESSION_IDLE_MS, absoluteMs: SESSION_ABSOLUTE_MS },
  ) {}

  /** Starts a session; the returned `sessionId` goes into the cookie and is never stored. */
  async create(accountId: string, now: Date): Promise<{ sessionId: string; csrfToken: string; expiresAt: string }> {
    const sessionId = randomToken();
    const csrfToken = randomToken();
    const expiresAt = new Date(now.getTime() + this.limits.absoluteMs).toISOString();
    await this.database.db
      .insertInto('dashboard_sessions')
      .values({ id_hash: hashSessionId(sessionId), account_id: accountId, csrf_token: csrfToken, created_at: now.toISOString(), expires_at: expiresAt, last_seen_at: now.toISOString() })
      .execute();
    return { sessionId, csrfToken, expiresAt };
  }

  /** The live session with this id (and marks it seen), or null: unknown, signed out, idle too long or too old. */
  async find(sessionId: string, now: Date): Promise<SessionRecord | null> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(sessionId)) return null;
    const idHash = hashSessionId(sessionId);
    const row = await this.database.db
      .selectFrom('dashboard_sessions')
      .innerJoin('accounts', 'accounts.id', 'dashboard_sessions.account_id')
      .select(['accounts.id as accountId', 'accounts.email as email', 'accounts.plan as plan', 'dashboard_sessions.csrf_token as csrfToken', 'dashboard_sessions.expires_at as expiresAt', 'dashboard_sessions.last_seen_at as lastSeenAt'])
      .where('dashboard_sessions.id_hash', '=', idHash)
      .executeTakeFirst();
    if (!row) return null;
    const t = now.getTime();
    if (t >= Date.parse(row.expiresAt) || t >= Date.parse(row.lastSeenAt) + this.limits.idleMs) {
      await this.database.db.deleteFrom('dashboard_sessions').where('id_hash', '=', idHash).execute();
      return null;
    }
    if (t - Date.parse(row.lastSeenAt) >= TOUCH_EVERY_MS) {
      await this.database.db.updateTable('dashboard_sessions').set({ last_seen_at: now.toISOString() }).where('id_hash', '=', idHash).execute();
    }
    const { lastSeenAt: _seen, ...session } = row;
    return session;
  }

  /** Ends a session (sign-out); false when there was none. */
  async delete(sessionId: string): Promise<boolean> {
    const res = await this.database.db.deleteFrom('dashboard_sessions').where('id_hash', '=', hashSessionId(sessionId)).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  /** Removes sessions past either limit; returns how many. */
  async purgeExpired(now: Date): Promise<number> {
    const res = await this.database.db
      .deleteFrom('dashboard_sessions')
      .where((eb) => eb.or([eb('expires_at', '<=', now.toISOString()), eb('last_seen_at', '<=', new Date(now.getTime() - this.limits.idleMs).toISOString())]))
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
