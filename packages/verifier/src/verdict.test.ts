import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { firstReason, gradeOf, mxSummary, verdict, VERDICT_TABLE, type Verdict, type VerdictInput } from './verdict.js';
import { REASONS, type DnsOutcome, type SmtpOutcome } from './types.js';

const host = (i: number): { exchange: string; priority: number } => ({ exchange: `mx${i}.example.net`, priority: i * 10 });
const mx = (n: number, providers: string[] = []): DnsOutcome => ({ kind: 'mx', hosts: Array.from({ length: n }, (_, i) => host(i)), providers });
const implicit: DnsOutcome = { kind: 'implicit', hosts: [{ exchange: 'example.com', priority: 0 }], providers: [] };
const dnsOf = (kind: DnsOutcome['kind']): DnsOutcome => ({ kind, hosts: [], providers: [] });
const smtpOf = (kind: SmtpOutcome['kind'], catchAll: boolean | null = false): SmtpOutcome => ({ kind, catchAll });
const clean = { disposable: false, roleBased: false, freeProvider: false };
const base: VerdictInput = { syntax: { ok: true, ipLiteral: false }, dns: mx(2), lists: clean, smtp: null, suggestion: false };
const input = (over: Partial<VerdictInput>): VerdictInput => ({ ...base, ...over });

interface Row {
  row: string;
  input: VerdictInput;
  expect: Partial<Verdict>;
}

// One row per line of the README table "Verdict".
const ROWS: Row[] = [
  { row: 'bad syntax → invalid/invalid_syntax', input: input({ syntax: { ok: false, ipLiteral: false }, dns: null }), expect: { status: 'invalid', reason: 'invalid_syntax', score: 0, grade: 'F', confidence: 100, dns: false, smtp: null, catch_all: null } },
  { row: 'NXDOMAIN → invalid/domain_not_found', input: input({ dns: dnsOf('nxdomain') }), expect: { status: 'invalid', reason: 'domain_not_found', score: 0, grade: 'F', confidence: 99, dns: false } },
  { row: 'null MX → invalid/domain_no_mx', input: input({ dns: dnsOf('null_mx') }), expect: { status: 'invalid', reason: 'domain_no_mx', score: 2, grade: 'F', confidence: 97, dns: false } },
  { row: 'no MX and no address record → invalid/domain_no_mx', input: input({ dns: dnsOf('no_mail') }), expect: { status: 'invalid', reason: 'domain_no_mx', score: 2, confidence: 97 } },
  { row: 'RCPT rejected (5.1.1) → invalid/user_unknown', input: input({ smtp: smtpOf('rejected') }), expect: { status: 'invalid', reason: 'user_unknown', score: 5, confidence: 95, smtp: false, catch_all: false } },
  { row: 'mailbox disabled (5.2.1) → invalid/mailbox_disabled', input: input({ smtp: smtpOf('disabled') }), expect: { status: 'invalid', reason: 'mailbox_disabled', score: 5, confidence: 90, smtp: false } },
  { row: 'disposable domain → risky/disposable', input: input({ lists: { ...clean, disposable: true } }), expect: { status: 'risky', reason: 'disposable', score: 20, grade: 'F', confidence: 95, is_valid: false } },
  { row: 'disposable domain whose probe timed out → still risky/disposable', input: input({ lists: { ...clean, disposable: true }, smtp: smtpOf('timeout', null) }), expect: { status: 'risky', reason: 'disposable' } },
  { row: 'mailbox full (552/5.2.2) → risky/mailbox_full', input: input({ smtp: smtpOf('full') }), expect: { status: 'risky', reason: 'mailbox_full', score: 40, confidence: 85, smtp: true } },
  { row: 'accepted at a catch-all domain → risky/catch_all', input: input({ smtp: smtpOf('accepted', true) }), expect: { status: 'risky', reason: 'catch_all', score: 60, grade: 'D', confidence: 80, smtp: true, catch_all: true } },
  { row: 'role account → risky/role_based', input: input({ lists: { ...clean, roleBased: true } }), expect: { status: 'risky', reason: 'role_based', score: 70, grade: 'C', confidence: 85 } },
  { row: 'greylisted (450/4.7.x) → unknown/greylisted', input: input({ smtp: smtpOf('greylisted', null) }), expect: { status: 'unknown', reason: 'greylisted', score: 50, confidence: 40, smtp: null, catch_all: null } },
  { row: 'rate limited (4.7.28, 4.7.650, 421; issue 49) → unknown/smtp_rate_limited', input: input({ smtp: smtpOf('rate_limited', null) }), expect: { status: 'unknown', reason: 'smtp_rate_limited', score: 50, confidence: 35, smtp: null, catch_all: null } },
  { row: 'our client blocked (block list) → unknown/smtp_blocked', input: input({ smtp: smtpOf('blocked', null) }), expect: { status: 'unknown', reason: 'smtp_blocked', score: 50, confidence: 30, smtp: null } },
  { row: 'SMTP time-out → unknown/smtp_timeout', input: input({ smtp: smtpOf('timeout', null) }), expect: { status: 'unknown', reason: 'smtp_timeout', score: 45, confidence: 30 } },
  { row: 'no MX host reachable → unknown/smtp_unreachable', input: input({ smtp: smtpOf('unreachable', null) }), expect: { status: 'unknown', reason: 'smtp_unreachable', score: 40, confidence: 30 } },
  { row: 'SMTP probing unavailable (issue 23) → unknown/smtp_unavailable, smtp and catch_all null', input: input({ smtp: smtpOf('unavailable', null) }), expect: { status: 'unknown', reason: 'smtp_unavailable', score: 50, confidence: 30, smtp: null, catch_all: null } },
  { row: 'role (risky) beats SMTP unavailable', input: input({ lists: { ...clean, roleBased: true }, smtp: smtpOf('unavailable', null) }), expect: { status: 'risky', reason: 'role_based' } },
  { row: 'DNS time-out or SERVFAIL → unknown/dns_error', input: input({ dns: dnsOf('error') }), expect: { status: 'unknown', reason: 'dns_error', score: 40, confidence: 30, dns: false, is_valid: false } },
  { row: 'IP-literal domain → unknown/unverifiable', input: input({ syntax: { ok: true, ipLiteral: true }, dns: null }), expect: { status: 'unknown', reason: 'unverifiable', score: 50, confidence: 20 } },
  { row: 'provider answers anything at RCPT → unknown/unverifiable', input: input({ smtp: smtpOf('unknown', null) }), expect: { status: 'unknown', reason: 'unverifiable', smtp: null } },
  { row: 'SMTP accepted, not catch-all → valid', input: input({ smtp: smtpOf('accepted', false) }), expect: { status: 'valid', reason: null, is_valid: true, score: 97, grade: 'A', confidence: 95, smtp: true, catch_all: false } },
  { row: 'SMTP accepted, catch-all not probed → valid', input: input({ smtp: smtpOf('accepted', null) }), expect: { status: 'valid', reason: null, score: 97, catch_all: null } },
  { row: 'no probe, MX records → valid with lower confidence, smtp and catch_all null', input: base, expect: { status: 'valid', reason: null, is_valid: true, score: 85, grade: 'B', confidence: 70, dns: true, smtp: null, catch_all: null } },
  { row: 'no probe, implicit MX → valid, lower still', input: input({ dns: implicit }), expect: { status: 'valid', score: 75, grade: 'C', confidence: 60, dns: true } },
  { row: 'valid but the domain looks like a typo → score and confidence lowered', input: input({ suggestion: true }), expect: { status: 'valid', score: 70, grade: 'C', confidence: 50 } },
  { row: 'free provider alone changes nothing', input: input({ lists: { ...clean, freeProvider: true } }), expect: { status: 'valid', reason: null, score: 85 } },
  // Precedence (decision 9): invalid > risky > unknown, and the reason order within each.
  { row: 'user unknown beats disposable', input: input({ lists: { ...clean, disposable: true }, smtp: smtpOf('rejected') }), expect: { status: 'invalid', reason: 'user_unknown' } },
  { row: 'disposable beats catch-all and role', input: input({ lists: { ...clean, disposable: true, roleBased: true }, smtp: smtpOf('accepted', true) }), expect: { status: 'risky', reason: 'disposable' } },
  { row: 'mailbox full beats catch-all and role', input: input({ lists: { ...clean, roleBased: true }, smtp: smtpOf('full', true) }), expect: { reason: 'mailbox_full' } },
  { row: 'catch-all beats role', input: input({ lists: { ...clean, roleBased: true }, smtp: smtpOf('accepted', true) }), expect: { reason: 'catch_all' } },
  { row: 'role (risky) beats greylisting (unknown)', input: input({ lists: { ...clean, roleBased: true }, smtp: smtpOf('greylisted', null) }), expect: { status: 'risky', reason: 'role_based' } },
  { row: 'suggestion penalty applies to valid verdicts only', input: input({ suggestion: true, lists: { ...clean, disposable: true } }), expect: { reason: 'disposable', score: 20, confidence: 95 } },
];

for (const { row, input: i, expect } of ROWS) {
  test(`verdict row: ${row}`, () => {
    const v = verdict(i);
    for (const [key, value] of Object.entries(expect)) assert.deepEqual(v[key as keyof Verdict], value, key);
    assert.equal(v.is_valid, v.status === 'valid');
    assert.equal(v.grade, gradeOf(v.score));
  });
}

test('every reason of the closed list is reachable and has a table row', () => {
  const seen = new Set(ROWS.map((r) => firstReason(r.input)));
  for (const reason of REASONS) {
    assert.ok(seen.has(reason), `no row produces ${reason}`);
    assert.ok(reason in VERDICT_TABLE, reason);
  }
});

test('decision 10: grade boundaries', () => {
  const cases: [number, string][] = [[100, 'A'], [90, 'A'], [89, 'B'], [80, 'B'], [79, 'C'], [70, 'C'], [69, 'D'], [60, 'D'], [59, 'F'], [0, 'F']];
  for (const [score, grade] of cases) assert.equal(gradeOf(score), grade, String(score));
});

test('decision 11: mx.grade A/B/C/D/F', () => {
  assert.deepEqual(mxSummary(mx(5, ['google'])), { count: 5, providers: ['google'], grade: 'A' });
  assert.deepEqual(mxSummary(mx(2)), { count: 2, providers: [], grade: 'B' });
  assert.deepEqual(mxSummary(mx(1, ['google'])), { count: 1, providers: ['google'], grade: 'C' });
  assert.deepEqual(mxSummary(implicit), { count: 1, providers: [], grade: 'D' });
  assert.equal(mxSummary(dnsOf('null_mx')).grade, 'F');
  assert.equal(mxSummary(dnsOf('no_mail')).grade, 'F');
  assert.equal(mxSummary(dnsOf('nxdomain')).grade, 'F');
  assert.equal(mxSummary(null).grade, 'F');
});

test('the README verdict table says what VERDICT_TABLE does', () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const rows = new Map<string, { score: number; confidence: number }>();
  for (const line of readme.split('\n')) {
    const m = /^\| .+ \| (invalid|risky|unknown|valid) \| (`(\w+)`|null) \| (\d+) \| (\d+) \|$/.exec(line);
    if (m === null) continue;
    const reason = m[3] ?? `valid:${m[4]}`;
    rows.set(reason, { score: Number(m[4]), confidence: Number(m[5]) });
  }
  for (const reason of REASONS) assert.deepEqual(rows.get(reason), VERDICT_TABLE[reason], reason);
  for (const key of ['valid_smtp', 'valid_mx', 'valid_implicit_mx'] as const) {
    const { score, confidence } = VERDICT_TABLE[key];
    assert.deepEqual(rows.get(`valid:${score}`), { score, confidence }, key);
  }
});
