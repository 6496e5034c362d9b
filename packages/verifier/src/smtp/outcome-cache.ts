import { createHash } from 'node:crypto';
import type { SmtpKind, SmtpOutcome } from '../types.js';
import { PROVIDER_RULES, type ProviderRule } from './provider-rules.js';

/**
 * Where reused SMTP outcomes live (the service's database: shared by every process that
 * uses it). Values are opaque JSON text; keys are hashes, never addresses.
 */
export interface SmtpOutcomeStore {
  /** The value stored under `key` that has not expired at `now`, else null. */
  get(key: string, now: Date): Promise<string | null>;
  /** Stores `value` under `key` until `expiresAt` (may be written later, in a batch). */
  put(key: string, value: string, expiresAt: Date): void;
}

/** Settings of the engine's SMTP outcome cache (`EMAIL_SMTP_CACHE_TTL`). */
export interface SmtpCacheOptions {
  store: SmtpOutcomeStore;
  /** How long an outcome is reused; 0 turns the cache off. */
  ttlMs: number;
  /** The clock (tests move it); the system's when absent. */
  now?: () => Date;
  /** Told of each lookup: reused or not (metrics). */
  onLookup?: (hit: boolean) => void;
}

/**
 * Bump when the way replies become outcomes changes (`reply-classify.ts`, the session's
 * rules): every outcome stored under an older revision is then ignored and ages out.
 */
const CLASSIFY_REVISION = 1;

/**
 * The rules an outcome depends on, as one short hash: the classification revision and the
 * provider table (a provider row that starts treating acceptance as meaningless must not
 * be served an older "accepted"). The verdict is not part of it: it is computed afresh from
 * the stored outcome on every use, so a verdict rule change applies to cached outcomes at once.
 */
export function smtpRulesVersion(rules: Readonly<Record<string, ProviderRule>> = PROVIDER_RULES): string {
  return createHash('sha256').update(`${CLASSIFY_REVISION}\n${JSON.stringify(rules)}`).digest('hex').slice(0, 16);
}

/** {@link smtpRulesVersion} of the rules this build probes with. */
export const SMTP_RULES_VERSION = smtpRulesVersion();

/**
 * Outcomes that say something about the mailbox itself. Time-outs, refusals of our
 * connection, greylisting and "unknown" say something about this moment or this egress:
 * they are probed again next time.
 */
const REUSABLE: ReadonlySet<SmtpKind> = new Set<SmtpKind>(['accepted', 'rejected', 'full', 'disabled']);

/** Whether an outcome may be stored for reuse. */
export function reusableOutcome(outcome: SmtpOutcome): boolean {
  return REUSABLE.has(outcome.kind);
}

/**
 * The key of one address's outcome: per scope (an account: one account never learns what
 * another verified), per catch-all choice, per rules version; hashed so that the store
 * holds no address.
 */
export function outcomeKey(scope: string, address: string, catchAll: boolean, version = SMTP_RULES_VERSION): string {
  return createHash('sha256').update(`${version}\n${scope}\n${catchAll ? 1 : 0}\n${address}`).digest('base64url');
}

/**
 * What is stored: the outcome without the reply text (servers often echo the address in
 * it, and the verdict never reads it).
 */
export function encodeOutcome(outcome: SmtpOutcome): string {
  const { kind, catchAll, code, enhanced, host } = outcome;
  return JSON.stringify({ kind, catchAll, ...(code === undefined ? {} : { code }), ...(enhanced === undefined ? {} : { enhanced }), ...(host === undefined ? {} : { host }) });
}

/** A stored value back as an outcome marked `cached`, or null when it is not one (a foreign or damaged row). */
export function decodeOutcome(text: string): SmtpOutcome | null {
  try {
    const v = JSON.parse(text) as Partial<SmtpOutcome>;
    if (typeof v !== 'object' || v === null || typeof v.kind !== 'string' || !REUSABLE.has(v.kind as SmtpKind)) return null;
    if (v.catchAll !== null && typeof v.catchAll !== 'boolean') return null;
    const out: SmtpOutcome = { kind: v.kind as SmtpKind, catchAll: v.catchAll ?? null, cached: true };
    if (typeof v.code === 'number') out.code = v.code;
    if (typeof v.enhanced === 'string') out.enhanced = v.enhanced;
    if (typeof v.host === 'string') out.host = v.host;
    return out;
  } catch {
    return null;
  }
}
