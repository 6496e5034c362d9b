// HTML → PDF through the conversion API (its warm Chromium pool) against what people run
// instead: a cold `chromium --headless --print-to-pdf` per file — the same browser binary, in
// the same network-less engine sandbox, with the same page options (Letter paper, the
// browser's default; no backgrounds; no header or footer). Real pages: Gotenberg's own test
// pages (bench/html-pages, NOTICE.md there) and the converter's corpus HTML files.
//
// Rounds alternate A B A B (the API over every file, then the cold browser over every file,
// twice) so both see the same machine load; every output is checked with pdfinfo. The API
// time is what a client waits: upload, convert (wait), download. Target: ≥ 5× faster in total.
// The pool's memory (resident, browser and children) is read after the last round.
//
// Usage: npm run bench:html [-- --rounds N]   (build first). Ends with one `RESULT …` line.

// First: on a Node older than 22.12 this exits with one line before any native addon loads (issue 44).
import '@mailconv/platform/node-guard';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Blob } from 'node:buffer';
import { fileURLToPath } from 'node:url';
import { CHROMIUM_BIN, CHROMIUM_OFFLINE_FLAGS, ownForSandbox, runSandboxed, sandboxCapabilities } from '@mailconv/converter';
import { startConvertService } from './lib/convert-service.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const ROUNDS = Math.max(1, arg('rounds', 2));
const TARGET = 5;

// Some pages (Gotenberg's `ssrf-*`) name outside addresses on purpose: both browsers must be
// unable to reach any network — no network namespace, and a dead loopback proxy besides.
if (!sandboxCapabilities().network_isolated) throw new Error('bench:html needs the engine sandbox without network (bubblewrap or unshare -n); it is not available here');

const pages = [];
for (const folder of [join(ROOT, 'bench', 'html-pages'), join(ROOT, 'packages', 'converter', 'test', 'corpus', 'html')]) {
  for (const name of (await readdir(folder)).filter((n) => n.endsWith('.html')).sort()) pages.push({ name, path: join(folder, name) });
}

const dir = await mkdtemp(join(tmpdir(), 'bench-html-'));
await ownForSandbox(dir);
const pdfPages = (path) => {
  const r = spawnSync('/usr/bin/pdfinfo', [path], { encoding: 'utf8' });
  return r.status === 0 ? Number(/^Pages:\s+(\d+)/m.exec(r.stdout)?.[1] ?? 0) : 0;
};
/** Resident memory of a process and everything below it, in MiB. */
const treeRssMib = (pid) => {
  const children = new Map();
  for (const e of spawnSync('ps', ['-e', '-o', 'pid=,ppid=,rss='], { encoding: 'utf8' }).stdout.trim().split('\n')) {
    const [p, pp, rss] = e.trim().split(/\s+/).map(Number);
    children.set(pp, [...(children.get(pp) ?? []), { p, rss }]);
  }
  let total = 0;
  const walk = (p) => {
    for (const c of children.get(p) ?? []) {
      total += c.rss;
      walk(c.p);
    }
  };
  walk(pid);
  return total / 1024;
};

// --- the service, as a separate process on loopback --------------------------------------
const { base, auth, service, stop } = await startConvertService(dir, { maxFileBytes: 1e9 });

/** One page through the API as a client: upload, convert within the wait window, download. */
async function viaApi(page, out) {
  const form = new globalThis.FormData();
  form.append('file', new Blob([await readFile(page.path)]), page.name);
  const up = await fetch(`${base}/api/v1/upload`, { method: 'POST', headers: auth, body: form });
  if (up.status !== 201) throw new Error(`${page.name}: upload ${up.status} ${await up.text()}`);
  const { upload_id } = await up.json();
  const res = await fetch(`${base}/api/v1/convert?wait=120`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ upload_id, target_format: 'pdf', paper: 'Letter', print_background: false }),
  });
  const rec = await res.json();
  if (rec.status !== 'completed') return { ok: false, why: JSON.stringify(rec.error ?? rec) };
  const pdf = Buffer.from(await (await fetch(`${base}/api/v1/download/${rec.download_token}`, { headers: auth })).arrayBuffer());
  await writeFile(out, pdf);
  return { ok: true, engines: rec.output.engines.join('+') };
}

/** One page through a cold browser: a new process, its own profile, printed, gone. */
async function cold(page, out) {
  const work = await mkdtemp(join(dir, 'cold-'));
  await ownForSandbox(work);
  const input = join(work, 'page.html');
  await writeFile(input, await readFile(page.path));
  await ownForSandbox(input);
  const r = await runSandboxed(CHROMIUM_BIN, ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', ...CHROMIUM_OFFLINE_FLAGS, '--disable-dev-shm-usage',
    '--no-pdf-header-footer', `--user-data-dir=${work}/profile`, `--print-to-pdf=${work}/page.pdf`, `file://${input}`], { cwd: work, env: { TMPDIR: '/tmp' }, timeoutMs: 120_000, maxMemoryBytes: 4 * 1024 ** 3 });
  await rename(join(work, 'page.pdf'), out).catch(() => undefined);
  await rm(work, { recursive: true, force: true });
  return r.exitCode === 0 ? { ok: true } : { ok: false, why: r.stderr.split('\n').filter((l) => l && !l.includes('dbus')).slice(-2).join(' | ') };
}

const totals = { api: 0, cold: 0 };
const failures = { api: [], cold: [] };
let checked = 0;
let firstApiMs = 0;
for (let round = 0; round < ROUNDS; round++) {
  for (const [mode, run] of [['api', viaApi], ['cold', cold]]) {
    for (const [i, page] of pages.entries()) {
      const out = join(dir, `${mode}-${round}-${i}.pdf`);
      const t0 = performance.now();
      const r = await run(page, out);
      const ms = performance.now() - t0;
      if (round === 0 && mode === 'api' && i === 0) firstApiMs = ms;
      totals[mode] += ms;
      if (!r.ok || pdfPages(out) < 1) failures[mode].push(`${page.name}: ${r.why ?? 'pdfinfo read no page'}`);
      else checked++;
    }
    process.stdout.write(`round ${round + 1} ${mode}: ${(totals[mode] / 1000).toFixed(1)} s so far\n`);
  }
}
const poolMib = treeRssMib(service.pid);
const metrics = await (await fetch(`${base}/metrics`)).text();
const metric = (name) => Number(new RegExp(`^${name} ([\\d.e+]+)$`, 'm').exec(metrics)?.[1] ?? NaN);
await stop();
await rm(dir, { recursive: true, force: true });

const ratio = totals.cold / totals.api;
for (const mode of ['api', 'cold']) for (const f of failures[mode]) process.stdout.write(`  failed (${mode}): ${f}\n`);
process.stdout.write(
  `${pages.length} pages × ${ROUNDS} rounds: API ${(totals.api / 1000).toFixed(1)} s (${(totals.api / pages.length / ROUNDS).toFixed(0)} ms a page; the first, starting the pool, ${firstApiMs.toFixed(0)} ms), ` +
    `cold chromium ${(totals.cold / 1000).toFixed(1)} s (${(totals.cold / pages.length / ROUNDS).toFixed(0)} ms a page); ${checked} of ${pages.length * ROUNDS * 2} PDFs checked by pdfinfo; ` +
    `service + browser pool resident ${poolMib.toFixed(0)} MiB; pool renders ${metric('convert_chromium_renders_total')}, restarts ${metric('convert_chromium_restarts_total')}, blocked requests ${metric('convert_chromium_blocked_requests_total')}\n`,
);
const met = ratio >= TARGET && failures.api.length === 0;
process.stdout.write(`RESULT pages=${pages.length} rounds=${ROUNDS} api_s=${(totals.api / 1000).toFixed(2)} cold_s=${(totals.cold / 1000).toFixed(2)} ratio=${ratio.toFixed(2)} target=${TARGET} api_failed=${failures.api.length} cold_failed=${failures.cold.length} pool_rss_mib=${poolMib.toFixed(0)} targets_met=${met}\n`);
