// The conversion service as the benchmarks run it: a real process on loopback, on its own
// data folder, with a plan generous enough that limits never interfere, and one account.
import { Blob } from 'node:buffer';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Starts `services/convert-api` on a random loopback port with its data under `dir`; answers
 * its base URL, the account's authorization header, the child process and `stop()`.
 */
export async function startConvertService(dir, { maxFileBytes = 4e9, env: extra = {} } = {}) {
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const plansFile = join(dir, 'plans.json');
  await writeFile(plansFile, JSON.stringify({ plans: { api: { maxFileBytes, rateLimitRpm: 1_000_000, monthlyQuota: 1_000_000 } } }));
  const env = { ...process.env, CONVERT_DATA_DIR: join(dir, 'data'), CONVERT_PORT: String(port), CONVERT_PLANS_FILE: plansFile, CONVERT_LOG_LEVEL: 'warn', ...extra };
  const admin = spawnSync(process.execPath, [join(ROOT, 'services/convert-api/dist/admin.js'), 'create-account', '--email', 'bench@example.test', '--plan', 'api', '--json'], { env, encoding: 'utf8' });
  if (admin.status !== 0) throw new Error(`admin: ${admin.stderr}`);
  const auth = { authorization: `Bearer ${JSON.parse(admin.stdout).api_key}` };
  const service = spawn(process.execPath, [join(ROOT, 'services/convert-api/dist/server.js')], { env: { ...env, CONVERT_LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((resolve, reject) => {
    createInterface({ input: service.stdout }).on('line', (line) => {
      if (line.includes('"event":"ready"')) resolve();
    });
    service.once('exit', (code) => reject(new Error(`service exited ${code}`)));
  });
  return {
    base: `http://127.0.0.1:${port}`,
    auth,
    service,
    async stop() {
      service.kill('SIGTERM');
      await new Promise((r) => service.once('exit', r));
    },
  };
}

/**
 * Upload + convert (waiting for it) + download through the API, multipart as a user sends
 * it; answers the output bytes and the engines that made them, or why it failed.
 */
export async function convertViaApi(base, auth, name, bytes, target, options = {}) {
  const form = new globalThis.FormData();
  form.set('target_format', target);
  for (const [k, v] of Object.entries(options)) form.set(k, String(v));
  form.set('file', new Blob([bytes]), name);
  const res = await fetch(`${base}/api/v1/convert?wait=120`, { method: 'POST', headers: auth, body: form });
  const rec = await res.json();
  if (res.status !== 200 || rec.status !== 'completed') return { ok: false, why: `${res.status} ${rec.status ?? rec.error}: ${JSON.stringify(rec.error ?? rec.message)}` };
  const dl = await fetch(`${base}/api/v1/download/${rec.download_token}`, { headers: auth });
  const out = Buffer.from(await dl.arrayBuffer());
  if (createHash('sha256').update(out).digest('hex') !== rec.output.sha256) return { ok: false, why: 'checksum mismatch' };
  return { ok: true, out, engines: rec.output.engines };
}
