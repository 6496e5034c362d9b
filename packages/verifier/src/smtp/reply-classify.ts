import { rateLimitRow } from './rate-limit-replies.js';
import type { SmtpReply, SmtpStatus } from './types.js';

// Text patterns, used only when the codes do not decide. Lower-case input.
const BLOCK_TEXT =
  /spamhaus|spamcop|barracudacentral|abusix|sorbs|dnsbl|\brbl\b|block ?list|black ?list|blocked|banned|reputation|listed (?:at|on|in|by)|\bsbrs\b|refused by proofpoint|access denied|relay(?:ing)? (?:access )?denied|not permitted to relay|reverse (?:dns|hostname)|ptr record/;
const FULL_TEXT = /mailbox (?:is )?full|over ?quota|quota exceeded|exceeded (?:the )?storage|insufficient (?:system )?storage|out of storage|mailbox size limit|too many messages/;
const DISABLED_TEXT = /disabled|deactivated|inactive|suspended|discontinued|no longer (?:active|in use)|account (?:has been )?closed/;
const USER_TEXT =
  /user unknown|unknown user|no such (?:user|mailbox|recipient|address)|does ?n[o']t exist|not exist|recipient not found|mailbox not found|mailbox unavailable|invalid (?:recipient|mailbox|address)|unrouteable|recipient (?:address )?rejected|address rejected|not a valid mailbox|no mailbox|utilisateur inconnu|unbekannt/;

/** Parses the reply lines of one reply (`250-…`, `250 …`) into code, enhanced code and text. */
export function parseReply(lines: readonly string[]): SmtpReply {
  const last = lines[lines.length - 1] ?? '';
  const code = Number(last.slice(0, 3));
  let enhanced: string | null = null;
  const texts = lines.map((line) => {
    let t = line.slice(4);
    const m = /^([245])\.(\d{1,3})\.(\d{1,3})(?:\s+|$)/.exec(t);
    if (m) {
      enhanced ??= `${m[1]}.${m[2]}.${m[3]}`;
      t = t.slice(m[0].length);
    }
    return t;
  });
  return { code: Number.isFinite(code) ? code : 0, enhanced, text: texts.join('\n') };
}

/**
 * Status of a RCPT reply: by basic and enhanced status code first (RFC 5321, RFC 3463),
 * by wording second, because wording differs from server to server and language to
 * language while codes mostly do not.
 */
export function classifyRcptReply(reply: SmtpReply): SmtpStatus {
  const { code } = reply;
  if (code >= 200 && code < 300) return 'accepted';
  const text = reply.text.toLowerCase();
  if (isRateLimited(reply, text)) return 'rate_limited';
  if (code === 421) return 'blocked';
  if (reply.enhanced) {
    const [cls, subject, detail] = reply.enhanced.split('.');
    if (cls === '5' && subject === '1') return 'user_unknown';
    if (subject === '2' && detail === '2') return 'mailbox_full';
    if (cls === '5' && subject === '2' && detail === '1') return 'disabled';
    // Microsoft 365 directory-based edge blocking answers unknown recipients 550 5.4.1
    // "Recipient address rejected: Access denied".
    if (cls === '5' && subject === '4' && detail === '1' && /recipient address rejected/.test(text)) return 'user_unknown';
    if (cls === '4' && subject === '7') return BLOCK_TEXT.test(text) ? 'blocked' : 'greylisted';
    if (cls === '5' && subject === '7') return USER_TEXT.test(text) && !BLOCK_TEXT.test(text) ? 'user_unknown' : 'blocked';
    // 4.5.3 too many recipients, 4.4.4 "recipients belong to multiple regions": the
    // question was asked in a way this server does not answer, nothing about the mailbox.
    if (reply.enhanced === '4.5.3' || reply.enhanced === '4.4.4') return 'unknown';
  }
  if (BLOCK_TEXT.test(text)) return 'blocked';
  if (FULL_TEXT.test(text) || code === 552) return 'mailbox_full';
  if (DISABLED_TEXT.test(text)) return 'disabled';
  if (code === 550 || code === 551 || code === 553) return 'user_unknown';
  if (code === 554) return USER_TEXT.test(text) ? 'user_unknown' : 'blocked';
  if (code === 450 || code === 451) return 'greylisted';
  if (code >= 500 && USER_TEXT.test(text)) return 'user_unknown';
  if (code >= 400 && code < 500 && code !== 452) return 'greylisted';
  return 'unknown';
}

/**
 * A rate limit (issue 49, `rate-limit-replies.ts`): a row with an enhanced code decides
 * (Microsoft's 4.7.650 names "IP reputation" and is still a rate limit); a row by wording
 * or by the 421 alone yields to block-list wording.
 */
function isRateLimited(reply: SmtpReply, text: string): boolean {
  const row = rateLimitRow(reply);
  return !!row && (row.enhanced !== undefined || !BLOCK_TEXT.test(text));
}

/** True when a reply to the catch-all probe says "ask me differently" (recipient limits). */
export function isRecipientLimit(reply: SmtpReply): boolean {
  return reply.enhanced === '4.5.3' || reply.enhanced === '4.4.4' || (reply.code === 452 && !FULL_TEXT.test(reply.text.toLowerCase()));
}

/** Status of a refused greeting, EHLO or MAIL FROM: the prober, not the mailbox, was refused. */
export function classifySessionReply(reply: SmtpReply): SmtpStatus {
  const text = reply.text.toLowerCase();
  if (isRateLimited(reply, text)) return 'rate_limited';
  if (reply.code === 421 || reply.code >= 500) return 'blocked';
  if (BLOCK_TEXT.test(text)) return 'blocked';
  return 'greylisted';
}
