import type { SmtpReply } from './types.js';

/**
 * One kind of "slow down and come back" reply (issue 49): a server limiting how fast our
 * address may ask, not refusing it. `enhanced` and `text` must both match when both are
 * given. Rows say which provider sends it; `reply-classify.test.ts` holds a real example
 * of each.
 */
export interface RateLimitReply {
  /** Who sends it, for whoever changes the row. */
  source: string;
  /** Basic reply code, when only that code carries this meaning. */
  code?: number;
  /** RFC 3463 enhanced code (exact). */
  enhanced?: string;
  /** Lower-case text pattern. */
  text?: RegExp;
}

/**
 * Rate-limit replies, as data beside the provider rules. Only transient (4xx) replies are
 * rate limits: a permanent 5.7.1 block-list refusal stays `blocked` and is never retried.
 */
export const RATE_LIMIT_REPLIES: readonly RateLimitReply[] = [
  { source: 'Gmail: "unusual rate of unsolicited mail … temporarily rate limited"', enhanced: '4.7.28' },
  { source: 'Gmail / iCloud / Zoho: 421 4.7.0 "try again later, closing connection"', enhanced: '4.7.0', text: /try again later|too many|rate|temporarily deferred/ },
  { source: 'Microsoft 365: "Server busy. Please try again later"', enhanced: '4.7.500' },
  { source: 'Microsoft 365 / Outlook.com: "temporarily rate limited due to IP reputation"', enhanced: '4.7.650' },
  { source: 'Microsoft 365 / Outlook.com: "temporarily rate limited due to IP reputation"', enhanced: '4.7.651' },
  { source: 'Yahoo / AOL: "[TSS04] … temporarily deferred due to unexpected volume"', text: /\[ts[s]?0\d\]|temporarily deferred/ },
  { source: 'any: rate or volume wording', text: /rate.?limit|unusual rate|sending rate|rate of (?:incoming|unsolicited)|unexpected volume|throttl|too many (?:connections|sessions|messages from)|server busy|slow down/ },
  // A 421 closes the session (a burst cut off): come back later. Block-list wording and a
  // server's error limit ("too many errors", our own rejections) are told apart before.
  { source: 'any: 421 closing the session', code: 421 },
];

/** Wording that a 4xx is about something else than our rate: greylisting, or a session cut for its errors. */
const NOT_A_RATE = /gr[ae]y.?list|too many (?:errors|invalid|bad|unknown)|error limit/;

/**
 * The row of {@link RATE_LIMIT_REPLIES} a 4xx `reply` matches (it asks us to slow down and
 * come back), or null. A row without an enhanced code yields to block-list wording (the caller's).
 */
export function rateLimitRow(reply: SmtpReply, rows: readonly RateLimitReply[] = RATE_LIMIT_REPLIES): RateLimitReply | null {
  if (reply.code < 400 || reply.code >= 500) return null;
  const text = reply.text.toLowerCase();
  if (NOT_A_RATE.test(text)) return null;
  return rows.find((row) => (row.code === undefined || row.code === reply.code) && (row.enhanced === undefined || row.enhanced === reply.enhanced) && (row.text === undefined || row.text.test(text))) ?? null;
}
