import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { D, useRig, type RigHandle } from '@mailconv/test-rig';
import { SmtpAvailability } from './smtp/availability.js';
import { createEngine, type Engine } from './engine.js';
import { REASONS, type Reason } from './types.js';

/**
 * Every reason code of the closed list, produced end to end by the real engine (DNS check,
 * SMTP prober, pipeline, verdict) against the loopback rig.
 */
describe('engine against the rig: every reason code', () => {
  let rig: RigHandle;
  let engine: Engine;
  before(async () => {
    rig = await useRig();
    engine = createEngine({
      dns: { servers: [rig.dnsServer], timeoutMs: 1500, tries: 1 },
      smtp: {
        helo: 'probe.mailconv.test',
        from: 'probe@mailconv.test',
        port: rig.smtpPort,
        allowPrivate: true,
        restrictTo: ['127.0.0.0/8'],
        connectTimeoutMs: 3000,
        commandTimeoutMs: 1500,
        overallTimeoutMs: 10_000,
      },
    });
  });
  after(async () => rig.release());

  /** An engine whose self-check found SMTP unavailable (issue 23). */
  function unavailableEngine(): Engine {
    const availability = new SmtpAvailability();
    availability.set(false, 'no egress reaches port 25');
    return createEngine({ dns: { servers: [rig.dnsServer], timeoutMs: 1500, tries: 1 }, availability, smtp: { helo: 'probe.mailconv.test', from: 'probe@mailconv.test', port: rig.smtpPort, allowPrivate: true, restrictTo: ['127.0.0.0/8'] } });
  }

  test('SMTP unavailable (issue 23): answered at once, not after the tarpit time-out, with smtp and catch_all null', async () => {
    const started = Date.now();
    const r = await unavailableEngine().verifier.verify(`alice@${D.slow}`, { smtp: true, catchAll: true });
    const ms = Date.now() - started;
    assert.equal(r.reason, 'smtp_unavailable');
    assert.equal(r.checks.smtp, null);
    assert.equal(r.checks.catch_all, null);
    assert.equal(r.checks.dns, true, 'DNS still ran');
    assert.ok(ms < 500, `took ${ms} ms`);
  });

  const CASES: Array<{ email: string; smtp: boolean; status: string; reason: Reason | null; unavailable?: true }> = [
    { email: `alice@${D.valid}`, smtp: true, status: 'valid', reason: null },
    { email: `a..b@${D.valid}`, smtp: true, status: 'invalid', reason: 'invalid_syntax' },
    { email: `x@${D.nxdomain}`, smtp: true, status: 'invalid', reason: 'domain_not_found' },
    { email: `x@${D.nullMx}`, smtp: true, status: 'invalid', reason: 'domain_no_mx' },
    { email: `nobody@${D.valid}`, smtp: true, status: 'invalid', reason: 'user_unknown' },
    { email: `disabled@${D.valid}`, smtp: true, status: 'invalid', reason: 'mailbox_disabled' },
    // A disposable domain the rig's resolver refuses to answer for: still risky/disposable.
    { email: 'x@mailinator.com', smtp: false, status: 'risky', reason: 'disposable' },
    { email: `full@${D.valid}`, smtp: true, status: 'risky', reason: 'mailbox_full' },
    { email: `anyone@${D.catchAll}`, smtp: true, status: 'risky', reason: 'catch_all' },
    { email: `info@${D.aOnly}`, smtp: false, status: 'risky', reason: 'role_based' },
    { email: `alice@${D.greylist}`, smtp: true, status: 'unknown', reason: 'greylisted' },
    // Issue 49: the busy peer's 421 4.7.0 "Too many connections … try again later" is a rate limit.
    { email: `alice@${D.busy}`, smtp: true, status: 'unknown', reason: 'smtp_rate_limited' },
    { email: `alice@${D.blocked}`, smtp: true, status: 'unknown', reason: 'smtp_blocked' },
    { email: `alice@${D.slow}`, smtp: true, status: 'unknown', reason: 'smtp_timeout' },
    { email: `alice@${D.deadMx}`, smtp: true, status: 'unknown', reason: 'smtp_unreachable' },
    { email: `alice@${D.servfail}`, smtp: true, status: 'unknown', reason: 'dns_error' },
    { email: `alice@${D.yahoo}`, smtp: true, status: 'unknown', reason: 'unverifiable' },
    // Issue 23: the self-check found no egress reaching port 25 (an engine told so below).
    { email: `alice@${D.slow}`, smtp: true, status: 'unknown', reason: 'smtp_unavailable', unavailable: true },
  ];

  test('a cached domain is answered without a DNS round trip, with the same verdict', async () => {
    const first = await engine.verifier.verify(`bob@${D.aOnly}`);
    assert.ok(engine.resolver.peekMail(D.aOnly), 'the answer is cached');
    const again = await engine.verifier.verify(`carol@${D.aOnly}`);
    assert.deepEqual({ ...again, email: '', normalized: '' }, { ...first, email: '', normalized: '' });
  });

  test('the cases cover the whole closed list', () => {
    assert.deepEqual(new Set(CASES.map((c) => c.reason).filter(Boolean)), new Set(REASONS));
  });

  for (const c of CASES) {
    test(`${c.email}${c.smtp ? ' (SMTP)' : ''} → ${c.status}/${c.reason ?? 'null'}`, async () => {
      const r = await (c.unavailable ? unavailableEngine() : engine).verifier.verify(c.email, { smtp: c.smtp, catchAll: c.smtp });
      assert.equal(r.status, c.status);
      assert.equal(r.reason, c.reason);
      assert.equal(r.is_valid, c.status === 'valid');
      assert.equal(r.email, c.email);
    });
  }
});
