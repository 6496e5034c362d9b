import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeOutcome, encodeOutcome, outcomeKey, reusableOutcome, smtpRulesVersion, SMTP_RULES_VERSION } from './outcome-cache.js';
import { PROVIDER_RULES } from './provider-rules.js';

// Issue 23: the SMTP outcome cache (decision 28).
test('only outcomes about the mailbox are reusable', () => {
  for (const kind of ['accepted', 'rejected', 'full', 'disabled'] as const) assert.equal(reusableOutcome({ kind, catchAll: null }), true, kind);
  for (const kind of ['greylisted', 'blocked', 'timeout', 'unreachable', 'unknown'] as const) assert.equal(reusableOutcome({ kind, catchAll: null }), false, kind);
});

test('stored without the reply text, read back marked cached; foreign or damaged values are misses', () => {
  const text = encodeOutcome({ kind: 'rejected', catchAll: false, code: 550, enhanced: '5.1.1', text: '<alice@example.test>: Recipient address rejected', host: 'mx.example.test' });
  assert.doesNotMatch(text, /alice|Recipient/);
  assert.deepEqual(decodeOutcome(text), { kind: 'rejected', catchAll: false, code: 550, enhanced: '5.1.1', host: 'mx.example.test', cached: true });
  for (const bad of ['', 'null', '{"kind":"greylisted","catchAll":null}', '{"kind":"accepted","catchAll":"yes"}', '{"kind":1}', '[]']) assert.equal(decodeOutcome(bad), null, bad);
});

test('keys differ by scope, address, catch-all choice and rules version, and hold no address', () => {
  const base = outcomeKey('acct_1', 'alice@example.test', true);
  assert.doesNotMatch(base, /alice|example/);
  assert.notEqual(outcomeKey('acct_2', 'alice@example.test', true), base);
  assert.notEqual(outcomeKey('acct_1', 'Alice@example.test', true), base, 'local parts are case-sensitive (RFC 5321)');
  assert.notEqual(outcomeKey('acct_1', 'alice@example.test', false), base);
  assert.notEqual(outcomeKey('acct_1', 'alice@example.test', true, 'older-rules'), base);
  assert.equal(outcomeKey('acct_1', 'alice@example.test', true, SMTP_RULES_VERSION), base);
});

test('a change of a provider rule changes the rules version (older outcomes are then ignored)', () => {
  assert.equal(smtpRulesVersion(), SMTP_RULES_VERSION);
  const changed = { ...PROVIDER_RULES, google: { catchAllProbe: 'skip' as const, acceptMeansUnknown: true, why: 'test' } };
  assert.notEqual(smtpRulesVersion(changed), SMTP_RULES_VERSION);
});
