// bench:load — mixed traffic against both services running as real processes on loopback
// (issue #15): single checks, batches, job submissions and job polls against the email
// service (DNS from the test rig's dnsmasq, no SMTP); conversions (png → webp, JSON with an
// upload id) and their polls against the conversion service; both at once, from the
// platform's bounded load generator. Prints throughput, p50/p99 and error counts per request
// kind, writes a JSON summary to bench/results/ (git-ignored), and exits 1 if any answer was
// other than the expected statuses or a documented 429 (with Retry-After).
// A free-plan key (60 requests a minute) asks for its account now and then: its refusals are
// the documented 429s. Job submissions are spread at 5 a second.
// Settings: LOAD_DURATION_S (60), LOAD_EMAIL_CONNECTIONS (16), LOAD_CONVERT_CONNECTIONS (2),
// LOAD_SUMMARY_DIR (bench/results). The services get --max-old-space-size=512 each and the
// whole run is killed after the duration plus 3 minutes. The load test (packages/client/test/
// load.test.ts) runs this same script and checks its summary.

// First: on a Node older than 22.12 this exits with one line before any native addon loads (issue 44).
import '@mailconv/platform/node-guard';
import { Blob } from 'node:buffer';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { ROOT } from '../scripts/lib/ensure.mjs';

const DURATION_S = Number(process.env.LOAD_DURATION_S ?? 60);
const EMAIL_CONNECTIONS = Number(process.env.LOAD_EMAIL_CONNECTIONS ?? 16);
const CONVERT_CONNECTIONS = Number(process.env.LOAD_CONVERT_CONNECTIONS ?? 2);
const SUMMARY_DIR = process.env.LOAD_SUMMARY_DIR ?? join(ROOT, 'bench', 'results');
/** Job submissions are spread over the run at this pace, so the backlog (and the run) stays bounded. */
const JOBS_PER_SECOND = 5;
const JOB_SIZE = 50;
const BATCH_SIZE = 20;

const { useRig, D } = await import(join(ROOT, 'test-rig', 'dist', 'index.js'));
const { freePort, runMixedLoad, formatLoadTable } = await import(join(ROOT, 'packages', 'platform', 'dist', 'testing', 'index.js'));

const children = [];
const hardStop = setTimeout(() => {
  console.error(`bench:load: still running ${DURATION_S + 180} s after the start; stopping`);
  for (const c of children) c.kill('SIGKILL');
  process.exit(2);
}, (DURATION_S + 180) * 1000);
hardStop.unref();

/** Starts a service's server.js and resolves once it logged `ready`; its log is then drained unread. */
function start(service, env) {
  const child = spawn(process.execPath, ['--max-old-space-size=512', join(ROOT, 'services', service, 'dist', 'server.js')], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      try {
        if (JSON.parse(line).event !== 'ready') return;
      } catch {
        return;
      }
      lines.close();
      child.stdout.resume();
      resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`${service} exited with ${code}`)));
  });
}

async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

function createAccount(service, env, plan) {
  const res = spawnSync(process.execPath, [join(ROOT, 'services', service, 'dist', 'admin.js'), 'create-account', '--email', `load-${plan}@example.test`, '--plan', plan, '--json'], { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`${service} create-account: ${res.stderr}`);
  return JSON.parse(res.stdout.trim().split('\n').pop()).api_key;
}

const pick = (list) => list[Math.floor(Math.random() * list.length)];
/** Rig domains with fixed answers (no SMTP): verdicts come from DNS and the lists. */
const DOMAINS = [D.valid, D.catchAll, D.nullMx, D.aOnly, D.noMail, D.nxdomain, D.multiMx];
let n = 0;
const address = () => `user${n++ % 5000}@${pick(DOMAINS)}`;
let loadStart = 0;

const dir = mkdtempSync(join(tmpdir(), 'bench-load-'));
const rig = await useRig();
let exitCode = 0;
try {
  const emailPort = await freePort();
  const convertPort = await freePort();
  const emailPlans = join(dir, 'email-plans.json');
  const convertPlans = join(dir, 'convert-plans.json');
  // Roomy plans: the run measures the services, not the limits (a 429 would still be allowed).
  writeFileSync(emailPlans, JSON.stringify({ plans: { load: { name: 'Load', monthlyQuota: 1e9, rateLimitRpm: 1e9, batchCap: 10_000, features: { smtp: false, webhooks: false, catch_all: false } } } }));
  writeFileSync(convertPlans, JSON.stringify({ plans: { load: { name: 'Load', monthlyQuota: 1e9, maxFileBytes: 10_000_000, rateLimitRpm: 1e9, maxConcurrentJobs: 4 } } }));
  const emailEnv = {
    EMAIL_DATABASE_URL: `sqlite:${join(dir, 'email.db')}`,
    EMAIL_PORT: String(emailPort),
    EMAIL_HOST: '127.0.0.1',
    EMAIL_PUBLIC_BASE_URL: `http://127.0.0.1:${emailPort}`,
    EMAIL_PLANS_FILE: emailPlans,
    EMAIL_DNS_SERVERS: rig.dnsServer,
    EMAIL_LOG_LEVEL: 'info',
    EMAIL_WEBHOOKS_RESTRICT_TO: '127.0.0.0/8,::1/128',
  };
  const convertEnv = {
    CONVERT_DATABASE_URL: `sqlite:${join(dir, 'convert.db')}`,
    CONVERT_PORT: String(convertPort),
    CONVERT_HOST: '127.0.0.1',
    CONVERT_PUBLIC_BASE_URL: `http://127.0.0.1:${convertPort}`,
    CONVERT_PLANS_FILE: convertPlans,
    CONVERT_STORAGE_DIR: join(dir, 'storage'),
    CONVERT_LOG_LEVEL: 'info',
    CONVERT_LIBREOFFICE_INSTANCES: '1',
  };
  const emailKey = createAccount('email-api', emailEnv, 'load');
  const convertKey = createAccount('convert-api', convertEnv, 'load');
  // A key on the free plan (60 requests a minute): its refusals are the documented 429s.
  const limitedKey = createAccount('email-api', emailEnv, 'free');
  await Promise.all([start('email-api', emailEnv), start('convert-api', convertEnv)]);
  const emailUrl = `http://127.0.0.1:${emailPort}`;
  const convertUrl = `http://127.0.0.1:${convertPort}`;

  // One PNG upload, converted again and again.
  const form = new globalThis.FormData();
  form.append('file', new Blob([readFileSync(join(ROOT, 'packages', 'converter', 'test', 'fixtures', 'sample.png'))]), 'sample.png');
  const uploaded = await fetch(`${convertUrl}/api/v1/upload`, { method: 'POST', headers: { authorization: `Bearer ${convertKey}` }, body: form });
  if (uploaded.status !== 201) throw new Error(`upload: ${uploaded.status} ${await uploaded.text()}`);
  const uploadId = (await uploaded.json()).upload_id;

  const emailAuth = { authorization: `Bearer ${emailKey}`, 'content-type': 'application/json' };
  const convertAuth = { authorization: `Bearer ${convertKey}`, 'content-type': 'application/json' };
  const jobs = [];
  let submitted = 0;
  const conversions = [];
  const remember = (list, id) => {
    list.push(id);
    if (list.length > 1000) list.shift();
  };

  const emailKinds = [
    { name: 'email verify-single', weight: 60, expected: [200], next: () => ({ method: 'POST', path: '/api/v1/verify-single', headers: emailAuth, body: JSON.stringify({ email: address() }) }) },
    { name: 'email verify-batch', weight: 8, expected: [200], next: () => ({ method: 'POST', path: '/api/v1/verify-batch', headers: emailAuth, body: JSON.stringify({ emails: Array.from({ length: BATCH_SIZE }, address) }) }) },
    {
      name: 'email job submit',
      weight: 4,
      expected: [202],
      next: () => {
        if (submitted >= ((performance.now() - loadStart) / 1000 + 1) * JOBS_PER_SECOND) return undefined;
        submitted++;
        return { method: 'POST', path: '/api/v1/jobs', headers: emailAuth, body: JSON.stringify({ emails: Array.from({ length: JOB_SIZE }, address) }) };
      },
      onAnswer: (_s, body) => remember(jobs, JSON.parse(body).job_id),
    },
    { name: 'email account (60 rpm)', weight: 2, expected: [200], next: () => ({ method: 'GET', path: '/api/v1/account', headers: { authorization: `Bearer ${limitedKey}` } }) },
    { name: 'email job poll', weight: 26, expected: [200], next: () => (jobs.length ? { method: 'GET', path: `/api/v1/jobs/${pick(jobs)}`, headers: { authorization: emailAuth.authorization } } : undefined) },
  ];
  const convertKinds = [
    {
      name: 'convert png→webp',
      weight: 3,
      expected: [200, 202],
      next: () => ({ method: 'POST', path: '/api/v1/convert?wait=30', headers: convertAuth, body: JSON.stringify({ upload_id: uploadId, target_format: 'webp', quality: 80 }) }),
      onAnswer: (_s, body) => remember(conversions, JSON.parse(body).id),
    },
    { name: 'convert poll', weight: 1, expected: [200], next: () => (conversions.length ? { method: 'GET', path: `/api/v1/jobs/${pick(conversions)}`, headers: { authorization: convertAuth.authorization } } : undefined) },
  ];

  loadStart = performance.now();
  console.log(`bench:load: ${DURATION_S} s, email ${EMAIL_CONNECTIONS} connections, conversions ${CONVERT_CONNECTIONS} connections (both services real processes on loopback, SQLite)`);
  const result = await runMixedLoad(
    [
      { baseUrl: emailUrl, connections: EMAIL_CONNECTIONS, kinds: emailKinds },
      { baseUrl: convertUrl, connections: CONVERT_CONNECTIONS, kinds: convertKinds },
    ],
    { durationMs: DURATION_S * 1000, requestTimeoutMs: 45_000 },
  );

  // The jobs submitted during the run must all complete (nothing lost), within a bound.
  const waitUntil = Date.now() + 90_000;
  let pending = [...jobs];
  while (pending.length > 0 && Date.now() < waitUntil) {
    const still = [];
    for (const id of pending) {
      const r = await fetch(`${emailUrl}/api/v1/jobs/${id}`, { headers: { authorization: emailAuth.authorization } });
      const j = await r.json();
      if (j.status !== 'completed' || j.processed !== JOB_SIZE) still.push(id);
    }
    pending = still;
    if (pending.length) await new Promise((r) => setTimeout(r, 500));
  }
  const memory = {};
  for (const [name, child] of [['email-api', children[0]], ['convert-api', children[1]]]) {
    try {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      memory[name] = { vm_hwm_mb: Math.round(Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024) };
    } catch {
      memory[name] = null;
    }
  }
  const health = { email: (await fetch(`${emailUrl}/healthz`)).status, convert: (await fetch(`${convertUrl}/healthz`)).status };
  const summary = {
    when: new Date().toISOString(),
    duration_s: DURATION_S,
    connections: { email: EMAIL_CONNECTIONS, convert: CONVERT_CONNECTIONS },
    measured_ms: result.durationMs,
    kinds: result.kinds,
    jobs: { submitted: jobs.length, completed: jobs.length - pending.length, job_size: JOB_SIZE },
    peak_rss: memory,
    health_after: health,
    note: 'Shared 2-core machine; figures are noisy.',
  };
  console.log(formatLoadTable(result));
  console.log(`jobs: ${summary.jobs.completed}/${summary.jobs.submitted} completed after the run; peak RSS ${JSON.stringify(memory)}; health after ${JSON.stringify(health)}`);
  mkdirSync(SUMMARY_DIR, { recursive: true });
  const file = join(SUMMARY_DIR, `load-${summary.when.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(summary, null, 2)}\n`);
  console.log(`summary: ${file}`);
  console.log(`LOAD_SUMMARY ${JSON.stringify(summary)}`);
  const short = (name) => name.replace(/^(email|convert) /, '$1_').replace(/[^a-z_]+/gi, '_').replace(/_+$/, '').toLowerCase();
  const figures = Object.entries(result.kinds).map(([name, k]) => `${short(name)}_rps=${k.rps} ${short(name)}_p50_ms=${k.p50} ${short(name)}_p99_ms=${k.p99}`);
  const errors = Object.values(result.kinds).reduce((s, k) => s + k.errors, 0);
  const unexpected = Object.values(result.kinds).reduce((s, k) => s + k.unexpected, 0);
  const limited = Object.values(result.kinds).reduce((s, k) => s + k.limited, 0);
  // No baseline: this run is about behaviour under load (no error but documented 429s), and its figures are for sizing.
  console.log(`RESULT duration_s=${DURATION_S} ${figures.join(' ')} errors=${errors} unexpected=${unexpected} limited_429=${limited} jobs_completed=${summary.jobs.completed}/${summary.jobs.submitted}`);
  const problems = Object.values(result.kinds).reduce((s, k) => s + k.errors + k.unexpected, 0);
  if (problems > 0 || pending.length > 0 || health.email !== 200 || health.convert !== 200) exitCode = 1;
} finally {
  for (const c of children) await stop(c);
  await rig.release();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(exitCode);
