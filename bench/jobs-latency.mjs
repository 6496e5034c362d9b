// bench:jobs-latency — how the API answers while a bulk job runs in the same process (the
// default setup: SQLite, in-process workers). Submits a job of BENCH_JOB_SIZE addresses
// (300,000) over the rig's 10,000 load-test domains and, from just before the submit until
// the job completes (so the submit's chunk writes are inside the window), asks verify-single
// (a read and a quota write), /healthz, and a write of the request path (create an API key,
// then DELETE it: the DELETE is timed) every 20 ms, and reports their latency over the whole
// run and over the calls that overlapped the submit (its chunk writes). /healthz touches no
// database: its latency in the same window is the baseline (event loop and machine load),
// so `submit_delete_ratio` = DELETE max / healthz max while the submit ran.
// Last line: RESULT key=value …

// First: on a Node older than 22.12 this exits with one line before any native addon loads (issue 44).
import '@mailconv/platform/node-guard';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ROOT } from '../scripts/lib/ensure.mjs';

const SIZE = Number(process.env.BENCH_JOB_SIZE ?? 300_000);
// BENCH_UNTIL=submit: stop sampling half a second after the submit is answered instead of
// waiting for the job (a cheap run at 1,000,000 addresses for the submit window alone).
const UNTIL_SUBMIT = process.env.BENCH_UNTIL === 'submit';
const { startRig, D } = await import(join(ROOT, 'test-rig', 'dist', 'index.js'));

const freePort = () =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

const rig = await startRig();
const dir = mkdtempSync(join(tmpdir(), 'bench-jobs-latency-'));
let child;
try {
  const plans = join(dir, 'plans.json');
  writeFileSync(plans, JSON.stringify({ plans: { bench: { name: 'Bench', monthlyQuota: 1e9, rateLimitRpm: 1e9, batchCap: 10_000, features: { smtp: false, webhooks: false, catch_all: false } } } }));
  const port = await freePort();
  const env = { ...process.env, EMAIL_DATABASE_URL: `sqlite:${join(dir, 'email.db')}`, EMAIL_PLANS_FILE: plans, EMAIL_DNS_SERVERS: rig.dnsServer, EMAIL_PORT: String(port), EMAIL_LOG_LEVEL: 'warn' };
  const admin = spawnSync(process.execPath, ['services/email-api/dist/admin.js', 'create-account', '--email', 'bench@example.test', '--plan', 'bench', '--json'], { cwd: ROOT, env, encoding: 'utf8' });
  if (admin.status !== 0) throw new Error(admin.stderr);
  const key = JSON.parse(admin.stdout).api_key;
  child = spawn(process.execPath, ['services/email-api/dist/server.js'], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (await fetch(`${base}/healthz`).then((r) => r.ok, () => false)) break;
    if (i > 100) throw new Error('the service did not start');
    await sleep(100);
  }
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  // The body is built before the clock starts: building it blocks this process (and would
  // show as latency of every call in flight).
  const body = JSON.stringify({ emails: Array.from({ length: SIZE }, (_, i) => `user${i}@d${String(i % 10_000).padStart(4, '0')}.${D.wildcard}`) });
  let done = false;
  // Each call as [start, duration] (ms, performance.now()).
  const sample = async (ask) => {
    const calls = [];
    while (!done) {
      const c = await ask();
      if (c !== undefined) calls.push(c);
      await sleep(20);
    }
    return calls;
  };
  const timed = async (fn) => {
    const t = performance.now();
    await fn();
    return [t, performance.now() - t];
  };
  const singles = sample(() =>
    timed(async () => {
      const r = await fetch(`${base}/api/v1/verify-single`, { method: 'POST', headers: auth, body: JSON.stringify({ email: `x@${D.valid}` }) });
      if (r.status !== 200) throw new Error(`verify-single answered ${r.status}`);
      await r.text();
    }),
  );
  const health = sample(() => timed(async () => (await fetch(`${base}/healthz`)).text()));
  const deletes = sample(async () => {
    const created = await fetch(`${base}/api/dashboard/api-keys`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'bench' }) });
    if (created.status !== 200) throw new Error(`key creation answered ${created.status}`);
    const { id } = await created.json();
    return timed(async () => {
      const r = await fetch(`${base}/api/dashboard/api-keys?id=${id}`, { method: 'DELETE', headers: { authorization: auth.authorization } });
      if (r.status !== 200) throw new Error(`key DELETE answered ${r.status}`);
      await r.text();
    });
  });
  await sleep(100);
  const t0 = performance.now();
  let submitEnd = Infinity;
  const submitted = await fetch(`${base}/api/v1/jobs`, { method: 'POST', headers: auth, body });
  const job = await submitted.json();
  submitEnd = performance.now();
  const submitMs = submitEnd - t0;
  if (submitted.status !== 202) throw new Error(`submit answered ${submitted.status}: ${JSON.stringify(job)}`);

  let status = 'submitted';
  if (UNTIL_SUBMIT) await sleep(500);
  else {
    do {
      await sleep(200);
      status = (await (await fetch(`${base}/api/v1/jobs/${job.job_id}`, { headers: auth })).json()).status;
    } while (status === 'queued' || status === 'processing');
  }
  const jobSeconds = (performance.now() - t0) / 1000;
  done = true;
  const [sc, hc, dc] = await Promise.all([singles, health, deletes]);
  const sorted = (calls) => calls.map(([, d]) => d).sort((a, b) => a - b);
  // Calls that overlapped the submit request.
  const during = (calls) => sorted(calls.filter(([start, d]) => start < submitEnd && start + d > t0));
  const [s, h, d] = [sc, hc, dc].map(sorted);
  const [sw, hw, dw] = [sc, hc, dc].map(during);
  const q = (list, p) => (list.length ? list[Math.min(list.length - 1, Math.floor(p * list.length))].toFixed(0) : 'none');
  console.log(`job of ${SIZE} addresses ${status} in ${jobSeconds.toFixed(2)} s; submit answered in ${submitMs.toFixed(0)} ms; verify-single asked ${s.length} times, /healthz ${h.length} times, key DELETE ${d.length} times meanwhile`);
  console.log(
    `RESULT job_size=${SIZE} job_status=${status} job_s=${jobSeconds.toFixed(2)} single_p50_ms=${q(s, 0.5)} single_p99_ms=${q(s, 0.99)} single_max_ms=${q(s, 1)} healthz_p50_ms=${q(h, 0.5)} healthz_max_ms=${q(h, 1)} delete_p50_ms=${q(d, 0.5)} delete_p99_ms=${q(d, 0.99)} delete_max_ms=${q(d, 1)} submit_ms=${submitMs.toFixed(0)} submit_single_max_ms=${q(sw, 1)} submit_delete_max_ms=${q(dw, 1)} submit_healthz_max_ms=${q(hw, 1)} submit_delete_ratio=${dw.length && hw.length ? (dw.at(-1) / hw.at(-1)).toFixed(2) : 'none'} submit_deletes=${dw.length}`,
  );
} finally {
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
  await rig.release();
  rmSync(dir, { recursive: true, force: true });
}
