import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyRcptReply, classifySessionReply, isRecipientLimit, parseReply } from './reply-classify.js';
import type { SmtpStatus } from './types.js';

// Real reply lines as servers send them (field notes b.4, Postfix, Gmail, Microsoft 365).
const CASES: Array<[string, SmtpStatus]> = [
  ['250 2.1.5 Ok', 'accepted'],
  ['251 User not local; will forward', 'accepted'],
  ['550 5.1.1 <x@example.org>: Recipient address rejected: User unknown in virtual mailbox table', 'user_unknown'],
  ["550-5.1.1 The email account that you tried to reach does not exist.", 'user_unknown'],
  ['551 5.1.6 User not local; please try <x@elsewhere>', 'user_unknown'],
  ['553 5.1.3 Mailbox name not allowed', 'user_unknown'],
  ['550 No such user here', 'user_unknown'],
  ['550 5.4.1 Recipient address rejected: Access denied. AS(201806281)', 'user_unknown'],
  ['554 5.7.1 <x@example.org>: Recipient address rejected: user does not exist', 'user_unknown'],
  ['552 5.2.2 Mailbox full', 'mailbox_full'],
  ['452 4.2.2 The email account that you tried to reach is over quota', 'mailbox_full'],
  ['552 Requested mail action aborted: exceeded storage allocation', 'mailbox_full'],
  ['550 5.2.1 The email account that you tried to reach is disabled', 'disabled'],
  ['550 Mailbox is inactive', 'disabled'],
  ['450 4.7.1 Greylisted, please try again later', 'greylisted'],
  ['451 4.7.1 Please try again later', 'greylisted'],
  ['450 Mailbox busy', 'greylisted'],
  ['421 4.7.0 Too many connections', 'rate_limited'],
  ['554 5.7.1 Service unavailable; Client host [127.0.0.1] blocked using zen.spamhaus.org', 'blocked'],
  ['550 5.7.606 Access denied, banned sending IP [127.0.0.1]', 'blocked'],
  ['550 Your IP has a poor reputation', 'blocked'],
  ['450 4.7.25 Client host rejected: cannot find your reverse hostname', 'blocked'],
  ['554 5.7.1 <x@example.org>: Relay access denied', 'blocked'],
  ['452 4.5.3 Too many recipients', 'unknown'],
  ['451 4.4.4 Temporary server error. Recipients belong to multiple regions', 'unknown'],
  ['500 5.5.1 Command unrecognized', 'unknown'],
];

test('RCPT replies are classified by code and enhanced code first, wording second', () => {
  for (const [line, expected] of CASES) {
    const lines = line.includes('\n') ? line.split('\n') : [line];
    assert.equal(classifyRcptReply(parseReply(lines)), expected, line);
  }
});

// Issue 49: rate limits are `rate_limited` (slow down, come back), not `blocked`; one real
// example per row of RATE_LIMIT_REPLIES, and the replies that must stay what they were.
const RATE_CASES: Array<[string, SmtpStatus]> = [
  [
    '421-4.7.28 [127.0.0.1      15] Our system has detected an unusual rate of\n421-4.7.28 unsolicited mail originating from your IP address. To protect our\n421-4.7.28 users from spam, mail sent from your IP address has been temporarily\n421-4.7.28 rate limited. Please visit\n421 4.7.28  https://support.google.com/mail/answer/188131 for more information. d9443c01a7336-1234 - gsmtp',
    'rate_limited',
  ],
  ['450 4.7.28 Our system has detected an unusual rate of unsolicited mail originating from your IP address.', 'rate_limited'],
  ['421 4.7.0 Try again later, closing connection. (MAIL) d2e1a72fcca58-1234 - gsmtp', 'rate_limited'],
  ['451 4.7.500 Server busy. Please try again later from [127.0.0.1]. (S77719) [DM6NAM11FT012.eop-nam11.prod.protection.outlook.com]', 'rate_limited'],
  ['451 4.7.650 The mail server [127.0.0.1] has been temporarily rate limited due to IP reputation. For e-mail delivery information, see https://aka.ms/postmaster (S843)', 'rate_limited'],
  ['451 4.7.651 The mail server [127.0.0.1] has been temporarily rate limited due to IP reputation.', 'rate_limited'],
  ['421 4.7.0 [TSS04] Messages from 127.0.0.1 temporarily deferred due to unexpected volume or user complaints; see https://postmaster.yahooinc.com/error-codes', 'rate_limited'],
  ['450 4.2.0 Too many connections from your IP, slow down', 'rate_limited'],
  ['421 mx.example.org Service not available, closing transmission channel', 'rate_limited'],
  // Stay as they were: permanent block lists, greylisting, a server's own error limit.
  ['550 5.7.1 Service unavailable, Client host [127.0.0.1] blocked using Spamhaus. To request removal from this list see https://www.spamhaus.org/query/ip/127.0.0.1', 'blocked'],
  ['554 5.7.1 Service unavailable; Client host [127.0.0.1] blocked using zen.spamhaus.org', 'blocked'],
  ['421 4.7.1 Client host [127.0.0.1] blocked using zen.spamhaus.org', 'blocked'],
  ['450 4.2.0 <x@example.org>: Recipient address rejected: Greylisted, see https://postgrey.schweikert.ch/help/example.org.html', 'greylisted'],
  ['450 4.3.2 Service currently unavailable', 'greylisted'],
  ['452 4.5.3 Too many recipients', 'unknown'],
];

test('rate-limit replies are rate_limited, block lists stay blocked (issue 49)', () => {
  for (const [line, expected] of RATE_CASES) {
    const lines = line.split('\n');
    assert.equal(classifyRcptReply(parseReply(lines)), expected, line);
  }
  assert.equal(classifySessionReply(parseReply(['421 4.7.0 Too many connections from your host, try again later'])), 'rate_limited');
  assert.equal(classifySessionReply(parseReply(['421 4.7.0 mx.example.org Error: too many errors'])), 'blocked');
  assert.equal(classifySessionReply(parseReply(['554 5.7.1 Go away'])), 'blocked');
});

test('multi-line replies are joined and the enhanced code is taken off each line', () => {
  const r = parseReply(['550-5.1.1 The email account that you tried', '550-5.1.1 to reach does not exist. Please try', '550 5.1.1 double-checking.']);
  assert.deepEqual(r, { code: 550, enhanced: '5.1.1', text: 'The email account that you tried\nto reach does not exist. Please try\ndouble-checking.' });
  assert.deepEqual(parseReply(['250-mx.example.org', '250-PIPELINING', '250 STARTTLS']), { code: 250, enhanced: null, text: 'mx.example.org\nPIPELINING\nSTARTTLS' });
});

test('recipient limits and refusals of the prober itself are told apart from mailbox answers', () => {
  assert.equal(isRecipientLimit(parseReply(['452 4.5.3 Too many recipients'])), true);
  assert.equal(isRecipientLimit(parseReply(['451 4.4.4 Recipients belong to multiple regions'])), true);
  assert.equal(isRecipientLimit(parseReply(['452 4.2.2 Mailbox over quota'])), false);
  assert.equal(classifySessionReply(parseReply(['554 5.7.1 Go away'])), 'blocked');
  assert.equal(classifySessionReply(parseReply(['451 4.3.2 Try later'])), 'greylisted');
});
