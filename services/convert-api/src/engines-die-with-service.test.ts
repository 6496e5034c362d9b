// Engines die with their service (issue 45). As `npm start` runs it, the conversion service
// is the user mailconv and its engines run as mailconv-engine through sudo. sudo, a set-uid
// program, neither keeps a parent-death signal nor dies with the service, so a service killed
// with SIGKILL left the whole chain running: sudo, bubblewrap, the engine mid-conversion and
// the warm LibreOffice and Chromium instances, holding their job folders. The test starts the
// real service that way (as root, which makes the users as npm start does; CI runs as root),
// kills it with SIGKILL while ffmpeg encodes, and then no process of this test's storage
// folder (by command line or working folder, so other tests' engines are never counted) may
// be left after 5 s. Bounded: loopback only, every wait has a deadline.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { findProjectRoot, openServiceCore } from '@mailconv/platform';
import { createTestDatabase, freePort, startProcess, stopProcess, testBackends, type StartedProcess } from '@mailconv/platform/testing';
import { pcmWav } from '@mailconv/converter/testing';
import { CONVERT_KEY_PREFIX } from './app.js';
import { loadConvertConfig } from './config.js';
import { CONVERT_MIGRATIONS } from './db/migrations.js';

const SERVER = fileURLToPath(new URL('./server.js', import.meta.url));

interface ServiceUsers {
  user: string;
  engineUser: string;
  uid: number;
  gid: number;
}

/** A live process: its uid, name and command line, from /proc. */
interface Proc {
  pid: number;
  ppid: number;
  uid: number;
  name: string;
  cmdline: string;
}

function readProc(pid: number): Proc | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) => new RegExp(`^${name}:\\s+(\\S+)`, 'm').exec(status)?.[1] ?? '';
    if (field('State') === 'Z') return null;
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
    return { pid, ppid: Number(field('PPid')), uid: Number(field('Uid')), name: field('Name'), cmdline };
  } catch {
    return null;
  }
}

/** Every live process whose command line or working folder names `marker` (a path unique to this test). */
function processesOf(marker: string): Proc[] {
  const out: Proc[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    const p = readProc(Number(e));
    if (!p) continue;
    let cwd = '';
    try {
      cwd = readlinkSync(`/proc/${e}/cwd`);
    } catch {
      // gone, or a kernel thread
    }
    if (p.cmdline.includes(marker) || cwd.startsWith(marker)) out.push(p);
  }
  return out;
}

const show = (ps: readonly Proc[]) => ps.map((p) => `${p.pid} uid ${p.uid} ${p.name}: ${p.cmdline.slice(0, 100)}`).join('\n');

async function until<T>(what: string, fn: () => T | undefined | false, ms: number): Promise<T> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await sleep(100)) {
    const v = fn();
    if (v) return v;
  }
  throw new Error(`timed out waiting for ${what}`);
}

/**
 * A start file that becomes the service user as `npm start`'s setpriv does (its groups, then
 * its gid and uid: no capabilities are left) and then runs the server.
 */
function serviceStartFile(dir: string, users: ServiceUsers): string {
  const file = join(dir, 'start-as-service-user.mjs');
  writeFileSync(file, `process.initgroups(${users.uid}, ${users.gid});\nprocess.setgid(${users.gid});\nprocess.setuid(${users.uid});\nawait import(${JSON.stringify(pathToFileURL(SERVER).href)});\n`);
  return file;
}

for (const backend of testBackends()) {
  describe(`engines die with the conversion service on ${backend} (issue 45)`, () => {
    let root = '';
    let server: StartedProcess | undefined;
    let drop: () => Promise<void> = async () => undefined;
    after(async () => {
      if (server) await stopProcess(server.child, 'SIGKILL');
      // Whatever a failing run left behind goes, so that the suite goes on clean.
      if (root) for (const p of processesOf(root)) process.kill(p.pid, 'SIGKILL');
      await drop();
      if (root) rmSync(root, { recursive: true, force: true });
    });

    test('a service killed with SIGKILL mid-conversion leaves no engine running after 5 s', { timeout: 240_000 }, async () => {
      assert.equal(process.getuid?.(), 0, 'this test runs the service as mailconv and its engines as mailconv-engine, which needs root (CI runs as root)');
      root = mkdtempSync(join(tmpdir(), 'convert-engines-die-'));
      // The service user must pass through the test's folder to its own below it.
      chmodSync(root, 0o755);
      const serviceUsers = (await import(pathToFileURL(join(findProjectRoot(), 'scripts', 'lib', 'service-user.mjs')).href)) as {
        ensureServiceUsers: (env: Record<string, string>) => ServiceUsers | null;
      };
      // The users and the sudo rule as npm start makes them (a no-op when they exist), and
      // the data folder, the service user's.
      const data = join(root, 'data', 'convert');
      const users = serviceUsers.ensureServiceUsers({ EMAIL_DATA_DIR: join(root, 'data', 'email'), CONVERT_DATA_DIR: data });
      assert.ok(users);
      const engineUid = Number(readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith(`${users.engineUser}:`))?.split(':')[2]);
      assert.ok(engineUid > 0 && engineUid !== users.uid);
      const storage = join(data, 'storage');
      let url = `sqlite:${join(data, 'convert.db')}`;
      if (backend === 'postgres') ({ url, drop } = await createTestDatabase('postgres'));
      const port = await freePort();
      const env = {
        CONVERT_DATA_DIR: data,
        CONVERT_DATABASE_URL: url,
        CONVERT_STORAGE_DIR: storage,
        CONVERT_PORT: String(port),
        CONVERT_PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
        CONVERT_ENGINE_USER: users.engineUser,
        // The warm instances, started at boot: what lingered longest.
        CONVERT_PRESTART: 'true',
        CONVERT_LIBREOFFICE_INSTANCES: '1',
        CONVERT_LOG_LEVEL: 'info',
      };
      server = await startProcess(serviceStartFile(root, users), env);
      // The server made the database as the service user; the account is added to it.
      const core = await openServiceCore({ database: loadConvertConfig(env).database, migrations: CONVERT_MIGRATIONS, keyPrefix: CONVERT_KEY_PREFIX });
      const acct = await core.accounts.createAccount({ email: `engines-die-${backend}@example.test`, plan: 'api' }, new Date());
      await core.close();
      assert.ok(acct.ok);
      const auth = { authorization: `Bearer ${acct.apiKey}` };

      // A long encode: four minutes of noise to MP3 takes ffmpeg several seconds.
      const form = new FormData();
      form.append('target_format', 'mp3');
      form.append('file', new Blob([pcmWav(randomBytes(44_100 * 240 * 2), 44_100, 16)]), 'noise.wav');
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/jobs`, { method: 'POST', headers: auth, body: form });
      assert.equal(res.status, 202, await res.clone().text());
      const running = await until('ffmpeg and the warm soffice running as the engine user', () => {
        const ps = processesOf(storage);
        const engine = ps.filter((p) => p.uid === engineUid);
        return engine.some((p) => p.name === 'ffmpeg') && engine.some((p) => p.name === 'soffice.bin') ? ps : false;
      }, 90_000);
      const pid = server.child.pid as number;
      const reapers = readdirSync('/proc').filter((e) => /^\d+$/.test(e)).map((e) => readProc(Number(e))).filter((p): p is Proc => p !== null && p.ppid === pid && p.cmdline.endsWith('/reaper.js'));

      await stopProcess(server.child, 'SIGKILL');
      const killedAt = Date.now();
      let left = processesOf(storage);
      while (left.length > 0 && Date.now() - killedAt < 5_000) {
        await sleep(100);
        left = processesOf(storage);
      }
      assert.deepEqual(show(left), '', `processes of the killed service still running ${Date.now() - killedAt} ms after its SIGKILL (of these that ran before it:\n${show(running)})`);
      // The service's reaper (packages/converter/src/exec/reaper.ts) goes once it has done its work.
      assert.equal(reapers.length, 1, 'one reaper below the service');
      for (const r of reapers) assert.equal(readProc(r.pid), null, `the reaper ${r.pid} is still running`);
    });
  });
}
