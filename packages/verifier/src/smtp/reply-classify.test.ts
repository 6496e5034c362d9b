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
  ['421 4.7.0 Too many connections', 'blocked'],
  ['554 5.7.1 Service unavailable; Client host [192.0.2.1] blocked using zen.spamhaus.org', 'blocked'],
  ['550 5.7.606 Access denied, banned sending IP [192.0.2.1]', 'blocked'],
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
