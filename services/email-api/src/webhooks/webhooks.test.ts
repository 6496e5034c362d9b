import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createServer as createTcpServer } from 'node:net';
import { signatureValid, TestReceiver } from './receiver.test-support.js';
import { sendWebhook } from './sender.js';
import { checkWebhookTarget, type Lookup } from './url-guard.js';

/** A lookup that answers from a table and is never allowed to reach a real resolver. */
const table =
  (answers: Record<string, string[]>): Lookup =>
  async (host) => (answers[host] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

// The guard only classifies: the lookups below are a table, and no test here connects to
// any address but 127.0.0.1 (the public-looking addresses are inputs, never dialled).
describe('webhook URL guard', () => {
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
    const lookup = table({ ...Object.fromEntries(Object.entries(classes).map(([k, a]) => [`${k.toLowerCase()}.example.test`, [a]])), 'mixed.example.test': ['93.184.216.34', '10.0.0.1'], 'public.example.test': ['93.184.216.34'] });
    for (const name of Object.keys(classes)) {
      const r = await checkWebhookTarget(`https://${name.toLowerCase()}.example.test/hook`, { allowInsecure: false, lookup });
      assert.deepEqual([r.ok, r.ok ? null : r.problem], [false, 'private_address'], name);
    }
    for (const literal of ['https://127.0.0.1/h', 'https://[::1]/h', 'https://169.254.169.254/latest/meta-data']) {
      const r = await checkWebhookTarget(literal, { allowInsecure: false, lookup });
      assert.equal(r.ok ? null : r.problem, 'private_address', literal);
    }
    const mixed = await checkWebhookTarget('https://mixed.example.test/h', { allowInsecure: false, lookup });
    assert.equal(mixed.ok ? null : mixed.problem, 'private_address', 'one private address among public ones is enough to refuse');
    const ok = await checkWebhookTarget('https://public.example.test/h', { allowInsecure: false, lookup });
    assert.ok(ok.ok);
    assert.deepEqual(ok.target, { address: '93.184.216.34', family: 4 });
  });

  test('scheme, credentials and resolution are checked; the insecure setting allows http and loopback', async () => {
    const lookup = table({ 'local.example.test': ['127.0.0.1'] });
    const cases: Array<[string, string]> = [
      ['not a url', 'invalid_url'],
      ['http://public.example.test/h', 'not_https'],
      ['ftp://public.example.test/h', 'not_https'],
      ['https://user:pw@public.example.test/h', 'credentials'],
      ['https://nowhere.example.test/h', 'unresolvable'],
    ];
    for (const [url, problem] of cases) {
      const r = await checkWebhookTarget(url, { allowInsecure: false, lookup });
      assert.equal(r.ok ? null : r.problem, problem, url);
    }
    const dev = await checkWebhookTarget('http://local.example.test:8080/h', { allowInsecure: true, lookup });
    assert.ok(dev.ok);
    assert.equal(dev.target.address, '127.0.0.1');
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
  // The URL names a host that no resolver knows: the connection goes to the pinned, checked address.
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
