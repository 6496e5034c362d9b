import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createServer as createTcpServer } from 'node:net';
import { REBIND_PUBLIC_ADDRESS, WEBHOOK_HOSTS, useRig, type RigHandle } from '@mailconv/test-rig';
import { checkUrl, resolverLookup, sendWebhook, webhookPolicy, type Lookup } from '@mailconv/platform';
import { signatureValid, TestReceiver } from '@mailconv/platform/testing';

const checkWebhookTarget = (url: string, o: { allowInsecure: boolean; lookup: Lookup }) => checkUrl(url, webhookPolicy(o.allowInsecure, { lookup: o.lookup }));

// The guard only classifies and never connects. Host names are resolved by a real resolver,
// the rig's dnsmasq on loopback (test-rig/src/zones.ts, WEBHOOK_HOSTS); the public-looking
// addresses are inputs (IP literals, or the rebinding name's refused answer), never dialled.
describe('webhook URL guard, names resolved through the rig\'s DNS server', () => {
  let rig: RigHandle;
  let lookup: Lookup;
  before(async () => {
    rig = await useRig();
    lookup = resolverLookup([rig.dnsServer]);
  });
  after(() => rig.release());

  test('only public HTTPS targets pass; each non-public address class is refused (never connected to)', async () => {
    const classes: Record<string, string> = {
      loopback: '127.0.0.1',
      private10: '10.1.2.3',
      private172: '172.16.5.4',
      private192: '192.168.0.10',
      linkLocal: '169.254.10.10',
      metadata: '169.254.169.254',
      cgnat: '100.64.0.7',
      multicast: '224.0.0.251',
      reserved: '240.0.0.1',
      unspecified: '0.0.0.0',
      v6loopback: '::1',
      v6uniqueLocal: 'fd12::1',
      v6linkLocal: 'fe80::1',
      mappedPrivate: '::ffff:10.0.0.5',
      mappedHexLoopback: '::ffff:7f00:1',
    };
    // Every class as the address the URL names (a literal needs no lookup).
    for (const [name, address] of Object.entries(classes)) {
      const r = await checkWebhookTarget(`https://${address.includes(':') ? `[${address}]` : address}/hook`, { allowInsecure: false, lookup });
      assert.deepEqual([r.ok, r.ok ? null : r.problem], [false, 'private_address'], name);
    }
    for (const literal of ['https://127.0.0.1/h', 'https://[::1]/h', 'https://169.254.169.254/latest/meta-data']) {
      const r = await checkWebhookTarget(literal, { allowInsecure: false, lookup });
      assert.equal(r.ok ? null : r.problem, 'private_address', literal);
    }
    // Names whose A or AAAA answer from the rig is loopback.
    for (const host of [WEBHOOK_HOSTS.receiver, WEBHOOK_HOSTS.receiverV6]) {
      const r = await checkWebhookTarget(`https://${host}/hook`, { allowInsecure: false, lookup });
      assert.deepEqual([r.ok, r.ok ? null : r.problem], [false, 'private_address'], host);
    }
    assert.deepEqual(await lookup(WEBHOOK_HOSTS.rebind).then((a) => a.map((x) => x.address).sort()), ['127.0.0.1', REBIND_PUBLIC_ADDRESS].sort(), 'the rig answers both addresses');
    const mixed = await checkWebhookTarget(`https://${WEBHOOK_HOSTS.rebind}/h`, { allowInsecure: false, lookup });
    assert.equal(mixed.ok ? null : mixed.problem, 'private_address', 'one private address among public ones is enough to refuse');
    const ok = await checkWebhookTarget(`https://${REBIND_PUBLIC_ADDRESS}/h`, { allowInsecure: false, lookup });
    assert.ok(ok.ok);
    assert.deepEqual(ok.target, { address: REBIND_PUBLIC_ADDRESS, family: 4 });
  });

  test('scheme, credentials and resolution are checked; the insecure setting allows http and loopback', async () => {
    const cases: Array<[string, string]> = [
      ['not a url', 'invalid_url'],
      [`http://${REBIND_PUBLIC_ADDRESS}/h`, 'not_https'],
      [`ftp://${REBIND_PUBLIC_ADDRESS}/h`, 'not_https'],
      [`https://user:pw@${REBIND_PUBLIC_ADDRESS}/h`, 'credentials'],
      [`https://${WEBHOOK_HOSTS.nowhere}/h`, 'unresolvable'],
    ];
    for (const [url, problem] of cases) {
      const r = await checkWebhookTarget(url, { allowInsecure: false, lookup });
      assert.equal(r.ok ? null : r.problem, problem, url);
    }
    const dev = await checkWebhookTarget(`http://${WEBHOOK_HOSTS.receiver}:8080/h`, { allowInsecure: true, lookup });
    assert.ok(dev.ok);
    assert.deepEqual(dev.target, { address: '127.0.0.1', family: 4 }, 'the address the rig answered is the one to connect to');
    const dev6 = await checkWebhookTarget(`http://${WEBHOOK_HOSTS.receiverV6}:8080/h`, { allowInsecure: true, lookup });
    assert.ok(dev6.ok);
    assert.deepEqual(dev6.target, { address: '::1', family: 6 });
  });
});

describe('webhook sender against a real HTTPS receiver on loopback', () => {
  let receiver: TestReceiver;
  let port: number;
  let ca: Buffer;
  const secret = 'whsec_test_0123456789';

  before(async () => {
    receiver = await TestReceiver.start();
    ({ port, ca } = receiver);
    receiver.behave('/ok', (_n, r) => (signatureValid(r, secret) ? 204 : 401));
    receiver.behave('/slow', () => 'hang');
    receiver.behave('/fail', () => 500);
    receiver.behave('/redirect', () => ({ status: 302, headers: { location: '/ok-after-redirect' } }));
  });
  after(() => receiver.close());

  const body = JSON.stringify({ event: 'job.completed', job_id: 'job_x', summary: { total: 1, valid: 1, invalid: 0, risky: 0 }, timestamp: '2026-11-21T12:00:00.000Z' });
  const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
  // The sender never resolves: the connection goes to the pinned, checked address, whatever the URL's host.
  const send = (path: string, extra: Partial<Parameters<typeof sendWebhook>[0]> = {}) =>
    sendWebhook({
      url: new URL(`https://hooks.example.test:${port}${path}`),
      target: { address: '127.0.0.1', family: 4 },
      body,
      headers: { 'x-service-signature': signature, 'x-service-event': 'job.completed', 'x-service-delivery': 'dlv_1', 'user-agent': 'mailconv-webhooks/1.0' },
      timeoutMs: 2000,
      ca,
      ...extra,
    });

  test('a 2xx answer is success; the receiver sees the signed raw body and the headers', async () => {
    const r = await send('/ok');
    assert.deepEqual([r.ok, r.status, r.error], [true, 204, null]);
    const got = receiver.at('/ok')[0]!;
    assert.equal(signatureValid(got, secret), true);
    assert.equal(got.body.toString('utf8'), body);
    assert.equal(got.headers['x-service-event'], 'job.completed');
    assert.equal(got.headers['x-service-delivery'], 'dlv_1');
    assert.equal(got.headers.host, `hooks.example.test:${port}`);
  });

  test('a wrong signature is detectable by the receiver', async () => {
    const r = await send('/ok', { headers: { 'x-service-signature': `sha256=${'0'.repeat(64)}` } });
    assert.deepEqual([r.ok, r.status, r.error], [false, 401, 'http_401']);
  });

  test('500, time-out, refused connection and redirects are failures; redirects are not followed', async () => {
    assert.deepEqual(((r) => [r.ok, r.status, r.error])(await send('/fail')), [false, 500, 'http_500']);
    const slow = await send('/slow', { timeoutMs: 300 });
    assert.deepEqual([slow.ok, slow.error], [false, 'timeout']);
    const redirect = await send('/redirect');
    assert.deepEqual([redirect.ok, redirect.status, redirect.error], [false, 302, 'redirect_not_followed']);
    assert.equal(receiver.at('/ok-after-redirect').length, 0);
    const closed = createTcpServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const refused = await sendWebhook({ url: new URL(`https://hooks.example.test:${closedPort}/`), target: { address: '127.0.0.1', family: 4 }, body, headers: {}, timeoutMs: 2000, ca });
    assert.deepEqual([refused.ok, refused.error], [false, 'connection_refused']);
  });

  test('a certificate from an untrusted CA is refused', async () => {
    const r = await send('/ok', { ca: undefined });
    assert.equal(r.ok, false);
    assert.equal(r.status, null);
    assert.ok(r.error && r.error !== 'timeout', String(r.error));
  });
});
