import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { findProjectRoot, openServiceCore } from '@mailconv/platform';
import { createTestDatabase, freePort, startProcess, stopProcess, testBackends, testRedisUrl, type StartedProcess } from '@mailconv/platform/testing';
import { pcmWav } from '@mailconv/converter/testing';
import { CONVERT_KEY_PREFIX } from './app.js';
import { loadConvertConfig } from './config.js';
import { CONVERT_MIGRATIONS } from './db/migrations.js';
import type { ConvertTables } from './db/schema.js';

const SERVER = fileURLToPath(new URL('./server.js', import.meta.url));
const FIXTURES = join(findProjectRoot(), 'packages', 'converter', 'test', 'fixtures');
const LEASE_MS = 5000;

/** A mono 16-bit PCM WAV of `seconds` of a tone with a little noise: a few seconds of ffmpeg work per conversion. */
function longWav(seconds: number): Buffer {
  const rate = 44_100;
  const samples = Buffer.alloc(rate * seconds * 2);
  let seed = 1;
  for (let i = 0; i < rate * seconds; i++) {
    seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff;
    samples.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate) + ((seed % 2000) - 1000)), i * 2);
  }
  return pcmWav(samples, rate, 16);
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// The scale-out setup is PostgreSQL + Redis by definition; it runs whenever PostgreSQL is among the backends.
test('scale-out on PostgreSQL + Redis: two API processes and two workers; submits while an API process restarts and a worker is SIGKILLed mid-conversion all complete exactly once, downloadable from either API process; a shred through one API process stops a conversion running on a worker', { skip: !testBackends().includes('postgres'), timeout: 300_000 }, async () => {
  const db = await createTestDatabase('postgres');
  const storage = await mkdtemp(join(tmpdir(), 'convert-scale-'));
  const queue = `convert-test-${randomUUID()}`;
  const plansFile = join(storage, 'plans.json');
  await writeFile(plansFile, JSON.stringify({ plans: { api: { rateLimitRpm: 100_000 } } }));
  const [port1, port2] = [await freePort(), await freePort()];
  const env = {
    CONVERT_DATABASE_URL: db.url,
    CONVERT_REDIS_URL: testRedisUrl(),
    CONVERT_QUEUE: queue,
    CONVERT_STORAGE_DIR: join(storage, 'shared'),
    CONVERT_PLANS_FILE: plansFile,
    CONVERT_LEASE_MS: String(LEASE_MS),
    CONVERT_POLL_MS: '200',
    CONVERT_MAX_RUNNING: '2',
    CONVERT_LIBREOFFICE_INSTANCES: '1',
    CONVERT_LOG_LEVEL: 'info',
  };
  const api = (port: number) => startProcess(SERVER, { ...env, CONVERT_ROLE: 'api', CONVERT_PORT: String(port), CONVERT_PUBLIC_BASE_URL: `http://127.0.0.1:${port}` });
  const worker = () => startProcess(SERVER, { ...env, CONVERT_ROLE: 'worker' });
  const admin = await openServiceCore<ConvertTables>({ database: loadConvertConfig(env).database, migrations: CONVERT_MIGRATIONS, keyPrefix: CONVERT_KEY_PREFIX });
  const running: StartedProcess[] = [];
  const track = async (p: Promise<StartedProcess>) => {
    const started = await p;
    running.push(started);
    return started;
  };
  try {
    const created = await admin.accounts.createAccount({ email: 'scale@example.test', plan: 'api' });
    assert.ok(created.ok);
    const auth = { authorization: `Bearer ${created.apiKey}` };
    const [, w1, w2] = [await track(api(port1)), await track(worker()), await track(worker())];
    let api2 = await track(api(port2));
    const base = (port: number) => `http://127.0.0.1:${port}`;
    const getJson = async (port: number, path: string) => {
      const res = await fetch(`${base(port)}${path}`, { headers: auth });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const submit = async (port: number, name: string, bytes: Buffer, target: string) => {
      const form = new FormData();
      form.set('target_format', target);
      form.set('file', new Blob([bytes]), name);
      const res = await fetch(`${base(port)}/api/v1/jobs`, { method: 'POST', headers: auth, body: form });
      const body = (await res.json()) as Record<string, unknown>;
      assert.equal(res.status, 202, JSON.stringify(body));
      return body.id as string;
    };
    const rows = () => admin.database.db.selectFrom('conversions').selectAll().execute();
    const outputsOf = (id: string) => readdirSync(join(storage, 'shared', 'outputs')).filter((f) => f.startsWith(`${id}.`));

    const docx = await readFile(join(FIXTURES, 'sample.docx'));
    const pptx = await readFile(join(FIXTURES, 'sample.pptx'));
    const png = await readFile(join(FIXTURES, 'sample.png'));
    const wav = longWav(600);
    const work: Array<[string, Buffer, string]> = [
      ['a.docx', docx, 'pdf'], ['b.png', png, 'webp'], ['c.pptx', pptx, 'pdf'], ['d.png', png, 'jpg'], ['e.docx', docx, 'txt'], ['f.png', png, 'pdf'],
    ];
    const ids: string[] = [];
    // Half through each API process, then the second restarts gracefully, then the other half.
    for (const [i, [name, bytes, target]] of work.entries()) ids.push(await submit(i % 2 ? port2 : port1, name, bytes, target));
    assert.equal(await stopProcess(api2.child, 'SIGTERM'), 0, 'graceful exit');
    api2 = await track(api(port2));
    for (const [i, [name, bytes, target]] of work.entries()) ids.push(await submit(i % 2 ? port1 : port2, `2${name}`, bytes, target));

    // Two long conversions: whichever worker runs one is SIGKILLed in the middle of it.
    const long = [await submit(port1, 'long1.wav', wav, 'mp3'), await submit(port2, 'long2.wav', wav, 'mp3')];
    ids.push(...long);
    const workers = new Map([[w1.ready.worker_id as string, w1], [w2.ready.worker_id as string, w2]]);
    let victim: { worker: StartedProcess; conversion: string } | undefined;
    for (const deadline = Date.now() + 120_000; !victim && Date.now() < deadline; await sleep(50)) {
      const held = (await rows()).find((r) => long.includes(r.id) && r.status === 'processing' && r.lease_owner);
      if (held) victim = { worker: workers.get(held.lease_owner!.split(':')[0]!)!, conversion: held.id };
    }
    assert.ok(victim, 'a worker started a long conversion');
    const victimId = victim.worker.ready.worker_id as string;
    await stopProcess(victim.worker.child, 'SIGKILL');
    const killedAt = Date.now();
    // What the dead worker held (it can change nothing any more): these, and only these, run again.
    const held = (await rows()).filter((r) => r.status === 'processing' && r.lease_owner?.startsWith(`${victimId}:`)).map((r) => r.id).sort();
    assert.ok(held.includes(victim.conversion));
    await track(worker());

    // Everything completes, each exactly once: one attempt (two for the one killed mid-way), one output file, one charge.
    for (const id of ids) {
      let rec: Record<string, unknown>;
      for (;;) {
        rec = (await getJson(port1, `/api/v1/jobs/${id}`)).body;
        if (rec.status !== 'queued' && rec.status !== 'processing') break;
        await sleep(100);
      }
      assert.equal(rec.status, 'completed', `${id}: ${JSON.stringify(rec.error)}`);
      const output = rec.output as { sha256: string; size_bytes: number };
      for (const port of [port1, port2]) {
        const res = await fetch(`${base(port)}/api/v1/download/${rec.download_token as string}`, { headers: auth });
        assert.equal(res.status, 200);
        const bytes = Buffer.from(await res.arrayBuffer());
        assert.equal(bytes.length, output.size_bytes);
        assert.equal(sha256(bytes), output.sha256, `${id} downloaded through port ${port}`);
      }
      assert.equal(outputsOf(id).length, 1, `${id}: one output file (${outputsOf(id).join(', ')})`);
    }
    const final = await rows();
    assert.deepEqual(final.filter((r) => r.attempts === 2).map((r) => r.id).sort(), held, 'what the killed worker held ran again, once');
    for (const r of final.filter((r) => held.includes(r.id))) assert.ok(Date.parse(r.completed_at!) - killedAt >= LEASE_MS - 1500, 'not retried before the lease expired');
    for (const r of final.filter((r) => !held.includes(r.id))) assert.equal(r.attempts, 1, `${r.id} ran once`);
    const used = async (port: number) => ((await getJson(port, '/api/v1/account/usage')).body.quota as { used: number }).used;
    assert.equal(await used(port2), ids.length, 'each charged once, none refunded');

    // Shred through API 2 of a conversion that a worker is running.
    const doomed = await submit(port1, 'long3.wav', wav, 'mp3');
    let holder: string | null = null;
    for (const deadline = Date.now() + 60_000; !holder && Date.now() < deadline; await sleep(20)) {
      const r = await admin.database.db.selectFrom('conversions').select(['status', 'lease_owner']).where('id', '=', doomed).executeTakeFirstOrThrow();
      if (r.status === 'processing') holder = r.lease_owner;
    }
    assert.ok(holder, 'the conversion is running on a worker');
    const upload = (await admin.database.db.selectFrom('conversions').select('upload_id').where('id', '=', doomed).executeTakeFirstOrThrow()).upload_id;
    const started = Date.now();
    const res = await fetch(`${base(port2)}/api/v1/jobs/${doomed}`, { method: 'DELETE', headers: auth });
    const shredMs = Date.now() - started;
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { status: string }).status, 'shredded');
    // Before the answer: the worker stopped and let go, and nothing of it is left on disk.
    const after = await admin.database.db.selectFrom('conversions').selectAll().where('id', '=', doomed).executeTakeFirstOrThrow();
    assert.equal(after.lease_owner, null, 'the worker let go before the answer');
    assert.deepEqual(outputsOf(doomed), []);
    assert.deepEqual(readdirSync(join(storage, 'shared', 'uploads')).filter((f) => f === upload), []);
    assert.ok(shredMs < LEASE_MS, `answered in ${shredMs} ms: the worker stopped at once, the shred did not wait out the lease`);
    await sleep(1500);
    assert.deepEqual(outputsOf(doomed), [], 'no late output');
    assert.equal(await used(port1), ids.length, 'shredded before it finished: refunded');

    // The cluster still serves.
    const last = await submit(port2, 'z.png', png, 'webp');
    for (;;) {
      const s = (await getJson(port2, `/api/v1/jobs/${last}`)).body.status;
      if (s === 'completed') break;
      assert.ok(s === 'queued' || s === 'processing', String(s));
      await sleep(100);
    }
    for (const p of running) assert.ok([0, null].includes(await stopProcess(p.child, 'SIGTERM')));
  } finally {
    await Promise.all(running.map((p) => stopProcess(p.child, 'SIGKILL')));
    await admin.close();
    const redis = new Redis(testRedisUrl());
    const keys = await redis.keys(`bull:${queue}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    await db.drop();
    await rm(storage, { recursive: true, force: true });
  }
});
