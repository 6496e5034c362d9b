import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BENCH_USERS_PER_DOMAIN, D, DROP_AFTER_RCPTS, GATE_SESSIONS, M365_MX, PEER_ERROR_LIMIT, SOCKS_PASSWORD, SOCKS_USER, benchDomains, benchTruth, useRig, type RigHandle } from '@mailconv/test-rig';
import { createServer, type AddressInfo } from 'node:net';
import { DnsResolver } from '../dns/dns.check.js';
import { EGRESS_COOLDOWN_MS, EgressPool, parseSmtpProxies, parseSourceAddresses } from './egress.js';
import { SmtpConfigError, SmtpProber, type SmtpProberOptions } from './smtp.check.js';
import type { SmtpOutcome } from './types.js';

// Every case talks to the rig: a real Postfix (users, full, disabled, greylisting,
// STARTTLS, catch-all) and scripted peers (421, tarpit, drop, 452, block list, accept-all).
let rig: RigHandle;
let dns: DnsResolver;
before(async () => {
  rig = await useRig();
  dns = new DnsResolver({ servers: [rig.dnsServer], timeoutMs: 1000, tries: 2 });
});
after(async () => {
  await rig.release();
});

function prober(extra: Partial<SmtpProberOptions> = {}): SmtpProber {
  return new SmtpProber({
    helo: 'probe.rig.test',
    from: 'probe@rig.test',
    resolveAddresses: (h) => dns.lookupAddresses(h),
    port: rig.smtpPort,
    allowPrivate: true,
    // The suite lets the prober reach loopback only, never the rest of the private ranges.
    restrictTo: ['127.0.0.0/8'],
    // Generous: the machine is shared; only the tarpit case sets a short command time-out.
    connectTimeoutMs: 5000,
    commandTimeoutMs: 5000,
    overallTimeoutMs: 20_000,
    ...extra,
  });
}

async function probe(email: string, extra: Partial<SmtpProberOptions> = {}): Promise<SmtpOutcome> {
  const domain = email.split('@')[1] ?? '';
  return prober(extra).probe(email, await dns.lookupMail(domain));
}

describe('mailbox answers from a real Postfix', () => {
  test('an existing mailbox is accepted, over STARTTLS, and the domain is not catch-all', async () => {
    const o = await probe(`alice@${D.valid}`);
    assert.equal(o.status, 'accepted');
    assert.equal(o.reply?.code, 250);
    assert.equal(o.reply?.enhanced, '2.1.5');
    assert.equal(o.tls, true, 'Postfix offers STARTTLS and the prober must use it');
    assert.equal(o.catchAll, false);
    assert.equal(o.mxHost, `mx.${D.valid}`);
    assert.equal(o.mxAddress, rig.hosts.postfix);
  });

  test('an unknown user is 550 5.1.1 user_unknown', async () => {
    const o = await probe(`nobody@${D.valid}`);
    assert.equal(o.status, 'user_unknown');
    assert.equal(o.reply?.code, 550);
    assert.equal(o.reply?.enhanced, '5.1.1');
    assert.equal(o.catchAll, false);
  });

  test('a full mailbox is 552 5.2.2 mailbox_full', async () => {
    const o = await probe(`full@${D.valid}`);
    assert.equal(o.status, 'mailbox_full');
    assert.equal(o.reply?.enhanced, '5.2.2');
  });

  test('a disabled mailbox is 5.2.1 disabled', async () => {
    const o = await probe(`disabled@${D.valid}`);
    assert.equal(o.status, 'disabled');
    assert.equal(o.reply?.enhanced, '5.2.1');
  });

  test('a greylisting answer (450 4.7.1) is greylisted', async () => {
    const o = await probe(`someone@${D.greylist}`);
    assert.equal(o.status, 'greylisted');
    assert.equal(o.reply?.code, 450);
    assert.equal(o.catchAll, null);
  });

  test('a domain that accepts any local part is detected as catch-all', async () => {
    const o = await probe(`whoever@${D.catchAll}`);
    assert.equal(o.status, 'accepted');
    assert.equal(o.catchAll, true);
  });

  test('a dead primary MX falls back to the next host by preference', async () => {
    const o = await probe(`alice@${D.multiMx}`);
    assert.equal(o.status, 'accepted');
    assert.equal(o.mxHost, `mx2.${D.multiMx}`);
  });

  test('no MX: the A record is the mail host (implicit MX)', async () => {
    const o = await probe(`bob@${D.aOnly}`);
    assert.equal(o.status, 'accepted');
    assert.equal(o.mxHost, D.aOnly);
  });

  test('several recipients of one domain share one session, with an answer each, in order', async () => {
    const p = prober();
    const emails = ['alice', 'nobody1', 'bob', 'full', 'disabled', 'carol', 'nobody2'].map((u) => `${u}@${D.valid}`);
    const outcomes = await p.probeMany(emails, await dns.lookupMail(D.valid));
    assert.deepEqual(
      outcomes.map((o) => [o.email, o.status]),
      emails.map((e, i) => [e, ['accepted', 'user_unknown', 'accepted', 'mailbox_full', 'disabled', 'accepted', 'user_unknown'][i]]),
    );
    assert.equal(p.stats.sessions, 1, 'one session for seven recipients (RSET between envelopes)');
    assert.ok(outcomes.every((o) => o.catchAll === false));
  });
});

test('a tight error budget spreads recipients over more sessions and still answers each', async () => {
  const p = prober({ maxErrorsPerSession: 1 });
  const emails = ['nobody1', 'alice', 'nobody2', 'full'].map((u) => `${u}@${D.valid}`);
  const outcomes = await p.probeMany(emails, await dns.lookupMail(D.valid));
  assert.deepEqual(outcomes.map((o) => o.status), ['user_unknown', 'accepted', 'user_unknown', 'mailbox_full']);
  assert.ok(p.stats.sessions >= 3, `sessions: ${p.stats.sessions}`);
});

test('a long list of one domain is probed by parallel sessions up to the per-host limit, answers in order', async () => {
  const domain = benchDomains()[0]!;
  const emails = Array.from({ length: BENCH_USERS_PER_DOMAIN }, (_, u) => `u${String(u).padStart(3, '0')}@${domain}`);
  const route = await dns.lookupMail(domain);
  for (const perHostConcurrency of [1, 3]) {
    const p = prober({ perHostConcurrency, maxRecipientsPerSession: 10 });
    const outcomes = await p.probeMany(emails, route);
    p.close();
    assert.deepEqual(
      outcomes.map((o) => [o.email, o.status]),
      emails.map((e, u) => [e, benchTruth(0, u)]),
    );
    assert.ok(outcomes.every((o) => o.status !== 'accepted' || o.catchAll === false));
    // How many overlap depends on how fast Postfix answers (a session may finish its chunk
    // before another's TLS handshake is done); that they do is the gate peer's test below.
    assert.ok(p.stats.peakOpen >= 1 && p.stats.peakOpen <= perHostConcurrency, `open at once: ${p.stats.peakOpen}, limit ${perHostConcurrency}`);
  }
});

test('sessions of one domain are open side by side, up to the per-host limit and no more', async () => {
  // The gate peer answers no RCPT until GATE_SESSIONS sessions are open at once and
  // refuses one more: progress needs the sessions to overlap, whatever the timing.
  const p = prober({ perHostConcurrency: GATE_SESSIONS, maxRecipientsPerSession: 4 });
  const users = ['alice', 'n1', 'bob', 'n2', 'alice', 'n3', 'bob', 'n4', 'alice', 'n5', 'bob', 'n6'];
  const emails = users.map((u) => `${u}@${D.gate}`);
  const t0 = Date.now();
  const outcomes = await p.probeMany(emails, await dns.lookupMail(D.gate));
  p.close();
  assert.deepEqual(
    outcomes.map((o) => o.status),
    users.map((u) => (u.startsWith('n') ? 'user_unknown' : 'accepted')),
  );
  assert.equal(p.stats.peakOpen, GATE_SESSIONS, 'sessions open at once');
  assert.equal(p.stats.sessions, GATE_SESSIONS);
  assert.ok(Date.now() - t0 < 3000, 'the gate opened because the sessions were open together, not by its time-out');
});

describe('pipelining and session reuse (issue 16)', () => {
  test('a server without PIPELINING gets one command at a time (it hangs up on a pipelining client)', async () => {
    const p = prober();
    const users = ['alice', 'nobody1', 'bob', 'nobody2'];
    const outcomes = await p.probeMany(users.map((u) => `${u}@${D.lockstep}`), await dns.lookupMail(D.lockstep));
    p.close();
    assert.deepEqual(outcomes.map((o) => o.status), ['accepted', 'user_unknown', 'accepted', 'user_unknown']);
    assert.ok(outcomes.every((o) => o.catchAll === false));
    assert.equal(p.stats.sessions, 1);
  });

  test('a connection dropped in the middle of a pipelined group: answered recipients keep their answer, the rest are asked again', async () => {
    const p = prober();
    const users = ['nobody1', 'alice', 'nobody2', 'bob', 'nobody3'];
    const outcomes = await p.probeMany(users.map((u) => `${u}@${D.dropPipeline}`), await dns.lookupMail(D.dropPipeline));
    p.close();
    assert.deepEqual(outcomes.map((o) => o.status), ['user_unknown', 'accepted', 'user_unknown', 'accepted', 'user_unknown']);
    // Five addresses and the catch-all probe, DROP_AFTER_RCPTS answers a session.
    assert.equal(p.stats.sessions, Math.ceil((users.length + 1) / DROP_AFTER_RCPTS));
  });

  test('replies one place off (MAIL answered twice) are matched to nobody: unknown, never valid', async () => {
    const p = prober();
    const users = ['nobody', 'alice', 'nobody2'];
    const outcomes = await p.probeMany(users.map((u) => `${u}@${D.doubleReply}`), await dns.lookupMail(D.doubleReply));
    p.close();
    for (const o of outcomes) {
      assert.equal(o.status, 'unknown', `${o.email}: ${o.status}`);
      assert.equal(o.detail, 'protocol_error');
      assert.equal(o.catchAll, null);
    }
  });

  test('a server that cuts a session after a few errors: the prober stays under its limit, or asks the cut-off recipients again', async () => {
    const users = ['alice', 'n0', 'n1', 'n2', 'bob', 'n3', 'n4', 'n5', 'n6', 'n7', 'alice', 'n8', 'n9'];
    const emails = users.map((u) => `${u}@${D.errorLimit}`);
    const truth = users.map((u) => (u.startsWith('n') ? 'user_unknown' : 'accepted'));
    const route = await dns.lookupMail(D.errorLimit);
    // Told the limit: never cut off.
    const under = prober({ maxErrorsPerSession: PEER_ERROR_LIMIT - 1 });
    const a = await under.probeMany(emails, route);
    under.close();
    assert.deepEqual(a.map((o) => o.status), truth);
    assert.equal(under.stats.cutOff, 0);
    // Not told: cut off with 421 in the middle of a group, and every recipient still right (none `blocked`).
    const over = prober({ maxErrorsPerSession: 9 });
    const b = await over.probeMany(emails, route);
    over.close();
    assert.deepEqual(b.map((o) => o.status), truth);
    assert.ok(over.stats.cutOff >= 1, `cut off ${over.stats.cutOff} times`);
  });

  test('a parked session without room in its error budget is not given a new chunk (it would ask nothing)', async () => {
    // Regression (issue 16): a bulk job's second batch of a domain got a session with one
    // error left and its catch-all probe took that one: every address came back unknown.
    // (catchAllTtlMs 0: the second batch asks its own random address.)
    const p = prober({ maxErrorsPerSession: 3, catchAllTtlMs: 0 });
    const route = await dns.lookupMail(D.valid);
    const first = await p.probeMany([`alice@${D.valid}`, `nobody1@${D.valid}`], route);
    const second = await p.probeMany([`bob@${D.valid}`], route);
    p.close();
    assert.deepEqual(first.map((o) => o.status), ['accepted', 'user_unknown']);
    assert.equal(second[0]?.status, 'accepted');
    assert.equal(second[0]?.catchAll, false);
    assert.equal(p.stats.sessions, 2);
  });

  test("a domain's catch-all answer is remembered: a later batch asks no random address", async () => {
    const p = prober();
    const route = await dns.lookupMail(D.catchAll);
    const [a] = await p.probeMany([`first@${D.catchAll}`], route);
    const asked = p.stats.recipients;
    const [b] = await p.probeMany([`second@${D.catchAll}`], route);
    p.close();
    assert.equal(a?.catchAll, true);
    assert.equal(asked, 2, 'the first batch asks the random address');
    assert.equal(b?.catchAll, true);
    assert.equal(p.stats.recipients, asked + 1, 'the second asks only its own address');
  });

  test('a session is reused across domains that share an MX address, and its error count goes with it', async () => {
    const p = prober();
    const valid = await p.probeMany(['alice', 'nobody'].map((u) => `${u}@${D.valid}`), await dns.lookupMail(D.valid));
    const catchAll = await p.probeMany([`whoever@${D.catchAll}`], await dns.lookupMail(D.catchAll));
    p.close();
    assert.deepEqual(valid.map((o) => o.status), ['accepted', 'user_unknown']);
    assert.equal(catchAll[0]?.status, 'accepted');
    assert.equal(catchAll[0]?.catchAll, true);
    assert.equal(catchAll[0]?.tls, true);
    assert.equal(p.stats.sessions, 1, 'catchall.test has the same MX as valid.test');
    assert.equal(p.stats.reused, 1);
  });
});

describe('hostile and unusual peers', () => {
  // Issue 49: the peer's 421 4.7.0 "Too many connections from your host, try again later" is a rate limit, not a block.
  test('421 at connect is rate_limited', async () => {
    const o = await probe(`alice@${D.busy}`);
    assert.equal(o.status, 'rate_limited');
    assert.equal(o.reply?.code, 421);
  });

  test('a 421 from the primary MX falls back to the next one', async () => {
    const o = await probe(`alice@${D.busyPrimary}`);
    assert.equal(o.status, 'accepted');
    assert.equal(o.mxHost, `mx.${D.valid}`);
  });

  test('a block-list refusal is blocked, not user_unknown', async () => {
    const o = await probe(`alice@${D.blocked}`);
    assert.equal(o.status, 'blocked');
    assert.equal(o.reply?.code, 554);
    assert.match(o.reply?.text ?? '', /spamhaus/);
  });

  test('a tarpit that never answers RCPT ends in a time-out', async () => {
    const o = await probe(`alice@${D.slow}`, { commandTimeoutMs: 400 });
    assert.equal(o.status, 'timeout');
    assert.equal(o.detail, 'command_timeout');
  });

  test('a dead port is unreachable', async () => {
    const o = await probe(`alice@${D.deadMx}`);
    assert.equal(o.status, 'unreachable');
    assert.equal(o.detail, 'connection_refused');
  });

  test('a server that hangs up at RCPT is retried once, then unreachable', async () => {
    const p = prober();
    const o = await p.probe(`alice@${D.drop}`, await dns.lookupMail(D.drop));
    assert.equal(o.status, 'unreachable');
    assert.equal(o.detail, 'connection_lost');
    assert.equal(p.stats.sessions, 2);
  });

  test('452 4.5.3 to the second recipient: the catch-all probe moves to its own envelope', async () => {
    const p = prober();
    const o = await p.probe(`alice@${D.strict}`, await dns.lookupMail(D.strict));
    assert.equal(o.status, 'accepted');
    assert.equal(o.catchAll, false, 'decided by the random address in an envelope of its own');
    // The limit is per message: a second envelope of the parked session asks it.
    assert.equal(p.stats.sessions, 1);
    assert.equal(p.stats.reused, 1);
    p.close();
  });

  test('a server that takes one recipient per message still gets every address asked, one per envelope', async () => {
    const p = prober();
    const emails = ['alice', 'bob', 'nobody', 'carol'].map((u) => `${u}@${D.strict}`);
    const outcomes = await p.probeMany(emails, await dns.lookupMail(D.strict));
    assert.deepEqual(outcomes.map((o) => o.status), ['accepted', 'accepted', 'user_unknown', 'user_unknown']);
    assert.ok(outcomes.every((o) => o.reply?.code !== 452));
    assert.equal(p.stats.sessions, 1);
  });

  test('Microsoft 365 MX: the catch-all probe goes straight to its own session', async () => {
    const p = prober();
    const route = await dns.lookupMail(D.m365);
    assert.deepEqual(route.hosts.map((h) => h.exchange), [M365_MX]);
    const o = await p.probe(`alice@${D.m365}`, route);
    assert.equal(o.provider, 'microsoft365');
    assert.equal(o.status, 'accepted');
    assert.equal(o.catchAll, false);
    assert.equal(p.stats.sessions, 2);
    assert.equal(p.stats.recipients, 2, 'never a second recipient in the first envelope');
  });

  test('Yahoo-style accept-everything at RCPT is unknown, not valid', async () => {
    const o = await probe(`surely-not-a-user@${D.yahoo}`);
    assert.equal(o.provider, 'yahoo');
    assert.equal(o.status, 'unknown');
    assert.equal(o.detail, 'accept_all_provider');
    assert.equal(o.catchAll, null);
  });
});

describe('SOCKS5 proxy', () => {
  test('probes go through the proxy: the right login works, a wrong one fails', async () => {
    const proxy = { host: rig.socks.host, port: rig.socks.port, username: SOCKS_USER, password: SOCKS_PASSWORD };
    const through = await probe(`alice@${D.valid}`, { proxy });
    assert.equal(through.status, 'accepted');
    assert.equal(through.tls, true);
    const nobody = await probe(`nobody@${D.valid}`, { proxy });
    assert.equal(nobody.status, 'user_unknown');
    const wrong = await probe(`alice@${D.valid}`, { proxy: { ...proxy, password: 'wrong' } });
    assert.equal(wrong.status, 'unreachable');
    assert.equal(wrong.detail, 'proxy_failed');
  });

  test('a dead port behind the proxy is unreachable like a direct one', async () => {
    const o = await probe(`alice@${D.deadMx}`, { proxy: { host: rig.socks.host, port: rig.socks.port, username: SOCKS_USER, password: SOCKS_PASSWORD } });
    assert.equal(o.status, 'unreachable');
    assert.equal(o.detail, 'connection_refused');
  });
});

describe('egresses (issue 23)', () => {
  // Every egress here reaches only loopback: the rig's SOCKS5 proxy, a closed loopback port
  // posing as a dead proxy, the local address 127.0.0.1, and 192.0.2.1 (TEST-NET-1), which is
  // no address of this host, so binding to it fails before any packet is sent.
  const good = () => ({ name: 'socks5://rig', proxy: { host: rig.socks.host, port: rig.socks.port, username: SOCKS_USER, password: SOCKS_PASSWORD }, helo: 'out1.rig.test' });
  const deadProxy = async () => {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    await new Promise((r) => server.close(r));
    return { name: 'socks5://dead', proxy: { host: '127.0.0.1', port } };
  };

  test('a dead proxy is taken out and the next egress carries the probe; verdicts are the rig\'s; it is tried again after its wait', async () => {
    let now = 1_000_000;
    const events: string[] = [];
    const dead = await deadProxy();
    const up = good();
    const pool = new EgressPool([dead, up], (egress, event) => events.push(`${egress}:${event}`), () => now);
    // The good egress is put out first, so the dead one is certainly tried before it.
    pool.failed(up);
    const p = prober({ egresses: pool });
    const alice = await p.probe(`alice@${D.valid}`, await dns.lookupMail(D.valid));
    assert.deepEqual([alice.status, alice.tls], ['accepted', true]);
    const nobody = await p.probe(`nobody@${D.valid}`, await dns.lookupMail(D.valid));
    assert.equal(nobody.status, 'user_unknown');
    const [deadState, upState] = pool.states();
    assert.equal(deadState!.healthy, false, 'the dead proxy is out');
    assert.equal(deadState!.retryAt, now + EGRESS_COOLDOWN_MS);
    assert.ok(upState!.healthy && upState!.counts.session >= 1, JSON.stringify(upState));
    assert.ok(events.includes('socks5://dead:failed') && events.includes('socks5://rig:session'), events.join(' '));
    // After its wait it is tried again (and fails again: a longer wait).
    now += EGRESS_COOLDOWN_MS + 1;
    assert.equal(pool.states()[0]!.healthy, true);
    p.close();
  });

  test('only failing egresses: unreachable (egress_failed or proxy_failed), never invalid; a local address that is not this host\'s fails over to one that is', async () => {
    const dead = await deadProxy();
    const alone = await probe(`nobody@${D.valid}`, { egresses: new EgressPool([dead]) });
    assert.equal(alone.status, 'unreachable', JSON.stringify(alone));
    assert.match(alone.detail ?? '', /egress_failed|proxy_failed/);
    const local = { name: 'source:127.0.0.1', localAddress: '127.0.0.1' };
    const foreign = { name: 'source:192.0.2.1', localAddress: '192.0.2.1' };
    const pool = new EgressPool([foreign, local]);
    pool.failed(local);
    const o = await probe(`nobody@${D.valid}`, { egresses: pool });
    assert.equal(o.status, 'user_unknown', JSON.stringify(o));
    assert.deepEqual(pool.states().map((s) => [s.name, s.healthy, s.counts.failed]), [['source:192.0.2.1', false, 1], ['source:127.0.0.1', true, 1]]);
  });

  test('settings: proxies with login and EHLO name, local addresses with theirs; bad items are refused without showing a password', () => {
    // Parsing only: no prober is built from these, so none of their addresses is ever dialled.
    const [p1, p2] = parseSmtpProxies('socks5://u%40x:p%3Ass@10.0.0.5:1080?helo=out1.example.com&address=198.51.100.7, socks5://[::1]:1081');
    assert.deepEqual(p1, { name: 'socks5://10.0.0.5:1080', proxy: { host: '10.0.0.5', port: 1080, username: 'u@x', password: 'p:ss' }, helo: 'out1.example.com', address: '198.51.100.7' });
    assert.deepEqual(p2, { name: 'socks5://[::1]:1081', proxy: { host: '::1', port: 1081 } });
    assert.deepEqual(parseSourceAddresses('203.0.113.5=out2.example.com,2001:db8::5'), [
      { name: 'source:203.0.113.5', localAddress: '203.0.113.5', address: '203.0.113.5', helo: 'out2.example.com' },
      { name: 'source:2001:db8::5', localAddress: '2001:db8::5', address: '2001:db8::5' },
    ]);
    for (const bad of ['http://u:secret@p:1', 'socks5://u:secret@p', 'socks5://u:secret@p:1?helo=bad name', 'socks5://u:secret@p:1?address=not-an-ip']) {
      assert.throws(() => parseSmtpProxies(bad), (e: Error) => e instanceof SmtpConfigError && !e.message.includes('secret'), bad);
    }
    assert.throws(() => parseSourceAddresses('mail.example.com'), SmtpConfigError);
  });
});

describe('safety', () => {
  test('loopback and private MX addresses are refused unless allowPrivate is set', async () => {
    const p = prober({ allowPrivate: false });
    const o = await p.probe(`alice@${D.valid}`, await dns.lookupMail(D.valid));
    assert.equal(o.status, 'unreachable');
    assert.equal(o.detail, 'private_address');
    assert.equal(p.stats.sessions, 0);
  });

  test('restrictTo keeps allowPrivate from reaching outside the listed networks', async () => {
    const p = prober({ restrictTo: ['10.0.0.0/8', '::1/128'] });
    const o = await p.probe(`alice@${D.valid}`, await dns.lookupMail(D.valid));
    assert.equal(o.status, 'unreachable');
    assert.equal(o.detail, 'address_not_allowed');
    assert.equal(p.stats.sessions, 0);
    assert.throws(() => prober({ restrictTo: ['mx.example.org/24'] }), SmtpConfigError);
  });

  test('probing without an EHLO name or a MAIL FROM is a configuration error', () => {
    const base = { resolveAddresses: async () => [] };
    assert.throws(() => new SmtpProber({ ...base, helo: '', from: 'probe@rig.test' }), SmtpConfigError);
    assert.throws(() => new SmtpProber({ ...base, helo: 'probe.rig.test', from: '' }), SmtpConfigError);
    assert.throws(() => new SmtpProber({ ...base, helo: 'localhost', from: 'probe@rig.test' }), SmtpConfigError);
  });

  test('an address that could smuggle a command is not sent', async () => {
    const p = prober();
    const o = await p.probe(`alice@${D.valid}>\r\nDATA`, await dns.lookupMail(D.valid));
    assert.equal(o.detail, 'invalid_address');
    assert.equal(p.stats.sessions, 0);
  });

  test('a domain without mail hosts is not probed', async () => {
    const p = prober();
    const o = await p.probe(`a@${D.nullMx}`, await dns.lookupMail(D.nullMx));
    assert.equal(o.status, 'unreachable');
    assert.equal(o.detail, 'no_mail_host');
  });
});
