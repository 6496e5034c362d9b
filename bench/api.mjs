// bench:api — the email API's verify-single under load (autocannon over loopback, DNS from
// the test rig's dnsmasq with a warm cache, no SMTP) against a bare Fastify route measured in
// the same run; then verify-batch with 10,000 addresses over 1,000 domains.
// Targets (2 cores): ≥ 5,000 req/s, p99 < 50 ms, no errors, ≥ 1/4 of the bare route's
// throughput; the 10,000-address batch under 2 s. Last line: RESULT key=value …

// First: on a Node older than 22.12 this exits with one line before any native addon loads (issue 44).
import '@mailconv/platform/node-guard';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { ROOT } from '../scripts/lib/ensure.mjs';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);

const { startRig, D } = await import(join(ROOT, 'test-rig', 'dist', 'index.js'));

function freePort() {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function start(file, args, env, nodeArgs = []) {
  const child = spawn(process.execPath, [...nodeArgs, file, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      try {
        if (JSON.parse(line).event !== 'ready') return;
      } catch {
        return;
      }
      // From here on the log is drained unread: parsing it would steal CPU from the load generator.
      lines.close();
      child.stdout.resume();
      resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`${file} exited with ${code}`)));
  });
}

async function stop(child) {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

function load(url, body, extraHeaders = {}) {
  return autocannon({
    url,
    method: 'POST',
    connections: CONNECTIONS,
    duration: DURATION,
    headers: { 'content-type': 'application/json', ...extraHeaders },
    requests: [{ setupRequest: (req) => ({ ...req, body: body() }) }],
  });
}

const summary = (r) => ({ rps: Math.round(r.requests.average), p99: r.latency.p99, errors: r.errors + r.timeouts, non2xx: r.non2xx });

const dir = mkdtempSync(join(tmpdir(), 'bench-api-'));
const rig = await startRig();
const children = [];
try {
  // An account on a plan roomy enough for the run: the bench measures verification, not limits.
  const plans = join(dir, 'plans.json');
  writeFileSync(plans, JSON.stringify({ plans: { bench: { name: 'Bench', monthlyQuota: 1e9, rateLimitRpm: 1e9, batchCap: 10_000, features: { smtp: false, webhooks: false, catch_all: false } } } }));
  const env = { EMAIL_DATABASE_URL: `sqlite:${join(dir, 'email.db')}`, EMAIL_PLANS_FILE: plans, EMAIL_DNS_SERVERS: rig.dnsServer, EMAIL_LOG_LEVEL: 'info' };
  const admin = spawnSync(process.execPath, ['services/email-api/dist/admin.js', 'create-account', '--email', 'bench@example.test', '--plan', 'bench', '--json'], { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8' });
  if (admin.status !== 0) throw new Error(admin.stderr);
  const key = JSON.parse(admin.stdout).api_key;

  const emailPort = await freePort();
  const barePort = await freePort();
  // BENCH_PROFILE=DIR writes a V8 CPU profile of the service to DIR.
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
  children.push(await start('services/email-api/dist/server.js', [], { ...env, EMAIL_PORT: String(emailPort) }, profile));
  children.push(await start('bench/bare-server.mjs', [String(barePort)], {}));

  const domains = [D.valid, D.aOnly, D.catchAll, D.multiMx];
  let n = 0;
  const nextEmail = () => JSON.stringify({ email: `user${n++ % 1000}@${domains[n % domains.length]}` });
  const auth = { authorization: `Bearer ${key}` };
  // Warm the DNS cache and the JIT.
  await autocannon({ url: `http://127.0.0.1:${emailPort}/api/v1/verify-single`, method: 'POST', connections: 8, duration: 2, headers: { 'content-type': 'application/json', ...auth }, requests: [{ setupRequest: (req) => ({ ...req, body: nextEmail() }) }] });
  await autocannon({ url: `http://127.0.0.1:${barePort}/bare`, method: 'POST', connections: 8, duration: 2, headers: { 'content-type': 'application/json' }, body: nextEmail() });

  const bare = summary(await load(`http://127.0.0.1:${barePort}/bare`, nextEmail));
  const single = summary(await load(`http://127.0.0.1:${emailPort}/api/v1/verify-single`, nextEmail, auth));
  console.log(`bare Fastify route:  ${bare.rps} req/s, p99 ${bare.p99} ms, errors ${bare.errors}, non-2xx ${bare.non2xx}`);
  console.log(`verify-single:       ${single.rps} req/s, p99 ${single.p99} ms, errors ${single.errors}, non-2xx ${single.non2xx}`);

  // 10,000 addresses over 1,000 domains: the first run resolves every domain, the others hit the cache.
  const emails = Array.from({ length: 10_000 }, (_, i) => `user${i}@d${String(i % 1000).padStart(4, '0')}.${D.wildcard}`);
  const batchMs = [];
  let batchStatus = 0;
  for (let run = 0; run < 3; run++) {
    const t0 = performance.now();
    const res = await fetch(`http://127.0.0.1:${emailPort}/api/v1/verify-batch`, { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body: JSON.stringify({ emails }) });
    const body = await res.json();
    batchMs.push(Math.round(performance.now() - t0));
    batchStatus = res.status;
    if (res.status !== 200 || body.summary.valid !== 10_000) throw new Error(`batch answered ${res.status}: ${JSON.stringify(body).slice(0, 300)}`);
  }
  console.log(`verify-batch 10,000 addresses / 1,000 domains: ${batchMs.join(' ms, ')} ms (first run resolves every domain)`);

  const ratio = Math.round((single.rps / bare.rps) * 100) / 100;
  const ok = single.rps >= 5000 && single.p99 < 50 && single.errors === 0 && single.non2xx === 0 && ratio >= 0.25 && Math.max(...batchMs) < 2000 && batchStatus === 200;
  console.log(
    `RESULT single_rps=${single.rps} single_p99_ms=${single.p99} single_errors=${single.errors + single.non2xx} bare_rps=${bare.rps} ratio=${ratio} batch_cold_ms=${batchMs[0]} batch_warm_ms=${Math.min(...batchMs.slice(1))} targets_met=${ok}`,
  );
} finally {
  for (const c of children) await stop(c).catch(() => undefined);
  await rig.release();
  rmSync(dir, { recursive: true, force: true });
}
