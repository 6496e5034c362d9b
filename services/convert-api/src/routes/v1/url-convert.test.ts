import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Converter } from '@mailconv/converter';
import { findProjectRoot } from '@mailconv/platform';
import { startDnsServer, testBackends } from '@mailconv/platform/testing';
import { useConvertApp } from './api.test-support.js';

const run = promisify(execFile);
const FONT = '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf';
const PNG = join(findProjectRoot(), 'packages', 'converter', 'test', 'fixtures', 'sample.png');

/**
 * URL → PDF (issue 22): the page and every sub-resource come through the egress guard. Every
 * address here is on loopback: the page server is 127.0.0.2, the one non-public address the
 * operator's allow list (`CONVERT_URL_ALLOW`) admits; the "internal service" is a TCP trap on
 * 127.0.0.1 that must never see a connection; names are answered by a dnsmasq of the test's own;
 * and `CONVERT_URL_RESTRICT_TO` fences every connection to loopback whatever else happens.
 */
let trap: TcpServer;
let trapPort = 0;
let trapConnections = 0;
let pages: Server;
let pagePort = 0;
const pageRequests: string[] = [];
/** The Authorization headers the page server saw (a URL import's own headers). */
const seenAuth: string[] = [];
let dns: Awaited<ReturnType<typeof startDnsServer>>;
let converter: Converter;
let work: string;
const env: Record<string, string> = {};

/** The page: styles, a web font, an image and data from its own server; every way out it can think of aimed at the trap. */
function reportPage(): string {
  const t = (path: string) => `http://127.0.0.1:${trapPort}/${path}`;
  const attempts = [
    `<img src="${t('literal')}">`,
    `<img src="http://internal.test:${trapPort}/name">`,
    `<img src="http://2130706433:${trapPort}/decimal">`,
    `<img src="http://0x7f.1:${trapPort}/hex">`,
    `<img src="http://0177.0.0.1:${trapPort}/octal">`,
    `<img src="http://[::ffff:127.0.0.1]:${trapPort}/mapped">`,
    `<img src="HTTP://127.0.0.1:${trapPort}/upper">`,
    `<img src="http://0.0.0.0:${trapPort}/zero">`,
    `<img src="/to?u=${encodeURIComponent(t('redirected'))}">`,
    `<img src="http://rebind.test:${trapPort}/rebind">`,
    `<img src="http://metadata.test/latest/meta-data/">`,
    `<img src="http://169.254.169.254/latest/meta-data/">`,
    `<iframe src="file:///etc/passwd"></iframe>`,
    `<iframe src="view-source:file:///etc/passwd"></iframe>`,
    `<iframe src="chrome://version"></iframe>`,
    `<iframe src="${t('frame')}"></iframe>`,
    `<link rel="prefetch" href="${t('prefetch')}">`,
  ].join('\n');
  return `<!doctype html><html><head><title>Quarterly report</title>
<link rel="stylesheet" href="style.css">
<style>@font-face { font-family: Remote; src: url(/fonts/remote.ttf); } .f { font-family: Remote; }</style>
</head><body>
<div class="band"></div>
<p class="f">Fonts: <span id="font">FONT-MISSING</span></p>
<p>Image: <span id="img">IMG-MISSING</span></p>
<p>Data: <span id="data">DATA-MISSING</span></p>
<img id="logo" src="images/logo.png" width="40">
${attempts}
<script>
  fetch('data.json').then((r) => r.json()).then((d) => { document.getElementById('data').textContent = d.line; });
  document.fonts.load('12px Remote').then((f) => { document.getElementById('font').textContent = f.length ? 'FONT-OK' : 'FONT-NONE'; });
  const logo = document.getElementById('logo');
  const shown = () => { document.getElementById('img').textContent = logo.naturalWidth > 0 ? 'IMG-OK' : 'IMG-BROKEN'; };
  logo.complete ? shown() : logo.addEventListener('load', shown);
  for (const u of ['${t('fetch')}', 'http://internal.test:${trapPort}/fetch-name', 'file:///etc/passwd']) fetch(u).catch(() => {});
  try { const x = new XMLHttpRequest(); x.open('GET', '${t('xhr')}'); x.send(); } catch {}
  try { new WebSocket('ws://127.0.0.1:${trapPort}/ws'); } catch {}
  try { navigator.sendBeacon('${t('beacon')}', 'x'); } catch {}
  try { navigator.serviceWorker.register('/sw.js').catch(() => {}); } catch {}
  try { window.open('${t('popup')}'); } catch {}
</script></body></html>`;
}

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'url-convert-test-'));
  trap = createTcpServer((socket) => {
    trapConnections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => trap.listen(0, '127.0.0.1', resolve));
  trapPort = (trap.address() as AddressInfo).port;
  const font = existsSync(FONT) ? await readFile(FONT) : null;
  const png = await readFile(PNG);
  pages = createHttpServer((req, res) => {
    pageRequests.push(req.url ?? '');
    if (req.headers.authorization) seenAuth.push(req.headers.authorization);
    const u = new URL(req.url ?? '/', 'http://pages.test');
    const send = (type: string, body: string | Buffer) => void res.writeHead(200, { 'content-type': type }).end(body);
    if (u.pathname === '/report') return send('text/html; charset=utf-8', reportPage());
    if (u.pathname === '/style.css') return send('text/css', ".band { background: #1e90ff; height: 40px; } .band::after { content: 'CSS-LOADED'; color: #fff; }");
    if (u.pathname === '/fonts/remote.ttf' && font) return send('font/ttf', font);
    if (u.pathname === '/images/logo.png') return send('image/png', png);
    if (u.pathname === '/data.json') return send('application/json', JSON.stringify({ line: 'DATA-FETCHED' }));
    if (u.pathname === '/hang') return void res.writeHead(200, { 'content-type': 'text/html' }).write('<p>');
    if (u.pathname === '/to') return void res.writeHead(302, { location: u.searchParams.get('u') ?? '/' }).end();
    return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.2', resolve));
  pagePort = (pages.address() as AddressInfo).port;
  dns = await startDnsServer([
    { host: 'pages.test', address: '127.0.0.2' },
    { host: 'internal.test', address: '127.0.0.1' },
    { host: 'rebind.test', address: '127.0.0.2' },
    { host: 'rebind.test', address: '127.0.0.1' },
    { host: 'metadata.test', address: '169.254.169.254' },
  ]);
  Object.assign(env, {
    CONVERT_URL_ALLOW: '127.0.0.2/32',
    CONVERT_URL_RESTRICT_TO: '127.0.0.0/8,::1/128',
    CONVERT_DNS_SERVERS: dns.server,
    CONVERT_URL_TIMEOUT_SECONDS: '2',
  });
  converter = await Converter.create({ workDir: join(work, 'engine') });
});

after(async () => {
  await converter.close();
  pages.closeAllConnections();
  await Promise.all([new Promise((r) => pages.close(r)), new Promise((r) => trap.close(r)), dns.close()]);
  await rm(work, { recursive: true, force: true });
});

for (const backend of testBackends()) {
  describe(`URL → PDF through the egress guard on ${backend}`, () => {
    const fx = useConvertApp(backend, { storage: () => join(work, `storage-${backend}`), converter: () => converter, email: `url-${backend}@example.com`, env });
    const convert = (body: Record<string, unknown>) =>
      fx.app.inject({ method: 'POST', url: '/api/v1/convert?wait=60', headers: { authorization: `Bearer ${fx.key}` }, payload: body });

    test('a page from a URL prints with its own stylesheet, font, image and data; every way to the internal address is refused, and it sees no connection', async () => {
      pageRequests.length = 0;
      const res = await convert({ url: `http://pages.test:${pagePort}/report`, target_format: 'pdf' });
      assert.equal(res.statusCode, 200, res.body);
      const rec = res.json();
      assert.equal(rec.status, 'completed', JSON.stringify(rec.error));
      assert.deepEqual([rec.source.format, rec.source.url, rec.output.engines], ['html', `http://pages.test:${pagePort}/report`, ['chromium']]);
      assert.equal(rec.output.filename, 'report.pdf');
      // The record counts what the page was refused: at least the trap's images, frames and scripted requests.
      assert.ok(rec.output.blocked_requests >= 12, `blocked_requests: ${rec.output.blocked_requests}`);
      const dl = await fx.app.inject({ method: 'GET', url: `/api/v1/download/${rec.download_token}`, headers: { authorization: `Bearer ${fx.key}` } });
      const pdf = join(work, `report-${backend}.pdf`);
      await import('node:fs/promises').then((f) => f.writeFile(pdf, dl.rawPayload));
      const text = (await run('pdftotext', ['-layout', pdf, '-'])).stdout;
      for (const seen of ['CSS-LOADED', 'DATA-FETCHED', 'IMG-OK', ...(existsSync(FONT) ? ['FONT-OK'] : [])]) assert.match(text, new RegExp(seen), `${seen} in:\n${text}`);
      for (const path of ['/report', '/style.css', '/images/logo.png', '/data.json']) assert.ok(pageRequests.includes(path), `${path} fetched: ${pageRequests.join(' ')}`);
      // The redirect was fetched (from the page server) and its target refused.
      assert.ok(pageRequests.some((p) => p.startsWith('/to?')));
      assert.equal(trapConnections, 0, 'the internal address never saw a connection');
    });

    test('a URL imported as an upload (JSON, extension): stored and hashed like any upload, the caller\'s headers sent to its origin only; a one-step job from a URL; forbidden headers refused', async () => {
      pageRequests.length = 0;
      seenAuth.length = 0;
      const res = await fx.app.inject({
        method: 'POST',
        url: '/api/v1/upload',
        headers: { authorization: `Bearer ${fx.key}` },
        payload: { url: `http://pages.test:${pagePort}/data.json`, filename: 'numbers.json', headers: { Authorization: 'Bearer page-secret' } },
      });
      assert.equal(res.statusCode, 201, res.body);
      const up = res.json();
      assert.deepEqual([up.filename, up.format, up.source_url], ['numbers.json', 'json', `http://pages.test:${pagePort}/data.json`]);
      assert.equal(up.sha256, createHash('sha256').update(JSON.stringify({ line: 'DATA-FETCHED' })).digest('hex'));
      assert.deepEqual(seenAuth, ['Bearer page-secret'], 'the header reached the URL\'s own server');
      const job = await fx.app.inject({ method: 'POST', url: '/api/v1/jobs', headers: { authorization: `Bearer ${fx.key}` }, payload: { url: `http://pages.test:${pagePort}/report`, target_format: 'png' } });
      assert.equal(job.statusCode, 202, job.body);
      let rec = job.json();
      for (let i = 0; i < 120 && (rec.status === 'queued' || rec.status === 'processing'); i++) {
        await new Promise((r) => setTimeout(r, 500));
        rec = (await fx.app.inject({ method: 'GET', url: `/api/v1/jobs/${rec.id}`, headers: { authorization: `Bearer ${fx.key}` } })).json();
      }
      assert.deepEqual([rec.status, rec.output?.format, rec.source.url], ['completed', 'png', `http://pages.test:${pagePort}/report`], JSON.stringify(rec.error));
      for (const header of ['Host', 'Content-Length', 'Proxy-Authorization', 'Transfer-Encoding']) {
        const bad = await fx.app.inject({ method: 'POST', url: '/api/v1/upload', headers: { authorization: `Bearer ${fx.key}` }, payload: { url: `http://pages.test:${pagePort}/data.json`, headers: { [header]: 'x' } } });
        assert.deepEqual([bad.statusCode, bad.json().field], [400, 'headers'], header);
      }
      const newline = await fx.app.inject({ method: 'POST', url: '/api/v1/upload', headers: { authorization: `Bearer ${fx.key}` }, payload: { url: `http://pages.test:${pagePort}/data.json`, headers: { 'X-A': 'a\r\nX-B: b' } } });
      assert.equal(newline.statusCode, 400);
      assert.equal(trapConnections, 0);
    });

    test('refused addresses are 400 naming url; unreachable answers are 422 fetch_failed; nothing is charged or stored', async () => {
      const refused = [
        `http://127.0.0.1:${trapPort}/`,
        `http://internal.test:${trapPort}/`,
        `http://2130706433:${trapPort}/`,
        `http://[::ffff:7f00:1]:${trapPort}/`,
        `http://rebind.test:${trapPort}/`,
        'http://metadata.test/latest/meta-data/',
        'http://169.254.169.254/latest/meta-data/',
        `http://pages.test:${pagePort}/to?u=${encodeURIComponent(`http://127.0.0.1:${trapPort}/`)}`,
        'file:///etc/passwd',
        'ftp://pages.test/x',
        `http://user:pw@pages.test:${pagePort}/report`,
        'not a url',
      ];
      for (const url of refused) {
        const res = await convert({ url, target_format: 'pdf' });
        assert.deepEqual([res.statusCode, res.json().error, res.json().field], [400, 'invalid_request', 'url'], `${url}: ${res.body}`);
      }
      for (const [url, reason] of [
        [`http://pages.test:${pagePort}/missing`, 'http_404'],
        [`http://pages.test:${pagePort}/hang`, 'timeout'],
        ['http://nowhere.test/', 'unresolvable'],
      ] as const) {
        const res = await convert({ url, target_format: 'pdf' });
        assert.deepEqual([res.statusCode, res.json().error, res.json().reason], [422, 'fetch_failed', reason], `${url}: ${res.body}`);
      }
      const both = await convert({ url: `http://pages.test:${pagePort}/report`, upload_id: 'upl_x', target_format: 'pdf' });
      assert.deepEqual([both.statusCode, both.json().error], [400, 'invalid_request']);
      const neither = await convert({ target_format: 'pdf' });
      assert.deepEqual([neither.statusCode, neither.json().error], [400, 'invalid_request']);
      const account = await fx.app.inject({ method: 'GET', url: '/api/v1/account/usage', headers: { authorization: `Bearer ${fx.key}` } });
      assert.equal(account.json().quota.used, 2, `only the two conversions that ran are charged: ${account.body}`);
      assert.equal(trapConnections, 0);
    });
  });
}
