// The Chromium engine (issue 22): fidelity against the browser's own `--print-to-pdf`, the
// page's isolation (nothing it asks for outside its own file is fetched), and the pool's
// recovery from a crashed or a stuck browser. Every outside target is on loopback, and the
// reference browser runs in the same network-less sandbox as the engine. Bounded: one
// browser of the pool, a 20 s time-out per conversion (6 s on the pool tests' own converter
// and browser), every wait with a deadline.
import assert from 'node:assert/strict';
import { readFile, mkdir, writeFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import { Converter } from './converter.js';
import { CHROMIUM_BIN, CHROMIUM_OFFLINE_FLAGS } from './engines/chromium-pool.js';
import type { ChromiumEngine } from './engines/chromium.engine.js';
import { descendants, ownForSandbox, runSandboxed } from './exec/exec.js';
import { pdfPages, scratchDir, tool, toolBytes } from './testing/tools.js';

let dir: string;
let conv: Converter;
let n = 0;
const engine = (c = conv) => (c as unknown as { engines: Map<string, ChromiumEngine> }).engines.get('chromium')!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/** SIGKILLs the pool's browser and everything under it; false when it has none running. */
function killBrowser(c = conv): boolean {
  const root = (engine(c).pool as unknown as { slots: Array<{ proc?: { pid?: number } } | null> }).slots[0]?.proc?.pid;
  if (!root) return false;
  for (const pid of [...descendants(root)].reverse()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  return true;
}

before(async () => {
  dir = await scratchDir('conv-chromium-');
  conv = await Converter.create({ workDir: join(dir, 'work'), timeoutMs: 20_000, candidatePairs: true, chromium: { instances: 1, pagesPerInstance: 2 } });
});
after(async () => {
  await conv.close();
  await rm(dir, { recursive: true, force: true });
});

/** A styled invoice: a flex header in brand colour, CSS-grid cards, a striped table, inline SVG, a web font, a line written by a script. */
async function invoice(): Promise<string> {
  const font = (await readFile('/usr/share/fonts/truetype/liberation2/LiberationSerif-Bold.ttf')).toString('base64');
  return `<!doctype html><html><head><meta charset="utf-8"><title>Invoice 42</title><style>
@font-face{font-family:Brand;src:url(data:font/ttf;base64,${font}) format("truetype")}
@page{size:A4;margin:10mm}
body{font-family:sans-serif;margin:0}
header{display:flex;justify-content:space-between;align-items:center;background:#1f6feb;color:#fff;padding:24px;font-family:Brand}
.cards{display:grid;grid-template-columns:repeat(3,1fr);gap:12px;padding:16px}
.card{background:#ffd33d;padding:12px;border-radius:8px}
table{width:100%;border-collapse:collapse} thead tr{background:#24292f;color:#fff} tbody tr:nth-child(even){background:#eaeef2}
td,th{padding:6px}
</style></head><body>
<header><div>ACME Ltd</div><div>Invoice 42</div></header>
<div class="cards"><div class="card">Due 2026-12-01</div><div class="card">Paid 0.00</div><div class="card">Total 6.00</div></div>
<svg width="200" height="60"><rect width="200" height="60" fill="#2da44e"/><text x="10" y="38" fill="#fff">inline svg</text></svg>
<table><thead><tr><th>Item</th><th>Price</th></tr></thead><tbody>
<tr><td>Widget</td><td>1.00</td></tr><tr><td>Gadget</td><td>2.00</td></tr><tr><td>Gizmo</td><td>3.00</td></tr></tbody></table>
<p id="scripted"></p>
<script>document.getElementById('scripted').textContent = 'Thank you (written by a script)';</script>
</body></html>`;
}

async function convert(html: string, target: string, name = 'page', options?: Record<string, unknown>, c = conv) {
  const input = join(dir, `${n}-${name}.html`);
  await writeFile(input, html);
  return c.convert({ inputPath: input, sourceFormat: 'html', targetFormat: target, ...(options ? { options } : {}), outputPath: join(dir, 'out', `${n++}-${name}.${target}`) });
}

/** Page 1 of a PDF as raw RGB at 50 dpi. */
async function raster(pdf: string): Promise<{ data: Buffer; width: number; height: number }> {
  const png = toolBytes('/usr/bin/pdftoppm', ['-r', '50', '-f', '1', '-l', '1', '-png', pdf]);
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

describe('Chromium: fidelity', () => {
  test('a styled invoice → PDF matches the browser\'s own --print-to-pdf of the same file (grid, flex, colours, SVG, web font, script)', { timeout: 120_000 }, async () => {
    const html = await invoice();
    const r = await convert(html, 'pdf', 'invoice');
    if (!r.ok) assert.fail(JSON.stringify(r.error));
    assert.deepEqual(r.engines, ['chromium']);
    assert.equal(pdfPages(r.output.path), 1);
    const text = tool('/usr/bin/pdftotext', [r.output.path, '-']);
    for (const words of ['ACME Ltd', 'Total 6.00', 'Gizmo', 'inline svg', 'Thank you (written by a script)']) assert.ok(text.includes(words), `${words} in ${text}`);
    assert.ok(!/^Invoice 42\n\nACME/m.test(text), 'the <title> is not printed as a heading');
    assert.match(tool('/usr/bin/pdffonts', [r.output.path]), /LiberationSerif-Bold/, 'the web font is embedded');

    // The reference: the same file printed by the same browser's CLI, in the same network-less sandbox.
    const ref = join(dir, 'reference');
    await mkdir(ref);
    await ownForSandbox(ref);
    await writeFile(join(ref, 'invoice.html'), html);
    const printed = await runSandboxed(CHROMIUM_BIN, ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', ...CHROMIUM_OFFLINE_FLAGS,
      '--no-pdf-header-footer', `--user-data-dir=${ref}/profile`, `--print-to-pdf=${ref}/invoice.pdf`, `file://${ref}/invoice.html`], { cwd: ref, timeoutMs: 60_000, maxMemoryBytes: 4 * 1024 ** 3 });
    assert.equal(printed.exitCode, 0, printed.stderr.slice(-500));
    const [ours, theirs] = await Promise.all([raster(r.output.path), raster(join(ref, 'invoice.pdf'))]);
    assert.deepEqual([ours.width, ours.height], [theirs.width, theirs.height]);
    let diff = 0;
    for (let i = 0; i < ours.data.length; i++) diff += Math.abs(ours.data[i]! - theirs.data[i]!);
    const mean = diff / ours.data.length;
    assert.ok(mean < 2, `mean difference per channel ${mean.toFixed(3)} (0–255)`);
    // And it is the designed page, not a word processor's: the header's brand blue at its top left.
    const at = (x: number, y: number) => [...ours.data.subarray((y * ours.width + x) * 3, (y * ours.width + x) * 3 + 3)];
    // (inside the 10 mm page margin: 20 px at 50 dpi)
    assert.deepEqual(at(30, 30).map((v) => Math.round(v / 16)), [0x1f, 0x6f, 0xeb].map((v) => Math.round(v / 16)), `header colour ${at(30, 30)}`);
  });

  test('html → png, jpg, webp: a screenshot with the page\'s colours', { timeout: 60_000 }, async () => {
    const html = await invoice();
    for (const target of ['png', 'jpg', 'webp']) {
      const r = await convert(html, target, 'shot');
      if (!r.ok) assert.fail(`${target}: ${JSON.stringify(r.error)}`);
      const { data, info } = await sharp(r.output.path).removeAlpha().raw().toBuffer({ resolveWithObject: true });
      assert.equal(info.width, 1280, target);
      const px = [...data.subarray((10 * info.width + 10) * 3, (10 * info.width + 10) * 3 + 3)];
      assert.ok(Math.abs(px[0]! - 0x1f) < 12 && Math.abs(px[1]! - 0x6f) < 12 && Math.abs(px[2]! - 0xeb) < 12, `${target}: header colour ${px}`);
    }
  });
});

describe('Chromium: nothing leaves the job', () => {
  let listener: Server;
  let hits = 0;
  let port = 0;
  before(async () => {
    listener = createServer((s) => {
      hits++;
      s.destroy();
    });
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    port = (listener.address() as { port: number }).port;
  });
  after(() => new Promise<void>((r) => listener.close(() => r())));

  test('every request the page makes beyond its own file is refused and counted: loopback, file:, view-source:, chrome:, another job\'s folder, fetch, XHR, WebSocket, iframes, prefetch, service workers, new windows, downloads', { timeout: 60_000 }, async () => {
    // Another job's folder, with a secret in it.
    const other = join(dir, 'work', 'job-cnv_other-abc123');
    await mkdir(other, { recursive: true });
    await writeFile(join(other, 'secret.txt'), 'TOP-SECRET-OF-ANOTHER-ACCOUNT');
    const local = `http://127.0.0.1:${port}`;
    const html = `<!doctype html><html><head>
<link rel="stylesheet" href="${local}/style.css"><link rel="prefetch" href="${local}/prefetch"><link rel="icon" href="${local}/favicon.ico">
</head><body><h1>isolation</h1>
<img src="${local}/pixel.png"><img src="HTTP://127.0.0.1:${port}/upper.png"><img src="http://[::ffff:127.0.0.1]:${port}/mapped.png"><img src="http://2130706433:${port}/decimal.png"><img src="http://0x7f.0.0.1:${port}/hex.png"><img src="http://0177.0.0.1:${port}/octal.png"><img src="http://0.0.0.0:${port}/zero.png">
<img src="file:///etc/passwd"><img src="file://${other}/secret.txt">
<iframe src="file:///etc/hostname"></iframe><iframe src="view-source:file:///etc/hostname"></iframe><iframe src="chrome://version"></iframe><iframe src="${local}/frame"></iframe>
<ul id="log"></ul>
<script>
const log = (t) => { const li = document.createElement('li'); li.textContent = t; document.getElementById('log').appendChild(li); };
const tries = [
  ['fetch', () => fetch('${local}/fetch').then(() => 'LEAK')],
  ['fetch-file', () => fetch('file://${other}/secret.txt').then((r) => r.text())],
  ['xhr', () => new Promise((ok, ko) => { const x = new XMLHttpRequest(); x.open('GET', '${local}/xhr'); x.onload = () => ok('LEAK'); x.onerror = () => ko(new Error('x')); x.send(); })],
  ['websocket', () => new Promise((ok, ko) => { const w = new WebSocket('ws://127.0.0.1:${port}/ws'); w.onopen = () => ok('LEAK'); w.onerror = () => ko(new Error('w')); })],
  ['beacon', () => Promise.resolve(navigator.sendBeacon('${local}/beacon', 'x') ? 'queued' : 'refused')],
  ['service-worker', () => navigator.serviceWorker ? navigator.serviceWorker.register('/sw.js').then(() => 'LEAK') : Promise.reject(new Error('none'))],
  ['window-open', () => Promise.resolve(window.open('${local}/popup') ? 'opened' : 'refused')],
];
Promise.all(tries.map(([name, run]) => run().then((v) => log(name + ': ' + (typeof v === 'string' && v.includes('SECRET') ? 'LEAK' : v)), () => log(name + ': blocked')))).then(() => {
  const a = document.createElement('a'); a.href = '${local}/download.bin'; a.download = 'x.bin'; document.body.appendChild(a); a.click();
  log('done');
});
</script></body></html>`;
    const before = engine().pool.stats().blockedRequests;
    const r = await convert(html, 'pdf', 'isolation');
    if (!r.ok) assert.fail(JSON.stringify(r.error));
    const text = tool('/usr/bin/pdftotext', [r.output.path, '-']);
    assert.ok(text.includes('done'), `the page's script ran to its end: ${JSON.stringify(text)}`);
    for (const name of ['fetch', 'fetch-file', 'xhr', 'websocket', 'service-worker']) assert.match(text, new RegExp(`${name}: blocked`), `${name}: ${text}`);
    assert.ok(!text.includes('LEAK') && !text.includes('TOP-SECRET') && !/root:x:0:0/.test(text), text);
    assert.equal(hits, 0, 'no connection reached the loopback listener');
    const blocked = engine().pool.stats().blockedRequests - before;
    assert.ok(blocked >= 10, `blocked requests counted: ${blocked}`);
    assert.equal(r.output.blocked_requests, blocked, 'the conversion\'s own count, for its record');
    const clean = await convert('<p>nothing asked for</p>', 'pdf', 'clean');
    assert.ok(clean.ok && clean.output.blocked_requests === 0, JSON.stringify(clean));
  });
});

describe('Chromium: the pool', () => {
  // A converter of its own with a short time-out: the killed render below can use up most of
  // it, and the stuck page is stopped soon.
  const SHORT_MS = 6000;
  let short: Converter;
  before(async () => {
    short = await Converter.create({ workDir: join(dir, 'work-short'), timeoutMs: SHORT_MS, candidatePairs: true, chromium: { instances: 1, pagesPerInstance: 2 } });
  });
  after(async () => {
    await short?.close();
  });

  test('a browser killed mid-render is replaced and the render retried on the new one with its whole time-out; a page that never finishes its script is stopped at the time-out, and the pool goes on', { timeout: 120_000 }, async () => {
    assert.ok((await convert('<p>warm</p>', 'pdf', 'warm', undefined, short)).ok);
    const pool = engine(short).pool;
    // Issue 44: the browser dies when the render has used most of its time-out, and on the new
    // browser the page still needs 1.5 s — more than the first attempt left over, much less
    // than a whole time-out. The render's script runs until `until`, 2 s past the kill (room
    // for a late timer here), so the retry needs 1.5–2 s of its 6.
    const t0 = Date.now();
    const killAt = t0 + SHORT_MS - 1500;
    const until = killAt + 2000;
    const slow = `<p>slow page</p><script>const end = Math.max(${until}, Date.now() + 1500); while (Date.now() < end) {}</script>`;
    const restartsBefore = pool.stats().restarts;
    const pending = convert(slow, 'pdf', 'slow', undefined, short);
    while (pool.stats().busy === 0 && Date.now() < killAt) await sleep(20);
    assert.equal(pool.stats().busy, 1, 'the render is on the browser before it is killed');
    await sleep(killAt - Date.now());
    assert.ok(killBrowser(short), 'a browser to kill');
    const r = await pending;
    if (!r.ok) assert.fail(`the retry on a new browser did not convert: ${JSON.stringify(r.error)}`);
    assert.deepEqual(r.engines, ['chromium']);
    assert.match(tool('/usr/bin/pdftotext', [r.output.path, '-']), /slow page/);
    assert.ok(pool.stats().restarts > restartsBefore, 'the dead browser was replaced');

    const t1 = Date.now();
    const stuck = await convert('<p>stuck</p><script>for (;;) {}</script>', 'pdf', 'stuck', undefined, short);
    assert.ok(!stuck.ok && stuck.error.code === 'conversion_failed', JSON.stringify(stuck));
    assert.ok(Date.now() - t1 < SHORT_MS + 20_000, `stopped after ${Date.now() - t1} ms`);
    const next = await convert('<p>after the stuck page</p>', 'png', 'after', undefined, short);
    assert.ok(next.ok, JSON.stringify(next));
  });

  test('a browser that dies on every attempt: the page is still converted, plainly, by the document engines (pandoc → LibreOffice), and the record says so; not when page options were asked for', { timeout: 180_000 }, async () => {
    assert.ok((await convert('<p>warm</p>', 'pdf', 'warm2')).ok);
    // Kill whatever browser the pool has, every 100 ms, while the page (a second of script) renders.
    let killing = true;
    const killer = (async () => {
      while (killing) {
        killBrowser();
        await sleep(100);
      }
    })();
    const page = '<!doctype html><title>Fallback</title><h1>Plain but converted</h1><script>const end = Date.now() + 1000; while (Date.now() < end) {}</script>';
    try {
      const r = await convert(page, 'pdf', 'fallback');
      if (!r.ok) assert.fail(JSON.stringify(r.error));
      assert.deepEqual(r.engines, ['pandoc', 'libreoffice']);
      assert.match(tool('/usr/bin/pdftotext', [r.output.path, '-']), /Plain but converted/);
      const asked = await conv.convert({ inputPath: join(dir, `${n - 1}-fallback.html`), sourceFormat: 'html', targetFormat: 'pdf', options: { paper: 'Letter' }, outputPath: join(dir, 'out', `${n++}-fallback-letter.pdf`) });
      assert.ok(!asked.ok && /crashed/.test(asked.error.message), `page options need the browser: ${JSON.stringify(asked)}`);
    } finally {
      killing = false;
      await killer;
    }
    const after = await convert('<p>the pool recovers</p>', 'pdf', 'recovered');
    assert.ok(after.ok && after.engines.includes('chromium'), JSON.stringify(after));
  });
});

describe('Chromium: page options', () => {
  const long = `<!doctype html><html><head><title>Report</title><style>section{height:250mm;break-after:page}</style></head><body>${[1, 2, 3].map((i) => `<section><h1>Part ${i}</h1></section>`).join('')}</body></html>`;
  const run = async (html: string, target: string, options: Record<string, unknown>) => {
    const input = join(dir, `${n}-opts.html`);
    await writeFile(input, html);
    return conv.convert({ inputPath: input, sourceFormat: 'html', targetFormat: target, options, outputPath: join(dir, 'out', `${n++}-opts.${target}`) });
  };
  const pageSize = (pdf: string) => /Page size:\s+([\d.]+) x ([\d.]+) pts/.exec(tool('/usr/bin/pdfinfo', [pdf]))!.slice(1, 3).map((v) => Math.round(Number(v)));

  test('header and footer templates: page number, total pages and title on every page (read back by pdftotext)', { timeout: 60_000 }, async () => {
    const r = await run(long, 'pdf', {
      header_html: '<div style="font-size:9px;width:100%;text-align:center"><span class="title"></span></div>',
      footer_html: '<div style="font-size:9px;width:100%;text-align:center">Page <span class="pageNumber"></span> of <span class="totalPages"></span></div>',
    });
    if (!r.ok) assert.fail(JSON.stringify(r.error));
    const pages = pdfPages(r.output.path);
    assert.ok(pages >= 3, `${pages} pages`);
    for (let p = 1; p <= pages; p++) {
      const text = tool('/usr/bin/pdftotext', ['-f', String(p), '-l', String(p), r.output.path, '-']);
      assert.match(text, new RegExp(`Page ${p} of ${pages}`), `page ${p}: ${text}`);
      assert.match(text, /Report/, `the title on page ${p}`);
    }
  });

  test('paper, landscape, margins, scale, single_page; wait_for a script\'s element; viewport width and device scale of pictures', { timeout: 90_000 }, async () => {
    const letter = await run(long, 'pdf', { paper: 'Letter', landscape: true, margin: '1in 0.5in' });
    if (!letter.ok) assert.fail(JSON.stringify(letter.error));
    assert.deepEqual(pageSize(letter.output.path), [792, 612]);
    // The request wins over the page's own @page size (Chromium would keep the CSS orientation).
    const own = await run('<style>@page { size: A4; margin: 14mm }</style><p>own page size</p>', 'pdf', { paper: 'Letter', landscape: true });
    if (!own.ok) assert.fail(JSON.stringify(own.error));
    assert.deepEqual(pageSize(own.output.path), [792, 612]);
    const custom = await run('<p>small</p>', 'pdf', { paper: '100mmx150mm', scale: 0.5 });
    if (!custom.ok) assert.fail(JSON.stringify(custom.error));
    // 100 × 150 mm is 283.5 × 425.2 pt; Chromium lays pages out in whole CSS pixels.
    const [w, h] = pageSize(custom.output.path);
    assert.ok(Math.abs(w! - 283.5) < 2 && Math.abs(h! - 425.2) < 2, `${w} × ${h} pt`);
    const single = await run(long, 'pdf', { single_page: true });
    if (!single.ok) assert.fail(JSON.stringify(single.error));
    assert.equal(pdfPages(single.output.path), 1, 'one page as tall as the document');
    const late = '<div id="root"></div><script>setTimeout(() => { const c = document.createElement("p"); c.id = "chart"; c.textContent = "chart drawn late"; document.getElementById("root").appendChild(c); }, 800)</script>';
    const waited = await run(late, 'pdf', { wait_for: '#chart' });
    if (!waited.ok) assert.fail(JSON.stringify(waited.error));
    assert.match(tool('/usr/bin/pdftotext', [waited.output.path, '-']), /chart drawn late/);
    const never = await run('<p>no chart</p>', 'pdf', { wait_for: '#never' });
    assert.ok(!never.ok && never.error.code === 'conversion_failed' && /wait_for/.test(never.error.message), JSON.stringify(never));
    const shot = await run('<body style="margin:0;background:#2da44e"><p>hi</p></body>', 'png', { viewport_width: 800, device_scale: 2 });
    if (!shot.ok) assert.fail(JSON.stringify(shot.error));
    assert.equal((await sharp(shot.output.path).metadata()).width, 1600);
  });

  test('title, author and page_range on a browser\'s PDF: the information dictionary and XMP say the title and author; only the pages asked for remain', { timeout: 60_000 }, async () => {
    const r = await convert(long, 'pdf', 'described', { title: 'Annual «report» 2026', author: 'Jane Doe', page_range: '2-3', header_html: '<div style="font-size:9px">Header: <span class="title"></span></div>' });
    if (!r.ok) assert.fail(JSON.stringify(r.error));
    assert.deepEqual(r.engines, ['chromium', 'qpdf', 'pikepdf']);
    const info = tool('/usr/bin/pdfinfo', [r.output.path]);
    assert.match(info, /Title:\s+Annual «report» 2026/);
    assert.match(info, /Author:\s+Jane Doe/);
    assert.match(info, /Pages:\s+2\b/);
    const xmp = tool('/usr/bin/pdfinfo', ['-meta', r.output.path]);
    assert.match(xmp, /Jane Doe/);
    const text = tool('/usr/bin/pdftotext', [r.output.path, '-']);
    assert.match(text, /Part 2/);
    assert.doesNotMatch(text, /Part 1/);
    assert.match(text, /Header: Annual «report» 2026/, 'the header\'s title span says the title asked for');
    // With the archive preset after it: PDF/A keeps them.
    const archived = await convert(long, 'pdf', 'archived', { title: 'Kept in PDF/A', author: 'Jane Doe', preset: 'archive' });
    if (!archived.ok) assert.fail(JSON.stringify(archived.error));
    assert.match(tool('/usr/bin/pdfinfo', [archived.output.path]), /Title:\s+Kept in PDF\/A/);
    const bad = conv.plan('html', 'png', { title: 'x' });
    assert.ok(!bad.ok && bad.error.field === 'title', 'title is for PDF outputs');
    const control = conv.plan('html', 'pdf', { author: 'a\nb' });
    assert.ok(!control.ok && control.error.field === 'author');
  });

  test('wrong page options are a 400 naming the field; page options on another pair too', () => {
    for (const [options, field, target, source] of [
      [{ paper: 'B7' }, 'paper', 'pdf', 'html'],
      [{ margin: '1 2 3 4 5' }, 'margin', 'pdf', 'html'],
      [{ scale: 3 }, 'scale', 'pdf', 'html'],
      [{ media: 'tv' }, 'media', 'pdf', 'html'],
      [{ viewport_width: 10 }, 'viewport_width', 'png', 'html'],
      [{ viewport_width: 800 }, 'viewport_width', 'pdf', 'html'],
      [{ header_html: 'x'.repeat(9000) }, 'header_html', 'pdf', 'html'],
      [{ single_page: true, paper: 'A4' }, 'single_page', 'pdf', 'html'],
      [{ paper: 'A4' }, 'paper', 'pdf', 'docx'],
    ] as const) {
      const planned = conv.plan(source, target, options);
      assert.ok(!planned.ok && planned.error.code === 'invalid_request' && planned.error.field === field, `${JSON.stringify(options)}: ${JSON.stringify(planned)}`);
    }
  });
});

describe('Chromium: Markdown', () => {
  test('md → pdf through the browser: GitHub tables, highlighted code, the default stylesheet; md → png with the caller\'s css', { timeout: 60_000 }, async () => {
    const source = ['# Quarterly report', '', '| Region | Revenue |', '|---|---:|', '| North | 1,200 |', '| South | 950 |', '', '```js', 'const total = regions.reduce((a, r) => a + r.revenue, 0);', '```', '', '> Numbers are unaudited.', ''].join('\n');
    const input = join(dir, `${n}-report.md`);
    await writeFile(input, source);
    const pdf = await conv.convert({ inputPath: input, sourceFormat: 'md', targetFormat: 'pdf', outputPath: join(dir, 'out', `${n++}-report.pdf`) });
    if (!pdf.ok) assert.fail(JSON.stringify(pdf.error));
    assert.deepEqual(pdf.engines, ['chromium']);
    const text = tool('/usr/bin/pdftotext', ['-layout', pdf.output.path, '-']);
    assert.match(text, /Quarterly report/);
    assert.match(text, /North\s+1,200/, 'the table keeps its rows and columns');
    assert.match(text, /const total = regions\.reduce/);
    assert.match(tool('/usr/bin/pdfinfo', [pdf.output.path]), /Title:\s+Quarterly report/, 'the title comes from the first heading');
    // The code block's highlighting: its keyword in highlight.js's GitHub red (#d73a49), at 150 dpi.
    const png150 = toolBytes('/usr/bin/pdftoppm', ['-r', '150', '-f', '1', '-l', '1', '-png', pdf.output.path]);
    const { data, info } = await sharp(png150).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    let red = 0;
    for (let i = 0; i < info.width * info.height; i++) if (Math.abs(data[i * 3]! - 0xd7) < 24 && Math.abs(data[i * 3 + 1]! - 0x3a) < 30 && Math.abs(data[i * 3 + 2]! - 0x49) < 30) red++;
    assert.ok(red > 10, `highlighted keyword pixels: ${red}`);

    const png = await conv.convert({ inputPath: input, sourceFormat: 'md', targetFormat: 'png', options: { css: 'body { background: rgb(255, 238, 0); }' }, outputPath: join(dir, 'out', `${n++}-report.png`) });
    if (!png.ok) assert.fail(JSON.stringify(png.error));
    const { data: px } = await sharp(png.output.path).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    assert.deepEqual([...px.subarray(0, 3)], [255, 238, 0], 'the caller\'s css wins');
    const tooBig = conv.plan('md', 'pdf', { css: 'x'.repeat(70_000) });
    assert.ok(!tooBig.ok && tooBig.error.field === 'css');
  });
});

describe('Chromium: a zipped site', () => {
  test('a zip with index.html, its stylesheet, web font, image and script prints as the browser shows it; paths out of the zip and links are not served; a zip without a page fails clearly', { timeout: 90_000 }, async () => {
    const site = join(dir, `${n++}-site`);
    await mkdir(join(site, 'assets', 'fonts'), { recursive: true });
    await writeFile(join(site, 'index.html'), `<!doctype html><html><head><title>Zipped report</title>
<link rel="stylesheet" href="assets/site.css"></head><body>
<div class="band"></div>
<p class="f">Font: <span id="font">FONT-MISSING</span></p>
<p>Image: <span id="img">IMG-MISSING</span></p>
<p>Escapes: <span id="escapes">ESCAPES-PENDING</span></p>
<img id="logo" src="assets/logo.png" width="40">
<script src="assets/app.js"></script>
</body></html>`);
    await writeFile(join(site, 'assets', 'site.css'), "@font-face { font-family: Zipped; src: url(fonts/face.ttf); } .f { font-family: Zipped; } .band { background: rgb(30, 144, 255); height: 60px; } .band::after { content: 'CSS-FROM-ZIP'; color: #fff; }");
    await writeFile(join(site, 'assets', 'fonts', 'face.ttf'), await readFile('/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf'));
    await writeFile(join(site, 'assets', 'logo.png'), await sharp({ create: { width: 8, height: 8, channels: 3, background: '#2da44e' } }).png().toBuffer());
    // The script reads its own files, then tries to read outside the zip: every escape must fail.
    await writeFile(join(site, 'assets', 'app.js'), `
      document.fonts.load('12px Zipped').then((f) => { document.getElementById('font').textContent = f.length ? 'FONT-FROM-ZIP' : 'FONT-NONE'; });
      const logo = document.getElementById('logo');
      const shown = () => { document.getElementById('img').textContent = logo.naturalWidth > 0 ? 'IMG-FROM-ZIP' : 'IMG-BROKEN'; };
      logo.complete ? shown() : logo.addEventListener('load', shown);
      const up = '..%2f'.repeat(16);
      const tries = ['/../../../../etc/passwd', '/%2e%2e/%2e%2e/%2e%2e/etc/passwd', '/assets/' + up + 'etc%2fpasswd', '/' + up + 'etc/passwd', '/%2fetc%2fpasswd', '/nothing-here.txt'];
      Promise.all(tries.map((u) => fetch(u).then((r) => r.ok ? r.text() : '').catch(() => ''))).then((bodies) => {
        document.getElementById('escapes').textContent = bodies.some((b) => b.includes('root:')) ? 'ESCAPED' : 'ESCAPES-REFUSED';
      });
    `);
    const zipPath = join(dir, `${n++}-site.zip`);
    tool('/usr/bin/python3', ['-c', 'import os,sys,zipfile\nz=zipfile.ZipFile(sys.argv[1],"w")\nfor r,_,fs in os.walk(sys.argv[2]):\n  for f in fs: p=os.path.join(r,f); z.write(p,os.path.relpath(p,sys.argv[2]))\nz.close()', zipPath, site]);
    const pdf = await conv.convert({ inputPath: zipPath, sourceFormat: 'zip', targetFormat: 'pdf', options: { wait_for: '#escapes:not(:empty)' }, outputPath: join(dir, 'out', `${n++}-site.pdf`) });
    if (!pdf.ok) assert.fail(JSON.stringify(pdf.error));
    assert.deepEqual(pdf.engines, ['chromium']);
    const text = tool('/usr/bin/pdftotext', ['-layout', pdf.output.path, '-']);
    for (const seen of ['CSS-FROM-ZIP', 'FONT-FROM-ZIP', 'IMG-FROM-ZIP', 'ESCAPES-REFUSED']) assert.match(text, new RegExp(seen), `${seen} in:\n${text}`);
    assert.match(tool('/usr/bin/pdfinfo', [pdf.output.path]), /Title:\s+Zipped report/);
    // The band's colour, as the stylesheet in the zip paints it.
    const { data, width } = await raster(pdf.output.path);
    let blue = 0;
    for (let i = 0; i < width * 40; i++) if (Math.abs(data[i * 3]! - 30) < 20 && Math.abs(data[i * 3 + 1]! - 144) < 20 && data[i * 3 + 2]! > 230) blue++;
    assert.ok(blue > 100, `band pixels: ${blue}`);
    const png = await conv.convert({ inputPath: zipPath, sourceFormat: 'zip', targetFormat: 'png', outputPath: join(dir, 'out', `${n++}-site.png`) });
    assert.ok(png.ok, JSON.stringify(!png.ok && png.error));

    // A zip that is not a site: a clear failure, not an empty page.
    const plain = join(dir, `${n++}-plain.zip`);
    tool('/usr/bin/python3', ['-c', 'import sys,zipfile\nz=zipfile.ZipFile(sys.argv[1],"w")\nz.writestr("notes/a.txt","hello")\nz.writestr("b.txt","x")\nz.close()', plain]);
    const none = await conv.convert({ inputPath: plain, sourceFormat: 'zip', targetFormat: 'pdf', outputPath: join(dir, 'out', `${n++}-plain.pdf`) });
    assert.ok(!none.ok);
    assert.match(none.error.message, /index\.html/);
  });
});

describe('Chromium: SVG', () => {
  test('an SVG drawn as the browser shows it, at its own size: its CSS and the caller\'s, transparent PNG, one PDF page of its size with its text; page options that mean nothing for it are refused', { timeout: 60_000 }, async () => {
    const input = join(dir, `${n++}-drawing.svg`);
    await writeFile(input, '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 240 120"><style>.band { fill: rgb(30, 144, 255); } text { font: 20px sans-serif; fill: #fff; }</style><rect class="band" width="240" height="60"/><text x="12" y="40">SVG-DRAWN</text><circle id="dot" cx="200" cy="95" r="20" fill="#2da44e"/></svg>');
    const png = await conv.convert({ inputPath: input, sourceFormat: 'svg', targetFormat: 'png', options: { css: '#dot { fill: rgb(255, 0, 0); }', device_scale: 2 }, outputPath: join(dir, 'out', `${n++}-drawing.png`) });
    if (!png.ok) assert.fail(JSON.stringify(png.error));
    assert.deepEqual(png.engines, ['chromium']);
    assert.deepEqual([png.output.width, png.output.height], [480, 240], 'the viewBox size, at device scale 2');
    const { data, info } = await sharp(png.output.path).raw().toBuffer({ resolveWithObject: true });
    const at = (x: number, y: number) => [...data.subarray((y * info.width + x) * 4, (y * info.width + x) * 4 + 4)];
    assert.deepEqual(at(4, 4), [30, 144, 255, 255], 'the SVG\'s own CSS');
    assert.deepEqual(at(400, 190), [255, 0, 0, 255], 'the caller\'s css');
    assert.equal(at(20, 230)[3], 0, 'transparent where nothing is drawn');
    const pdf = await conv.convert({ inputPath: input, sourceFormat: 'svg', targetFormat: 'pdf', outputPath: join(dir, 'out', `${n++}-drawing.pdf`) });
    if (!pdf.ok) assert.fail(JSON.stringify(pdf.error));
    assert.match(tool('/usr/bin/pdfinfo', [pdf.output.path]), /Page size:\s+180 x 90 pts/);
    assert.match(tool('/usr/bin/pdftotext', [pdf.output.path, '-']), /SVG-DRAWN/);
    for (const [field, value] of [['paper', 'A4'], ['margin', '10mm'], ['header_html', '<b>x</b>'], ['viewport_width', 800]] as const) {
      const r = conv.plan('svg', 'pdf', { [field]: value });
      assert.ok(!r.ok && r.error.field === field, `${field}: ${JSON.stringify(r)}`);
    }
  });
});
