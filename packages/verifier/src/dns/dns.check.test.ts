import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { D, M365_MX, useRig, type RigHandle } from '@mailconv/test-rig';
import { DnsResolver, parseDnsServers } from './dns.check.js';

// Every case runs against the rig's real dnsmasq on a loopback address.
let rig: RigHandle;
before(async () => {
  rig = await useRig();
});
after(async () => {
  await rig.release();
});

function resolver(extra: ConstructorParameters<typeof DnsResolver>[0] = {}): DnsResolver {
  return new DnsResolver({ servers: [rig.dnsServer], timeoutMs: 1000, tries: 2, ...extra });
}

describe('mail routing of a domain', () => {
  test('one MX: the host, graded C', async () => {
    const o = await resolver().lookupMail(D.valid);
    assert.equal(o.status, 'mx');
    assert.deepEqual(o.hosts, [{ exchange: `mx.${D.valid}`, priority: 10, provider: null }]);
    assert.equal(o.grade, 'C');
    assert.equal(o.error, null);
  });

  test('several MX come back sorted by preference, graded B', async () => {
    const o = await resolver().lookupMail(D.multiMx);
    assert.equal(o.status, 'mx');
    assert.deepEqual(o.hosts.map((h) => [h.priority, h.exchange]), [
      [10, `mx1.${D.multiMx}`],
      [20, `mx2.${D.multiMx}`],
      [30, `mx3.${D.multiMx}`],
    ]);
    assert.equal(o.grade, 'B');
  });

  test('a null MX (RFC 7505) means the domain accepts no mail', async () => {
    const o = await resolver().lookupMail(D.nullMx);
    assert.equal(o.status, 'null_mx');
    assert.deepEqual(o.hosts, []);
    assert.equal(o.grade, 'F');
  });

  test('no MX but an A or AAAA record: the domain is its own mail host (implicit MX), graded D', async () => {
    for (const domain of [D.aOnly, D.aaaaOnly]) {
      const o = await resolver().lookupMail(domain);
      assert.equal(o.status, 'implicit_mx', domain);
      assert.deepEqual(o.hosts, [{ exchange: domain, priority: 0, provider: null }]);
      assert.equal(o.grade, 'D');
    }
  });

  test('a domain with neither MX nor address records has no mail host', async () => {
    const o = await resolver().lookupMail(D.noMail);
    assert.equal(o.status, 'no_mail_host');
    assert.equal(o.grade, 'F');
  });

  test('MX records whose hosts do not exist leave no mail host (RFC 5321 §5.1); a host whose lookup fails concludes nothing', async () => {
    const o = await resolver().lookupMail(D.mxNoAddress);
    assert.equal(o.status, 'no_mx_address');
    assert.deepEqual(o.hosts.map((h) => h.exchange), [`mx1.${D.mxNoAddress}`, `gone.${D.nxdomain}`], 'the records are kept, in preference order');
    assert.equal(o.grade, 'F');
    // A dead MX host still has an address: that is for the SMTP probe to find out.
    assert.equal((await resolver().lookupMail(D.deadMx)).status, 'mx');
  });

  test('NXDOMAIN is "not found"', async () => {
    const o = await resolver().lookupMail(D.nxdomain);
    assert.equal(o.status, 'not_found');
    assert.equal(o.grade, 'F');
  });

  test('SERVFAIL is a DNS error, never "not found"', async () => {
    const o = await resolver().lookupMail(D.servfail);
    assert.equal(o.status, 'error');
    assert.equal(o.error?.code, 'servfail');
    assert.equal(o.grade, null);
  });

  test('a resolver that stays silent gives a time-out error', async () => {
    const viaForwarder = await resolver({ timeoutMs: 300, tries: 1 }).lookupMail(D.silent);
    assert.equal(viaForwarder.status, 'error');
    const direct = await new DnsResolver({ servers: [rig.silentDnsServer], timeoutMs: 200, tries: 2 }).lookupMail(D.valid);
    assert.equal(direct.status, 'error');
    assert.equal(direct.error?.code, 'timeout');
  });

  test('MX hosts are classified into providers; two at a major provider grade A', async () => {
    const m365 = await resolver().lookupMail(D.m365);
    assert.deepEqual(m365.hosts.map((h) => h.exchange), [M365_MX]);
    assert.deepEqual(m365.providers, ['microsoft365']);
    const google = await resolver().lookupMail(D.google);
    assert.deepEqual(google.providers, ['google']);
    assert.equal(google.grade, 'A');
  });

  test('addresses of an MX host, and none for a name without any', async () => {
    const r = resolver();
    assert.deepEqual(await r.lookupAddresses(`mx.${D.valid}`), [rig.hosts.postfix]);
    assert.deepEqual(await r.lookupAddresses(D.aaaaOnly), ['::1']);
    assert.deepEqual(await r.lookupAddresses(D.nxdomain), []);
    await assert.rejects(r.lookupAddresses(D.servfail), /servfail|ESERVFAIL/i);
  });
});

describe('cache', () => {
  test('concurrent lookups of one name share one answer', async () => {
    const r = resolver();
    const [a, b, c] = await Promise.all([r.lookupMail(D.valid), r.lookupMail(D.valid), r.lookupMail('VALID.test.')]);
    assert.equal(a, b);
    assert.equal(a, c);
  });

  test('positive and negative answers expire after their own TTLs on the injected clock', async () => {
    let now = 1_000;
    const r = resolver({ clock: () => now, positiveTtlMs: 60_000, negativeTtlMs: 5_000 });
    const pos = await r.lookupMail(D.valid);
    const neg = await r.lookupMail(D.nxdomain);
    now += 4_999;
    assert.equal(await r.lookupMail(D.valid), pos);
    assert.equal(await r.lookupMail(D.nxdomain), neg);
    now += 2;
    assert.equal(await r.lookupMail(D.valid), pos, 'positive answer still fresh');
    const neg2 = await r.lookupMail(D.nxdomain);
    assert.notEqual(neg2, neg, 'negative answer expired and was asked again');
    assert.equal(neg2.status, 'not_found');
    now += 60_000;
    assert.notEqual(await r.lookupMail(D.valid), pos);
  });

  test('errors are not kept once answered (by default), so a flaky resolver is asked again', async () => {
    const r = resolver();
    const first = await r.lookupMail(D.servfail);
    const second = await r.lookupMail(D.servfail);
    assert.equal(second.status, 'error');
    assert.notEqual(first, second);
  });
});

test('resolver addresses are parsed as host:port and bad ones are refused', () => {
  assert.deepEqual(parseDnsServers('127.0.0.2:5353, 127.0.0.3'), ['127.0.0.2:5353', '127.0.0.3:53']);
  assert.deepEqual(parseDnsServers(['[::1]:53', '::1']), ['[::1]:53', '[::1]:53']);
  assert.throws(() => parseDnsServers('dns.example:53'), /IP address/);
  assert.throws(() => parseDnsServers('127.0.0.1:99999'), /port/);
});
