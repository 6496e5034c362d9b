// `npm run bench:jobs`: one bulk job of 1,000,000 addresses over the rig's 10,000 load-test
// domains (DNS answered by the loopback rig, no SMTP), on a fresh SQLite database, with
// the service's in-process workers: submit → completed, peak RSS of the service process,
// then the CSV download of every row. In the same run, the engine alone verifies the same
// list in this process (same resolver, 64 at a time) as the baseline.
// Last line: `RESULT count=… submit_s=… job_s=… csv_s=… peak_rss_mb=… pipeline_s=… ratio=…`.
// Options: `--count N` (default 1,000,000), `--workers N` (EMAIL_JOBS_WORKERS, default 2),
// `--postgres URL` (an empty PostgreSQL database instead of SQLite), `--processes N`
// (service processes sharing the database, default 1), `--redis URL` (with `--postgres`:
// the BullMQ queue carries the chunks between the processes), `--no-baseline`.
//
// `--upload`: the list is uploaded as a CSV file with columns of its own
// (`email,first_name,company,city`, a quoted cell with a comma in every row) instead of JSON,
// and downloaded twice: the whole file with the contract's columns appended
// (`csv_plain_rss_mb`), then with every sub-check too (`columns=all`, the `csv_rss_mb` figure:
// the list's columns plus 16 result columns). Issue 23: memory stays flat during either.
//
// `--smtp`: the bulk job with mailbox probing instead: `--count` (default 100,000) addresses
// over the rig's 50 bench domains (`benchJobAddresses`: 60 % exist, 25 % unknown, 8 % full,
// 7 % disabled, every tenth domain catch-all), `use_smtp: true` on a plan with catch-all
// probing, the rig's Postfix behind relays that add `--rtt` ms (default 50) per round trip.
// Reports addresses per second, the SMTP sessions Postfix saw open (its log) and how many
// rows agree with the rig's truth. No engine baseline (the engine alone would take as long).
// Last line: `RESULT mode=smtp count=… rtt_ms=… job_s=… addresses_per_s=… sessions=… agree=…`.

// First: on a Node older than 22.12 this exits with one line before any native addon loads (issue 44).
import '@mailconv/platform/node-guard';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const SMTP = process.argv.includes('--smtp');
const COUNT = Number(arg('count', SMTP ? 100_000 : 1_000_000));
const RTT_MS = Number(arg('rtt', 50));
const WORKERS = Number(arg('workers', 2));
const PROCESSES = Number(arg('processes', 1));
const POSTGRES = arg('postgres', null);
const REDIS = arg('redis', null);
const BASELINE = !process.argv.includes('--no-baseline') && !SMTP;
const UPLOAD = process.argv.includes('--upload') && !SMTP;

const build = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-b'], { stdio: 'inherit', cwd: ROOT });
if (build.status !== 0) process.exit(build.status ?? 1);

const { startRig, loadDomains, benchJobAddresses } = await import(join(ROOT, 'test-rig', 'dist', 'index.js'));
const SERVER = join(ROOT, 'services', 'email-api', 'dist', 'server.js');
const ADMIN = join(ROOT, 'services', 'email-api', 'dist', 'admin.js');

const freePort = () =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
const rssKb = (pid, field) => {
  try {
    const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`${field}:\\s+(\\d+)`));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
};

const rig = await startRig(SMTP ? { benchDelayMs: RTT_MS / 2 } : {});
/** SMTP sessions the rig's Postfix has logged so far (one "connect from" line each). */
const postfixConnects = () => {
  try {
    return (readFileSync(join(rig.dir, 'postfix.log'), 'utf8').match(/smtpd\[\d+\]: connect from /g) ?? []).length;
  } catch {
    return 0;
  }
};
const dir = mkdtempSync(join(tmpdir(), 'mailconv-bench-jobs-'));
const children = [];
try {
  const plans = join(dir, 'plans.json');
  writeFileSync(plans, JSON.stringify({ plans: { bench: { name: 'Bench', monthlyQuota: 10 * COUNT, rateLimitRpm: 1_000_000, batchCap: 10_000, features: { smtp: SMTP, webhooks: false, catch_all: SMTP } } } }));
  const env = {
    ...process.env,
    EMAIL_DATABASE_URL: POSTGRES ?? `sqlite:${join(dir, 'email.db')}`,
    EMAIL_PLANS_FILE: plans,
    EMAIL_DNS_SERVERS: rig.dnsServer,
    EMAIL_LOG_LEVEL: 'info',
    EMAIL_JOBS_WORKERS: String(WORKERS),
    EMAIL_JOBS_POLL_MS: '200',
    // A million rows with four columns is about 70 MB of CSV: over the default 64 MiB.
    ...(UPLOAD ? { EMAIL_JOBS_BODY_LIMIT_BYTES: String(256 * 1_048_576) } : {}),
    ...(REDIS ? { EMAIL_REDIS_URL: REDIS, EMAIL_JOBS_QUEUE: `bench-${process.pid}-${Date.now()}` } : {}),
    // Probing reaches the rig only: its addresses are loopback, nothing else is allowed.
    ...(SMTP
      ? { EMAIL_SMTP_HELO: 'probe.rig.test', EMAIL_SMTP_FROM: 'probe@rig.test', EMAIL_SMTP_PORT: String(rig.smtpPort), EMAIL_SMTP_ALLOW_PRIVATE: 'true', EMAIL_SMTP_RESTRICT_TO: '127.0.0.0/8' }
      : {}),
  };
  const admin = spawnSync(process.execPath, [ADMIN, 'create-account', '--email', 'bench@example.test', '--plan', 'bench', '--json'], { env, encoding: 'utf8' });
  if (admin.status !== 0) throw new Error(admin.stderr);
  const key = JSON.parse(admin.stdout).api_key;

  const ports = [];
  for (let p = 0; p < PROCESSES; p++) {
    const port = await freePort();
    const child = spawn(process.execPath, [SERVER], { env: { ...env, EMAIL_PORT: String(port) }, stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    await new Promise((resolve, reject) => {
      createInterface({ input: child.stdout }).on('line', (line) => {
        if (line.includes('"event":"ready"')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
    });
    ports.push(port);
  }
  const base = `http://127.0.0.1:${ports[0]}`;
  const auth = { authorization: `Bearer ${key}` };

  const domains = loadDomains();
  const population = SMTP ? benchJobAddresses(COUNT) : null;
  const emails = population ? population.map((a) => a.email) : Array.from({ length: COUNT }, (_, i) => `user${i}@${domains[i % domains.length]}`);
  let body;
  let contentType = 'application/json';
  if (UPLOAD) {
    const lines = ['email,first_name,company,city'];
    for (let i = 0; i < emails.length; i++) lines.push(`${emails[i]},First${i},"Company ${i}, Inc",City ${i % 100}`);
    body = new globalThis.FormData();
    body.append('column', 'email');
    body.append('file', new globalThis.Blob([`${lines.join('\r\n')}\r\n`], { type: 'text/csv' }), 'list.csv');
    contentType = null;
  } else body = JSON.stringify(SMTP ? { emails, use_smtp: true } : { emails });
  const connects0 = postfixConnects();
  let peak = 0;
  const sample = () => {
    for (const c of children) peak = Math.max(peak, rssKb(c.pid, 'VmRSS'));
  };
  const sampler = setInterval(sample, 100);

  // While the submit runs, /healthz is asked back to back: the slowest answer is how long
  // the service could not answer anyone (its event loop blocked by the 29 MB body).
  let probing = true;
  let stallMs = 0;
  const probe = (async () => {
    while (probing) {
      const t = performance.now();
      await fetch(`${base}/healthz`).then((r) => r.arrayBuffer());
      stallMs = Math.max(stallMs, performance.now() - t);
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  const t0 = performance.now();
  const res = await fetch(`${base}/api/v1/jobs`, { method: 'POST', headers: { ...auth, ...(contentType ? { 'content-type': contentType } : {}) }, body });
  if (res.status !== 202) throw new Error(`submit: ${res.status} ${await res.text()}`);
  const { job_id: id } = await res.json();
  const submitted = performance.now();
  probing = false;
  await probe;
  let status;
  for (;;) {
    status = await (await fetch(`${base}/api/v1/jobs/${id}`, { headers: auth })).json();
    if (!['queued', 'processing'].includes(status.status)) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  const done = performance.now();
  if (status.status !== 'completed') throw new Error(`job ended ${status.status}: ${status.error}`);
  await new Promise((r) => setTimeout(r, 1000)); // Postfix's log lines reach the file through postlogd
  const sessions = postfixConnects() - connects0;
  const jobPeak = Math.max(peak, ...children.map((c) => rssKb(c.pid, 'VmHWM')));

  // With --upload, first the whole file with the contract's result columns, memory sampled the same way.
  let plain = null;
  if (UPLOAD) {
    peak = 0;
    sample();
    const before = peak;
    const p0 = performance.now();
    const res = await fetch(`${base}/api/v1/jobs/${id}/results?format=csv`, { headers: auth });
    let n = -1;
    for await (const part of res.body) for (const b of part) if (b === 10) n++;
    sample();
    plain = { rows: n, s: (performance.now() - p0) / 1000, before, peak };
    if (n !== COUNT) throw new Error(`plain CSV has ${n} rows, expected ${COUNT}`);
  }

  // Memory flat during the download: RSS before it starts vs the highest RSS while it runs.
  peak = 0;
  sample();
  const csvBefore = peak;
  const c0 = performance.now();
  const csv = await fetch(`${base}/api/v1/jobs/${id}/results?format=csv${UPLOAD ? '&columns=all' : ''}`, { headers: auth });
  let rows = -1;
  let bytes = 0;
  // With --smtp each row is checked against the rig's truth: the reason the verdict gives
  // (accepted at a non-catch-all domain: no reason, the SMTP-accepted score of 97).
  const expected = { user_unknown: 'user_unknown', disabled: 'mailbox_disabled', mailbox_full: 'mailbox_full' };
  let agree = 0;
  let row = 0;
  let tail = '';
  const disagreements = new Map();
  for await (const part of csv.body) {
    bytes += part.length;
    for (const b of part) if (b === 10) rows++;
    if (!population) continue;
    const lines = (tail + Buffer.from(part).toString('utf8')).split('\r\n');
    tail = lines.pop() ?? '';
    for (const line of lines) {
      const [email, , , reason, score] = line.split(',');
      if (email === 'email') continue;
      const truth = population[row++];
      const want = truth.truth === 'accepted' ? (truth.catchAll ? 'catch_all' : '') : expected[truth.truth];
      if (email === truth.email && reason === want && (want !== '' || score === '97')) agree++;
      else disagreements.set(`${truth.truth}→${reason}`, (disagreements.get(`${truth.truth}→${reason}`) ?? 0) + 1);
    }
  }
  const csvS = (performance.now() - c0) / 1000;
  sample();
  const csvPeak = peak;
  clearInterval(sampler);
  if (rows !== COUNT) throw new Error(`CSV has ${rows} rows, expected ${COUNT}`);

  let pipelineS = NaN;
  if (BASELINE) {
    // The baseline: the same list through the engine alone, one process, same resolver.
    for (const c of children) c.kill('SIGTERM');
    const { createEngine } = await import(join(ROOT, 'packages', 'verifier', 'dist', 'index.js'));
    const engine = createEngine({ dns: { servers: [rig.dnsServer] }, smtp: null });
    const p0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next < emails.length) await engine.verifier.verify(emails[next++], { smtp: false, catchAll: false });
      }),
    );
    pipelineS = (performance.now() - p0) / 1000;
  }
  const jobS = (done - t0) / 1000;
  if (SMTP) {
    console.log(`job ${id}: ${status.total} addresses with SMTP probing at a simulated ${RTT_MS} ms round trip, valid ${status.valid}, invalid ${status.invalid}, risky ${status.risky}, unknown ${status.unknown}`);
    if (disagreements.size > 0) console.log(`rows that disagree with the rig's truth: ${JSON.stringify(Object.fromEntries(disagreements))}`);
    console.log(
      `RESULT mode=smtp count=${COUNT} rtt_ms=${RTT_MS} backend=${POSTGRES ? 'postgres' : 'sqlite'}${REDIS ? '+bullmq' : ''} processes=${PROCESSES} workers=${WORKERS} job_s=${jobS.toFixed(2)} addresses_per_s=${(COUNT / jobS).toFixed(0)} sessions=${sessions} addresses_per_session=${(COUNT / Math.max(1, sessions)).toFixed(1)} agree=${agree}/${COUNT}`,
    );
    process.exitCode = agree === COUNT ? 0 : 1;
  } else {
  console.log(`job ${id}: ${status.total} addresses, valid ${status.valid}, invalid ${status.invalid}, risky ${status.risky}, unknown ${status.unknown}`);
  if (plain) console.log(`uploaded CSV back with the contract's columns: ${plain.rows} rows in ${plain.s.toFixed(2)} s (RSS ${(plain.before / 1024).toFixed(0)} MiB before, at most ${(plain.peak / 1024).toFixed(0)} MiB during it); the figures below are with columns=all`);
  console.log(`submit ${((submitted - t0) / 1000).toFixed(2)} s, submit→completed ${jobS.toFixed(2)} s, CSV ${(bytes / 1048576).toFixed(1)} MiB in ${csvS.toFixed(2)} s (RSS ${(csvBefore / 1024).toFixed(0)} MiB before the download, at most ${(csvPeak / 1024).toFixed(0)} MiB during it)`);
  console.log(
    `RESULT count=${COUNT}${UPLOAD ? ' input=csv-upload columns=all' : ''} backend=${POSTGRES ? 'postgres' : 'sqlite'}${REDIS ? '+bullmq' : ''} processes=${PROCESSES} workers=${WORKERS} submit_s=${((submitted - t0) / 1000).toFixed(2)} submit_max_stall_ms=${stallMs.toFixed(0)} job_s=${jobS.toFixed(2)} csv_s=${csvS.toFixed(2)} peak_rss_mb=${(jobPeak / 1024).toFixed(0)} csv_rss_before_mb=${(csvBefore / 1024).toFixed(0)} csv_rss_mb=${(csvPeak / 1024).toFixed(0)}${plain ? ` csv_plain_rss_before_mb=${(plain.before / 1024).toFixed(0)} csv_plain_rss_mb=${(plain.peak / 1024).toFixed(0)}` : ''} pipeline_s=${pipelineS.toFixed(2)} ratio=${(jobS / pipelineS).toFixed(2)}`,
  );
  }
} finally {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
  await rig.release();
  rmSync(dir, { recursive: true, force: true });
}
