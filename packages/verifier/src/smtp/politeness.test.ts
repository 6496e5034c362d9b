import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { D, startCountingRelay, useRig, type CountingRelay, type RigHandle } from '@mailconv/test-rig';
import { DnsResolver } from '../dns/dns.check.js';
import { DEFAULT_LIMITS, PROVIDER_RULES, applyProviderLimits, type ProviderLimits } from './provider-rules.js';
import { SmtpProber, type SmtpProberOptions } from './smtp.check.js';

// Issue 23: provider politeness as data, seen from the server's side. Each case puts a
// counting relay in front of one rig peer (the prober's port is the relay's) and reads what
// the peer saw: connections at once, RCPTs per connection, the time between connections.
// Plaintext (no STARTTLS) so the relay can count the commands.
let rig: RigHandle;
let dns: DnsResolver;
before(async () => {
  rig = await useRig();
  dns = new DnsResolver({ servers: [rig.dnsServer], timeoutMs: 1000, tries: 2 });
});
after(async () => {
  await rig.release();
});

function prober(relay: CountingRelay, extra: Partial<SmtpProberOptions> = {}): SmtpProber {
  return new SmtpProber({
    helo: 'probe.rig.test',
    from: 'probe@rig.test',
    resolveAddresses: (h) => dns.lookupAddresses(h),
    port: relay.port,
    allowPrivate: true,
    restrictTo: ['127.0.0.0/8'],
    starttls: false,
    connectTimeoutMs: 5000,
    commandTimeoutMs: 5000,
    overallTimeoutMs: 20_000,
    sessionIdleMs: 50,
    ...extra,
  });
}

const gaps = (relay: CountingRelay) => relay.connections.slice(1).map((c, i) => c.openedAt - relay.connections[i]!.openedAt);

describe('provider politeness (issue 23), observed at the peer', { timeout: 60_000 }, () => {
  test('sessions at once per provider: three batches for a Microsoft 365 domain share its 2 sessions', async () => {
    const relay = await startCountingRelay(rig.hosts.secondRcpt452, rig.smtpPort);
    try {
      // Per MX address 4 would be allowed; the provider's limit (2) is what holds.
      const rules = applyProviderLimits(JSON.stringify({ microsoft365: { sessions: 2, sessionsPerHost: 4, recipientsPerSession: 2 } }), new Set(['microsoft365'])).rules;
      const p = prober(relay, { rules, catchAll: false });
      const route = await dns.lookupMail(D.m365);
      const batches = [0, 1, 2].map((b) => Array.from({ length: 8 }, (_, i) => (i % 2 ? `alice` : `nobody${b}x${i}`) + `@${D.m365}`));
      const outcomes = (await Promise.all(batches.map((emails) => p.probeMany(emails, route)))).flat();
      p.close();
      assert.deepEqual(new Set(outcomes.map((o) => o.status)), new Set(['accepted', 'user_unknown']));
      assert.equal(relay.peak, 2, `the peer saw ${relay.peak} sessions at once`);
      assert.ok(relay.connections.length >= 12, 'every session asked at most 2 recipients');
      assert.ok(relay.connections.every((c) => c.rcpts <= 2), `RCPTs per session: ${relay.connections.map((c) => c.rcpts).join(',')}`);
    } finally {
      await relay.close();
    }
  });

  // Issue 49: a rate-limited MX host cools down: the next request answers at once, with no
  // session, until the cool-down (doubled on a repeat) is over.
  test('a rate-limited host gets no session during its cool-down; the next request answers rate_limited at once', async () => {
    const relay = await startCountingRelay(rig.hosts.greet421, rig.smtpPort);
    try {
      const p = prober(relay, { rateLimitCooldown: { initialMs: 400, maxMs: 800 } });
      const route = await dns.lookupMail(D.busy);
      const first = await p.probe(`u0@${D.busy}`, route);
      assert.deepEqual([first.status, first.reply?.code], ['rate_limited', 421]);
      const started = Date.now();
      const second = await p.probe(`u1@${D.busy}`, route);
      assert.deepEqual([second.status, second.detail], ['rate_limited', 'cooling_down']);
      assert.ok(Date.now() - started < 100, `answered in ${Date.now() - started} ms`);
      assert.equal(relay.connections.length, 1, 'no session during the cool-down');
      assert.equal(p.coolingHosts().hosts, 1);
      await new Promise((r) => setTimeout(r, 450));
      assert.equal((await p.probe(`u2@${D.busy}`, route)).reply?.code, 421, 'asked again after the cool-down');
      assert.equal(relay.connections.length, 2);
      // Rate-limited again: the cool-down doubled (800 ms), so after 450 ms still no session.
      await new Promise((r) => setTimeout(r, 450));
      assert.equal((await p.probe(`u3@${D.busy}`, route)).detail, 'cooling_down');
      assert.equal(relay.connections.length, 2);
    } finally {
      await relay.close();
    }
  });

  test('back-off on 421: each new session waits, twice as long each time, up to the maximum', async () => {
    const relay = await startCountingRelay(rig.hosts.greet421, rig.smtpPort);
    try {
      const defaultLimits: ProviderLimits = { ...DEFAULT_LIMITS, backoffMs: 300, backoffMaxMs: 600 };
      // The peer's 421 is a rate limit (issue 49): the host cool-down is off here, so each probe opens a session.
      const p = prober(relay, { defaultLimits, rateLimitCooldown: { initialMs: 0, maxMs: 0 } });
      const route = await dns.lookupMail(D.busy);
      for (let i = 0; i < 4; i++) assert.equal((await p.probe(`u${i}@${D.busy}`, route)).status, 'rate_limited');
      const g = gaps(relay);
      assert.equal(g.length, 3);
      assert.ok(g[0]! >= 290 && g[0]! < 550, `first back-off ${g[0]} ms`);
      assert.ok(g[1]! >= 590 && g[2]! >= 590 && g[2]! < 900, `doubled, then held at the maximum: ${g.join(', ')} ms`);
    } finally {
      await relay.close();
    }
  });

  test('back-off on 4.7.x: a greylisting reply (450 4.7.1) delays the next session, which is new (the old one is not reused)', async () => {
    const relay = await startCountingRelay(rig.hosts.postfix, rig.smtpPort);
    try {
      const p = prober(relay, { defaultLimits: { ...DEFAULT_LIMITS, backoffMs: 400, backoffMaxMs: 400 }, sessionIdleMs: 5000, catchAll: false });
      const route = await dns.lookupMail(D.greylist);
      assert.equal((await p.probe(`a@${D.greylist}`, route)).status, 'greylisted');
      assert.equal((await p.probe(`b@${D.greylist}`, route)).status, 'greylisted');
      p.close();
      assert.equal(relay.connections.length, 2);
      assert.ok(gaps(relay)[0]! >= 390, `second session ${gaps(relay)[0]} ms after the first`);
    } finally {
      await relay.close();
    }
  });

  test('pause after rejections: a session closed for its rejections makes the next one wait', async () => {
    const relay = await startCountingRelay(rig.hosts.postfix, rig.smtpPort);
    try {
      const p = prober(relay, { defaultLimits: { ...DEFAULT_LIMITS, rejectionsPerSession: 2, pauseAfterRejectionsMs: 300 }, perHostConcurrency: 1, catchAll: false });
      const route = await dns.lookupMail(D.valid);
      const outcomes = await p.probeMany(Array.from({ length: 6 }, (_, i) => `nobody${i}@${D.valid}`), route);
      p.close();
      assert.ok(outcomes.every((o) => o.status === 'user_unknown'));
      assert.ok(relay.connections.length >= 2, `${relay.connections.length} sessions`);
      assert.ok(relay.connections.every((c) => c.rcpts <= 3), `RCPTs per session: ${relay.connections.map((c) => c.rcpts).join(',')}`);
      assert.ok(gaps(relay).every((g) => g >= 290), `gaps between sessions: ${gaps(relay).join(', ')} ms`);
    } finally {
      await relay.close();
    }
  });

  test('a provider at its limit closes a session parked idle at another of its addresses instead of waiting for it to time out', async () => {
    // Two MX addresses of one provider (the rig's Postfix listens on both), one session
    // allowed: the second domain's session must not wait out the first's 5 s idle time.
    const rules = applyProviderLimits(JSON.stringify({ google: { sessions: 1 } }), new Set(['google'])).rules;
    const p = new SmtpProber({
      helo: 'probe.rig.test',
      from: 'probe@rig.test',
      resolveAddresses: (h) => dns.lookupAddresses(h),
      port: rig.smtpPort,
      allowPrivate: true,
      restrictTo: ['127.0.0.0/8'],
      starttls: false,
      catchAll: false,
      sessionIdleMs: 5000,
      rules,
    });
    const first = { domain: D.valid, status: 'mx', hosts: [{ exchange: `mx.${D.valid}`, priority: 10 }], providers: ['google'] };
    const second = { domain: 'bench-00.test', status: 'mx', hosts: [{ exchange: 'mx0.bench.test', priority: 10 }], providers: ['google'] };
    assert.equal((await p.probe(`alice@${D.valid}`, first)).mxAddress, rig.hosts.postfix);
    const t0 = performance.now();
    const o = await p.probe('u000@bench-00.test', second);
    const waited = performance.now() - t0;
    p.close();
    assert.equal(o.status, 'accepted');
    assert.equal(o.mxAddress, rig.hosts.bench0);
    assert.ok(waited < 2500, `the second session waited ${waited.toFixed(0)} ms`);
  });

  test('the defaults: every named provider of the table has limits, tighter than an unknown server', () => {
    for (const id of ['google', 'microsoft365', 'outlook', 'yahoo', 'icloud', 'proton', 'zoho', 'mimecast', 'proofpoint', 'barracuda', 'yandex', 'gmx']) {
      const limits = PROVIDER_RULES[id]?.limits;
      assert.ok(limits, `${id} has limits`);
      assert.ok(limits.sessions! < DEFAULT_LIMITS.sessions && limits.backoffMs! > 0, id);
    }
  });

  test('EMAIL_SMTP_PROVIDER_LIMITS: refused with the problem named', () => {
    const known = new Set(['google']);
    assert.throws(() => applyProviderLimits('{', known), /not valid JSON/);
    assert.throws(() => applyProviderLimits('[]', known), /must be a JSON object/);
    assert.throws(() => applyProviderLimits('{"hotmale":{}}', known), /unknown provider "hotmale"/);
    assert.throws(() => applyProviderLimits('{"google":{"sesions":2}}', known), /google: unknown field "sesions"/);
    assert.throws(() => applyProviderLimits('{"google":{"sessions":0}}', known), /google\.sessions: must be a whole number from 1/);
    assert.throws(() => applyProviderLimits('{"default":{"backoffMs":-1}}', known), /default\.backoffMs: must be a whole number from 0/);
    assert.throws(() => applyProviderLimits('{"google":{"backoffMs":900000}}', known), /google: backoffMaxMs \(600000\) is below backoffMs \(900000\)/);
    const { rules, defaults } = applyProviderLimits('{"google":{"sessions":2},"default":{"sessionsPerHost":3}}', known);
    assert.equal(rules.google?.limits?.sessions, 2);
    assert.equal(rules.google?.limits?.backoffMs, PROVIDER_RULES.google?.limits?.backoffMs, 'fields not given keep the table value');
    assert.equal(defaults.sessionsPerHost, 3);
    assert.equal(rules.google?.catchAllProbe, 'same_session');
  });
});
