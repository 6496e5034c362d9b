// Shredding covers every copy (issue 28): a conversion process SIGKILLed mid-run leaves its
// job folder behind, holding a hard link to the customer's upload. After a shred, no file
// under the storage folder or the database's folder may hold the upload's bytes: every file
// there is hashed and compared with the upload's SHA-256. Then the reconciliation pass:
// bytes no record owns (an upload whose process died mid-stream, a job folder of a
// conversion that no longer runs) leave the disk once idle past the grace period.
// Bounded: real server processes on loopback, every wait has a deadline.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { openServiceCore } from '@mailconv/platform';
import { createTestDatabase, freePort, startProcess, stopProcess, testBackends, type StartedProcess } from '@mailconv/platform/testing';
import { pcmWav } from '@mailconv/converter/testing';
import { CONVERT_KEY_PREFIX } from './app.js';
import { loadConvertConfig } from './config.js';
import { CONVERT_MIGRATIONS } from './db/migrations.js';

const SERVER = fileURLToPath(new URL('./server.js', import.meta.url));

/** A WAV of noise (unique bytes) long enough that its conversion to MP3 takes a few seconds. */
function noiseWav(seconds: number): Buffer {
  return pcmWav(randomBytes(44_100 * seconds * 2), 44_100, 16);
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** Every regular file below `dir` whose SHA-256 is `digest` (links and copies alike). */
async function filesWithDigest(dir: string, digest: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true }).catch(() => [])) {
      const path = join(d, e.name);
      if (e.isDirectory()) await walk(path);
      else if (e.isFile()) {
        const hash = createHash('sha256');
        for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
        if (hash.digest('hex') === digest) found.push(path);
      }
    }
  };
  await walk(dir);
  return found;
}

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, ms = 60_000): Promise<T> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await sleep(50)) {
    const v = await fn();
    if (v) return v;
  }
  throw new Error(`timed out waiting for ${what}`);
}

for (const backend of testBackends()) {
  describe(`shred after a crash and reconciliation on ${backend}`, () => {
    const started: StartedProcess[] = [];
    let root: string;
    let drop: () => Promise<void> = async () => undefined;
    after(async () => {
      for (const p of started) await stopProcess(p.child, 'SIGKILL');
      await drop();
      if (root) await rm(root, { recursive: true, force: true });
    });

    test('after a SIGKILL mid-conversion and a shred, no file under the storage or database folder holds the upload', { timeout: 180_000 }, async () => {
      root = await mkdtemp(join(tmpdir(), 'convert-shred-'));
      const db = await createTestDatabase(backend);
      drop = db.drop;
      const storage = join(root, 'storage');
      const port = await freePort();
      const env = {
        CONVERT_DATABASE_URL: db.url,
        CONVERT_STORAGE_DIR: storage,
        CONVERT_PORT: String(port),
        CONVERT_PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
        CONVERT_LEASE_MS: '3000',
        CONVERT_POLL_MS: '200',
        CONVERT_SWEEP_INTERVAL_SECONDS: '1',
        CONVERT_RECONCILE_GRACE_SECONDS: '2',
        CONVERT_LOG_LEVEL: 'info',
      };
      let server = await startProcess(SERVER, env);
      started.push(server);
      const core = await openServiceCore({ database: loadConvertConfig(env).database, migrations: CONVERT_MIGRATIONS, keyPrefix: CONVERT_KEY_PREFIX });
      const acct = await core.accounts.createAccount({ email: `shred-${backend}@example.test`, plan: 'api' }, new Date());
      assert.ok(acct.ok);
      const auth = { authorization: `Bearer ${acct.apiKey}` };
      const base = `http://127.0.0.1:${port}`;

      const wav = noiseWav(240);
      const digest = sha256(wav);
      const form = new FormData();
      form.append('target_format', 'mp3');
      form.append('file', new Blob([wav]), 'voice.wav');
      const res = await fetch(`${base}/api/v1/jobs`, { method: 'POST', headers: auth, body: form });
      assert.equal(res.status, 202, await res.clone().text());
      const { id } = (await res.json()) as { id: string };

      // The engine is running: its job folder, named after the conversion, holds the upload.
      const work = join(storage, 'work');
      const folder = await until('the job folder', async () => (await readdir(work)).find((n) => n.startsWith(`job-${id}-`)));
      await until('the upload linked into the job folder', async () => (await readdir(join(work, folder))).some((n) => n.startsWith('source.')));
      await stopProcess(server.child, 'SIGKILL');
      assert.ok(existsSync(join(work, folder)), 'the killed process left its job folder');
      assert.ok((await filesWithDigest(storage, digest)).some((p) => p.startsWith(join(work, folder))), 'the folder holds the upload');

      // A new process; the shred answers, and every copy is gone.
      server = await startProcess(SERVER, env);
      started.push(server);
      const shred = await fetch(`${base}/api/v1/jobs/${id}`, { method: 'DELETE', headers: auth });
      assert.equal(shred.status, 200, await shred.clone().text());
      assert.equal(((await shred.json()) as { status: string }).status, 'shredded');
      const dbDir = backend === 'sqlite' ? dirname(db.url.replace(/^sqlite:/, '')) : null;
      for (const dir of [storage, ...(dbDir ? [dbDir] : [])]) {
        assert.deepEqual(await filesWithDigest(dir, digest), [], `no copy of the shredded upload under ${dir}`);
      }
      assert.deepEqual((await readdir(work)).filter((n) => n.startsWith('job-')), [], 'no job folder left');

      // Reconciliation: an upload file without a row (its process died mid-stream) and a job
      // folder of a conversion that is not running, both idle past the grace period, go.
      const stray = join(storage, 'uploads', 'upl_01strayuploadnorow0000000');
      await writeFile(stray, randomBytes(1024));
      const strayJob = join(work, 'job-cnv_01strayconversion00000000-Ab12Cd');
      await mkdir(strayJob);
      await writeFile(join(strayJob, 'source.wav'), randomBytes(1024));
      const old = new Date(Date.now() - 60_000);
      await utimes(stray, old, old);
      await utimes(strayJob, old, old);
      await until('the reconciliation pass', async () => !existsSync(stray) && !existsSync(strayJob), 30_000);
      // A fresh upload (with its row) is kept.
      const keep = new FormData();
      keep.append('file', new Blob([Buffer.from('keep me')]), 'keep.txt');
      const up = await fetch(`${base}/api/v1/upload`, { method: 'POST', headers: auth, body: keep });
      assert.equal(up.status, 201);
      const kept = join(storage, 'uploads', ((await up.json()) as { upload_id: string }).upload_id);
      await utimes(kept, old, old);
      await sleep(3_000);
      assert.ok(existsSync(kept), 'an upload with a live row stays');
      await core.close();
      await stopProcess(server.child, 'SIGTERM');
    });
  });
}
