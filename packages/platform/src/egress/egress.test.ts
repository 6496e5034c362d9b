import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { isPrivateAddress, networkFence } from './addresses.js';
import { fetchThroughGuard, readCapped } from './fetch.js';
import { checkUrl, type EgressPolicy, type Lookup } from './guard.js';

// isPrivateAddress and networkFence are pure classifiers: the addresses in these two tests
// (10.x, 100.64.x, 128.0.0.1, public ones) are inputs only and are never connected to.
test('loopback, private and reserved addresses are refused; public ones are not', () => {
  for (const a of ['127.0.0.1', '127.77.5.10', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '192.0.2.7', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fd00::2', 'fc00::1', '2001:db8::1', '::ffff:10.0.0.1', '::ffff:127.0.0.1', '::ffff:7f00:1', '0:0:0:0:0:ffff:a9fe:a9fe', 'not-an-ip',
    // IPv4-compatible and IPv4-translated IPv6 (issue 29), NAT64, 6to4, Teredo, discard-only, the newer documentation block.
    '::127.0.0.1', '::7f00:1', '::8.8.8.8', '::ffff:0:127.0.0.1', '::ffff:0:7f00:1', '0:0:0:0:ffff:0:a00:1', '64:ff9b::7f00:1', '64:ff9b:1::1', '2002:7f00:1::', '2001::1', '100::1', '3fff::1',
    // Not literal addresses in the resolver's form: refused rather than guessed.
    '0x7f000001', '127.1', '']) {
    assert.equal(isPrivateAddress(a), true, a);
  }
  for (const a of ['8.8.8.8', '172.32.0.1', '11.0.0.1', '2a00:1450:4001::1a', '::ffff:8.8.4.4', '::ffff:808:404']) {
    assert.equal(isPrivateAddress(a), false, a);
  }
});

test('fences and lists: CIDRs and single addresses of either family; an IPv4-mapped address is matched as its IPv4 one', () => {
  const fence = networkFence(['127.0.0.0/8', '::1/128', '10.1.2.3']);
  for (const a of ['127.0.0.1', '127.9.9.9', '::1', '::ffff:127.0.0.2', '::ffff:7f00:2', '10.1.2.3']) assert.equal(fence(a), true, a);
  for (const a of ['128.0.0.1', '::2', '10.1.2.4', '::127.0.0.1', 'not-an-ip']) assert.equal(fence(a), false, a);
});

// The guard only classifies here and never connects: public-looking addresses are inputs.
describe('checkUrl: every spelling of a non-public address is refused', () => {
  const noLookup: Lookup = () => Promise.reject(new Error('no lookup expected'));
  const web: EgressPolicy = { schemes: ['https:', 'http:'], lookup: noLookup };

  test('IPv4 in decimal, octal, hex and short forms, upper-case schemes, 0.0.0.0, IPv4-mapped IPv6, metadata', async () => {
    for (const url of [
      'http://127.0.0.1/', 'HTTP://127.0.0.1/', 'HTTPS://127.1/',
      'http://2130706433/', 'http://017700000001/', 'http://0x7f000001/', 'http://0x7f.0.0.1/', 'http://0177.0.0.01/', 'http://127.000.000.001/',
      'http://0.0.0.0/', 'http://0/', 'http://[::]/', 'http://[::1]/', 'http://[::ffff:127.0.0.1]/', 'http://[::ffff:7f00:1]/', 'http://[0:0:0:0:0:ffff:a9fe:a9fe]/',
      'https://[::127.0.0.1]/', 'https://[::ffff:0:127.0.0.1]/', 'https://[0::ffff:0:a9fe:a9fe]/', 'https://[64:ff9b::a9fe:a9fe]/',
      'http://169.254.169.254/latest/meta-data/', 'http://[fd00:ec2::254]/', 'http://100.100.100.200/', 'http://10.0.0.1/', 'http://[fe80::1]/',
    ]) {
      const r = await checkUrl(url, web);
      assert.equal(r.ok ? `passed (${r.target.address})` : r.problem, 'private_address', url);
    }
  });

  test('schemes other than http(s), credentials, bad URLs, deny lists and the fence', async () => {
    const cases: Array<[string, EgressPolicy, string]> = [
      ['file:///etc/passwd', web, 'scheme_not_allowed'],
      ['FILE:///etc/passwd', web, 'scheme_not_allowed'],
      ['ftp://93.184.216.34/x', web, 'scheme_not_allowed'],
      ['gopher://93.184.216.34:70/', web, 'scheme_not_allowed'],
      ['view-source:http://93.184.216.34/', web, 'scheme_not_allowed'],
      ['chrome://settings', web, 'scheme_not_allowed'],
      ['data:text/html,hi', web, 'scheme_not_allowed'],
      ['http://93.184.216.34/', { ...web, schemes: ['https:'] }, 'not_https'],
      ['http://user:pw@93.184.216.34/', web, 'credentials'],
      ['http://exa mple.com/', web, 'invalid_url'],
      ['/relative', web, 'invalid_url'],
      ['http://93.184.216.34/', { ...web, deny: networkFence(['93.184.216.0/24']) }, 'denied'],
      ['http://Internal.Corp.Example./x', { ...web, denyHosts: ['corp.example'] }, 'denied'],
      ['http://93.184.216.34/', { ...web, fence: networkFence(['127.0.0.0/8']) }, 'outside_restrict_to'],
    ];
    for (const [url, policy, problem] of cases) {
      const r = await checkUrl(url, policy);
      assert.equal(r.ok ? 'passed' : r.problem, problem, url);
    }
    const ok = await checkUrl('http://93.184.216.34/', web);
    assert.ok(ok.ok);
  });

  test('a name is judged by every address it answers; the allow list admits a network', async () => {
    const lookup: Lookup = async (host) =>
      ({
        'mixed.test': [{ address: '93.184.216.34', family: 4 }, { address: '10.0.0.1', family: 4 }],
        'mapped.test': [{ address: '::ffff:169.254.169.254', family: 6 }],
        'intranet.test': [{ address: '10.1.2.3', family: 4 }],
      })[host] ?? [];
    const r1 = await checkUrl('https://mixed.test/', { ...web, lookup });
    assert.equal(r1.ok ? 'passed' : r1.problem, 'private_address');
    const r2 = await checkUrl('https://mapped.test/', { ...web, lookup });
    assert.equal(r2.ok ? 'passed' : r2.problem, 'private_address');
    const r3 = await checkUrl('https://nowhere.test/', { ...web, lookup });
    assert.equal(r3.ok ? 'passed' : r3.problem, 'unresolvable');
    // Passed, but only classified: checkUrl never connects, and nothing here fetches it.
    const r4 = await checkUrl('https://intranet.test/', { ...web, lookup, allow: networkFence(['10.1.0.0/16']) });
    assert.ok(r4.ok);
    assert.deepEqual(r4.target, { address: '10.1.2.3', family: 4 });
  });
});

/** A loopback HTTP server that counts every connection it accepts. */
async function listen(host: string, handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; port: number; connections: () => number }> {
  const server = createServer(handler);
  let connections = 0;
  server.on('connection', (s: Socket) => {
    connections++;
    s.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, port: (server.address() as AddressInfo).port, connections: () => connections };
}

describe('fetchThroughGuard on loopback: the page server is allowed, the trap is not', () => {
  // 127.0.0.2 is the one address the operator's allow list admits; 127.0.0.1 is the "internal
  // service" no fetch may reach. The fence keeps every connection on loopback whatever happens.
  let page: Awaited<ReturnType<typeof listen>>;
  let trap: Awaited<ReturnType<typeof listen>>;
  let lookups = 0;
  const lookup: Lookup = async (host) => {
    if (host === 'page.test') return [{ address: '127.0.0.2', family: 4 }];
    if (host === 'internal.test') return [{ address: '127.0.0.1', family: 4 }];
    // A rebinding name: allowed at the first answer, the internal address at every later one.
    if (host === 'rebind.test') return [{ address: lookups++ === 0 ? '127.0.0.2' : '127.0.0.1', family: 4 }];
    return [];
  };
  const policy = (): EgressPolicy => ({ schemes: ['http:', 'https:'], allow: networkFence(['127.0.0.2/32']), fence: networkFence(['127.0.0.0/8', '::1/128']), lookup });
  const seen: Array<{ url: string; auth: string | undefined }> = [];

  before(async () => {
    trap = await listen('127.0.0.1', (_req, res) => res.end('internal secret'));
    page = await listen('127.0.0.2', (req, res) => {
      seen.push({ url: req.url ?? '', auth: req.headers.authorization });
      const u = new URL(req.url ?? '/', 'http://x');
      if (u.pathname === '/ok') return void res.end('hello');
      if (u.pathname === '/big') return void res.end(Buffer.alloc(64 * 1024, 1));
      if (u.pathname === '/hang') return void res.writeHead(200).write('partial');
      if (u.pathname === '/to') {
        res.writeHead(302, { location: u.searchParams.get('u') ?? '/' });
        return void res.end();
      }
      if (u.pathname === '/loop') {
        res.writeHead(301, { location: '/loop' });
        return void res.end();
      }
      res.writeHead(404).end();
    });
  });
  after(async () => {
    page.server.closeAllConnections();
    await Promise.all([new Promise((r) => page.server.close(r)), new Promise((r) => trap.server.close(r))]);
  });

  const get = (url: string, extra: Partial<Parameters<typeof fetchThroughGuard>[1]> = {}) => fetchThroughGuard(url, { policy: policy(), timeoutMs: 2000, maxRedirects: 3, ...extra });

  test('an allowed page is fetched from the checked address and read within its cap', async () => {
    const r = await get(`http://page.test:${page.port}/ok`);
    assert.ok(r.ok);
    assert.equal(r.address, '127.0.0.2');
    const body = await readCapped(r.body, 1024);
    r.done();
    assert.deepEqual(body.ok ? body.bytes.toString() : body.problem, 'hello');
    const big = await get(`http://page.test:${page.port}/big`);
    assert.ok(big.ok);
    const capped = await readCapped(big.body, 1024);
    big.done();
    assert.equal(capped.ok ? 'read' : capped.problem, 'too_large');
  });

  test('redirects to the internal address in any form are refused; the trap sees no connection', async () => {
    const targets = [
      `http://127.0.0.1:${trap.port}/`,
      `http://internal.test:${trap.port}/`,
      `http://2130706433:${trap.port}/`,
      `http://0x7f.1:${trap.port}/`,
      `http://[::ffff:127.0.0.1]:${trap.port}/`,
      `HTTP://127.0.0.1:${trap.port}/`,
      `file:///etc/passwd`,
    ];
    for (const target of targets) {
      const r = await get(`http://page.test:${page.port}/to?u=${encodeURIComponent(target)}`);
      assert.equal(r.ok ? `fetched ${r.url.href}` : r.problem.replace('scheme_not_allowed', 'private_address'), 'private_address', target);
    }
    const loop = await get(`http://page.test:${page.port}/loop`);
    assert.equal(loop.ok ? 'fetched' : loop.problem, 'too_many_redirects');
    assert.equal(trap.connections(), 0);
  });

  test('a rebinding name is connected to at the address that was checked, never looked up again', async () => {
    lookups = 0;
    const r = await get(`http://rebind.test:${page.port}/ok`);
    assert.ok(r.ok);
    assert.equal(r.address, '127.0.0.2');
    r.body.resume();
    r.done();
    const again = await get(`http://rebind.test:${trap.port}/ok`);
    assert.equal(again.ok ? 'fetched' : again.problem, 'private_address', 'the second answer is the internal address, refused');
    assert.equal(trap.connections(), 0);
  });

  test("the caller's headers go to the first origin only; a time-out ends a stalled body", async () => {
    seen.length = 0;
    const r = await get(`http://page.test:${page.port}/to?u=${encodeURIComponent(`http://127.0.0.2:${page.port}/ok`)}`, { headers: { authorization: 'Bearer secret' } });
    assert.ok(r.ok);
    r.body.resume();
    r.done();
    assert.deepEqual(seen.map((s) => s.auth), ['Bearer secret', undefined], 'another origin (127.0.0.2 ≠ page.test) gets no credentials');
    const slow = await get(`http://page.test:${page.port}/hang`, { timeoutMs: 300 });
    assert.ok(slow.ok);
    const body = await readCapped(slow.body, 1024);
    assert.equal(body.ok ? 'read' : body.problem, 'timeout');
  });
});
