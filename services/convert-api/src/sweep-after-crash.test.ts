// A killed process's sweep lease is taken at once (issue 45). The retention sweep and the
// reconciliation pass run in one process at a time, under a lease that outlives two of the
// holder's intervals plus 10 s (610 s on the defaults). A service killed with SIGKILL
// mid-upload and started again left the partial upload on disk until that lease ran out,
// whatever the new process's interval and grace: the lease now names its holder (machine,
// pid, start time), and a process of the same machine that sees the holder gone takes it.
// A live holder keeps it. Bounded: real server processes on loopback, every wait has a
// deadline.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { openServiceCore } from '@mailconv/platform';
import { createTestDatabase, freePort, startProcess, stopProcess, testBackends, type StartedProcess } from '@mailconv/platform/testing';
import { CONVERT_KEY_PREFIX } from './app.js';
import { loadConvertConfig } from './config.js';
import { CONVERT_MIGRATIONS } from './db/migrations.js';

const SERVER = fileURLToPath(new URL('./server.js', import.meta.url));

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, ms: number): Promise<T> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await sleep(100)) {
    const v = await fn();
    if (v) return v;
  }
  throw new Error(`timed out waiting for ${what}`);
}

for (const backend of testBackends()) {
  describe(`the sweep lease of a killed process on ${backend} (issue 45)`, () => {
    const started: StartedProcess[] = [];
    const roots: string[] = [];
    const drops: Array<() => Promise<void>> = [];
    after(async () => {
      for (const p of started) await stopProcess(p.child, 'SIGKILL');
      for (const drop of drops) await drop();
      for (const root of roots) await rm(root, { recursive: true, force: true });
    });

    /** A storage folder and a database of its own, the settings of a process on them, and an API key. */
    async function stage(): Promise<{ storage: string; env: (sweep: Record<string, string>) => Promise<Record<string, string>>; apiKey: () => Promise<string> }> {
      const root = await mkdtemp(join(tmpdir(), 'convert-sweep-crash-'));
      roots.push(root);
      const db = await createTestDatabase(backend);
      drops.push(db.drop);
      const storage = join(root, 'storage');
      const env = async (sweep: Record<string, string>) => {
        const port = await freePort();
        return { CONVERT_DATABASE_URL: db.url, CONVERT_STORAGE_DIR: storage, CONVERT_PORT: String(port), CONVERT_PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, CONVERT_LOG_LEVEL: 'info', ...sweep };
      };
      const apiKey = async () => {
        const core = await openServiceCore({ database: loadConvertConfig({ CONVERT_DATABASE_URL: db.url }).database, migrations: CONVERT_MIGRATIONS, keyPrefix: CONVERT_KEY_PREFIX });
        try {
          const acct = await core.accounts.createAccount({ email: `sweep-${backend}-${roots.length}@example.test`, plan: 'api' }, new Date());
          assert.ok(acct.ok);
          return acct.apiKey;
        } finally {
          await core.close();
        }
      };
      return { storage, env, apiKey };
    }

    test('a service killed mid-upload and started again removes the partial upload within grace + interval, not after the dead lease', { timeout: 120_000 }, async () => {
      const { storage, env, apiKey } = await stage();
      // The first process sweeps on the defaults (every 300 s: a lease of 610 s).
      const first = await env({});
      const server = await startProcess(SERVER, first);
      started.push(server);
      const key = await apiKey();

      // An upload that stops midway: 8 of the 64 MiB it announces.
      const boundary = 'sweep-after-crash';
      const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
      const req = request({
        host: '127.0.0.1', port: Number(first.CONVERT_PORT), method: 'POST', path: '/api/v1/upload',
        headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(head.length + 64 * 1024 * 1024) },
      });
      req.on('error', () => undefined);
      req.write(head);
      req.write(randomBytes(8 * 1024 * 1024));
      const uploads = join(storage, 'uploads');
      const partial = await until('the partial upload on disk', async () => {
        for (const name of await readdir(uploads)) if (((await stat(join(uploads, name)).catch(() => null))?.size ?? 0) > 0) return join(uploads, name);
        return undefined;
      }, 30_000);
      await stopProcess(server.child, 'SIGKILL');
      req.destroy();
      assert.ok(existsSync(partial), 'the killed process left its partial upload');

      // Started again with a short interval and grace: the dead process's lease is taken at once.
      const grace = 2;
      const interval = 5;
      const again = await startProcess(SERVER, await env({ CONVERT_SWEEP_INTERVAL_SECONDS: String(interval), CONVERT_RECONCILE_GRACE_SECONDS: String(grace) }));
      started.push(again);
      const ready = Date.now();
      const bound = (grace + interval + 8) * 1000;
      await until(`the partial upload to go (still on disk ${bound} ms after the restart; the dead process's lease runs 610 s)`, async () => !existsSync(partial), bound);
      assert.ok(Date.now() - ready < bound);
      await stopProcess(again.child, 'SIGTERM');
    });

    test('a live holder keeps the lease; once it is killed, another process takes the lease at its next sweep', { timeout: 120_000 }, async () => {
      const { storage, env } = await stage();
      const holder = await startProcess(SERVER, await env({}));
      started.push(holder);
      // The holder swept at start and holds the lease for 610 s; the other process sweeps every second.
      const other = await startProcess(SERVER, await env({ CONVERT_SWEEP_INTERVAL_SECONDS: '1', CONVERT_RECONCILE_GRACE_SECONDS: '1' }));
      started.push(other);
      // A file no record owns, idle for a minute: whoever sweeps removes it.
      const stray = join(storage, 'uploads', 'upl_01strayuploadnorow0000000');
      await writeFile(stray, randomBytes(1024));
      const old = new Date(Date.now() - 60_000);
      await utimes(stray, old, old);
      await sleep(4_000);
      assert.ok(existsSync(stray), 'the other process swept under a live holder\'s lease');
      await stopProcess(holder.child, 'SIGKILL');
      const killed = Date.now();
      await until('the other process to take the dead holder\'s lease and sweep', async () => !existsSync(stray), 10_000);
      assert.ok(Date.now() - killed < 10_000);
      await stopProcess(other.child, 'SIGTERM');
    });
  });
}
