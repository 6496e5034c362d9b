// Least privilege (issue 21): `npm start` run as root installs what is missing and then runs
// both services as the unprivileged user `mailconv` (no capabilities), which owns the data
// folders; the conversion engines run as `mailconv-engine`, an even less privileged user of
// their own. The test starts the real `scripts/start.mjs` (as CI does, as root) on free
// ports and its own data folders, reads the processes' uids from /proc, and converts through
// sandboxed engines (pandoc; the warm LibreOffice pool, started at boot). Without root it
// fails and says why: making users needs root, and CI runs as root.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { findProjectRoot } from '@mailconv/platform';
import { freePort } from '@mailconv/platform/testing';

const ROOT = findProjectRoot();
const data = mkdtempSync(join(tmpdir(), 'least-privilege-'));
// The data folders' parent must let the service user pass (a 0700 temp folder would not).
chmodSync(data, 0o755);
const PID_FILE = join(data, 'npm-start.pid');
let start: ChildProcess;
let output = '';
let convertUrl = '';
let convertKey = '';

/** Real uid, effective capabilities and parent of a process, from /proc. */
function proc(pid: number): { uid: number; capEff: bigint; ppid: number; name: string } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => new RegExp(`^${name}:\\s+(\\S+)`, 'm').exec(status)?.[1] ?? '';
  return { uid: Number(field('Uid')), capEff: BigInt(`0x${field('CapEff')}`), ppid: Number(field('PPid')), name: field('Name') };
}

/** Every live process below `pid`. */
function descendants(pid: number): number[] {
  const all = readdirSync('/proc').filter((e) => /^\d+$/.test(e)).map(Number);
  const parent = new Map<number, number>();
  for (const p of all) {
    try {
      parent.set(p, proc(p).ppid);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const walk = (of: number) => {
    for (const [child, ppid] of parent) {
      if (ppid !== of) continue;
      out.push(child);
      walk(child);
    }
  };
  walk(pid);
  return out;
}

const uidOf = (name: string) => Number(/^[^:]+:[^:]*:(\d+):/m.exec(readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith(`${name}:`)) ?? '')?.[1] ?? NaN);

before(async () => {
  assert.equal(process.getuid?.(), 0, 'this test runs `npm start` as root, which makes the service users: run it as root (CI does)');
  const env = {
    ...process.env,
    EMAIL_PORT: String(await freePort()),
    CONVERT_PORT: String(await freePort()),
    // As the default layout (data/email, data/convert): the folder above is made on the way.
    EMAIL_DATA_DIR: join(data, 'data', 'email'),
    CONVERT_DATA_DIR: join(data, 'data', 'convert'),
    CONVERT_PRESTART: 'true',
    CONVERT_LIBREOFFICE_INSTANCES: '1',
    MAILCONV_PID_FILE: PID_FILE,
  };
  start = spawn(process.execPath, [join(ROOT, 'scripts', 'start.mjs')], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  createInterface({ input: start.stderr! }).on('line', (l) => (output += `${l}\n`));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not print its banner in 180 s:\n${output}`)), 180_000);
    start.once('exit', (code) => reject(new Error(`npm start exited ${code}:\n${output}`)));
    createInterface({ input: start.stdout! }).on('line', (l) => {
      output += `${l}\n`;
      if (/Stop with Ctrl-C/.test(l)) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  convertUrl = /File conversion API:\s+(http:\S+)/.exec(output)?.[1] ?? '';
  convertKey = /(cv_live_[0-9A-Za-z]+)/.exec(output)?.[1] ?? '';
  assert.ok(convertUrl && convertKey, output);
});

after(async () => {
  if (start && start.exitCode === null) {
    const exited = new Promise((resolve) => start.once('exit', resolve));
    start.kill('SIGTERM');
    await Promise.race([exited, sleep(30_000)]);
    if (start.exitCode === null) start.kill('SIGKILL');
  }
  rmSync(data, { recursive: true, force: true });
});

test('both services run as the unprivileged user mailconv, with no capabilities', { timeout: 60_000 }, () => {
  const service = uidOf('mailconv');
  assert.ok(service > 0, 'the user mailconv exists');
  const servers = descendants(start.pid!).filter((p) => {
    try {
      // By command line: Node 24 names its main thread "MainThread", not "node".
      return readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').some((arg) => arg.endsWith('/dist/server.js'));
    } catch {
      return false;
    }
  });
  assert.equal(servers.length, 2, `two service processes below npm start:\n${output}`);
  for (const pid of servers) {
    const p = proc(pid);
    assert.equal(p.uid, service, `service process ${pid} runs as uid ${p.uid}`);
    assert.equal(p.capEff, 0n, `service process ${pid} keeps no capabilities`);
  }
  assert.match(output, /Running as the unprivileged user mailconv/);
  // The data folders and the databases are the service user's.
  for (const file of [join(data, 'data', 'email', 'email.db'), join(data, 'data', 'convert', 'convert.db'), join(data, 'data', 'convert', 'storage', 'uploads')]) {
    assert.equal(statSync(file).uid, service, file);
  }
});

/** Processes below `npm start` whose name (/proc comm) is `name`. */
function below(name: string): number[] {
  return descendants(start.pid!).filter((p) => {
    try {
      return proc(p).name === name;
    } catch {
      return false;
    }
  });
}

test('the engines run as mailconv-engine, and conversions through them work', { timeout: 120_000 }, async () => {
  const engine = uidOf('mailconv-engine');
  assert.ok(engine > 0 && engine !== uidOf('mailconv'));
  // The warm LibreOffice instance, started at boot (CONVERT_PRESTART).
  const offices = below('soffice.bin');
  assert.ok(offices.length >= 1, 'a warm soffice below the conversion service');
  for (const pid of offices) assert.equal(proc(pid).uid, engine, `soffice ${pid} runs as the engine user`);
  const auth = { authorization: `Bearer ${convertKey}` };
  for (const [name, body, target, engines] of [
    ['note.md', '# Title\n\nSome *text*.\n', 'html', 'pandoc'],
    ['note.md', '# Title\n\nSome *text*.\n', 'pdf', 'chromium'],
    ['note.md', '# Title\n\nSome *text*.\n', 'docx', 'pandoc,libreoffice'],
    // A browser of the Chromium pool, under sudo as the engine user, driven through its pipe.
    ['page.html', '<h1 style="color:#1f6feb">Title</h1><script>document.write("by script")</script>', 'pdf', 'chromium'],
  ] as const) {
    const form = new FormData();
    form.append('target_format', target);
    form.append('file', new Blob([body]), name);
    const res = await fetch(`${convertUrl}/api/v1/jobs`, { method: 'POST', headers: auth, body: form });
    assert.equal(res.status, 202, await res.clone().text());
    const { id } = (await res.json()) as { id: string };
    let record: { status: string; output?: { engines: string[] }; error?: unknown } = { status: 'queued' };
    for (let i = 0; i < 120 && ['queued', 'processing'].includes(record.status); i++) {
      await sleep(500);
      record = (await (await fetch(`${convertUrl}/api/v1/jobs/${id}`, { headers: auth })).json()) as typeof record;
    }
    assert.equal(record.status, 'completed', `${JSON.stringify(record)}\nwhat the services logged:\n${output.split("\n").filter((l) => /warn|error|WARN|ERROR|failed/.test(l)).slice(-8).join("\n")}`);
    assert.equal(record.output?.engines.join(','), engines);
  }
  const browsers = below('chromium');
  assert.ok(browsers.length >= 1, 'the browser runs below the conversion service');
  for (const pid of browsers) assert.equal(proc(pid).uid, engine, `chromium ${pid} runs as the engine user`);
  // Every job folder was removed, what the engine user made in it included.
  assert.deepEqual(readdirSync(join(data, 'data', 'convert', 'storage', 'work')).filter((n) => n.startsWith('job-')), []);
});

test('a batch of a zip made by Python’s zipfile (members 0600, unpacked by the engine user) converts (issue 45)', { timeout: 120_000 }, async () => {
  const zip = spawnSync('/usr/bin/python3', ['-c', 'import io, sys, zipfile\nb = io.BytesIO()\nwith zipfile.ZipFile(b, "w") as z:\n    z.writestr("a.txt", "first\\n"); z.writestr("b.txt", "second\\n")\nsys.stdout.buffer.write(b.getvalue())']).stdout;
  const auth = { authorization: `Bearer ${convertKey}` };
  const form = new FormData();
  form.append('target_format', 'pdf');
  form.append('batch', 'true');
  form.append('file', new Blob([zip]), 'small.zip');
  const res = await fetch(`${convertUrl}/api/v1/jobs`, { method: 'POST', headers: auth, body: form });
  assert.equal(res.status, 202, await res.clone().text());
  const { id } = (await res.json()) as { id: string };
  let record: { status: string; output?: { files?: unknown }; error?: unknown } = { status: 'queued' };
  for (let i = 0; i < 200 && ['queued', 'processing'].includes(record.status); i++) {
    await sleep(500);
    record = (await (await fetch(`${convertUrl}/api/v1/jobs/${id}`, { headers: auth })).json()) as typeof record;
  }
  assert.equal(record.status, 'completed', `${JSON.stringify(record)}\nwhat the services logged:\n${output.split('\n').filter((l) => /warn|error|WARN|ERROR|failed/.test(l)).slice(-8).join('\n')}`);
  assert.deepEqual(record.output?.files, { total: 2, converted: 2, failed: 0 });
});

test('npm stop ends the start from elsewhere, gracefully, and says so; a second npm stop finds nothing running', { timeout: 60_000 }, async () => {
  assert.equal(readFileSync(PID_FILE, 'utf8').trim(), String(start.pid), 'npm start wrote its pid');
  const exited = new Promise<number | null>((resolve) => start.once('exit', (code) => resolve(code)));
  const stop = spawnSync(process.execPath, [join(ROOT, 'scripts', 'stop.mjs')], { cwd: ROOT, env: { ...process.env, MAILCONV_PID_FILE: PID_FILE }, encoding: 'utf8', timeout: 45_000 });
  assert.equal(stop.status, 0, stop.stderr);
  assert.match(stop.stdout, /^Stopped mailconv \(npm start, pid \d+\)\.\n$/);
  assert.equal(await exited, 0, `npm start exits 0 on npm stop:\n${output}`);
  assert.ok(!existsSync(PID_FILE), 'the pid file is gone with the start');
  const again = spawnSync(process.execPath, [join(ROOT, 'scripts', 'stop.mjs')], { cwd: ROOT, env: { ...process.env, MAILCONV_PID_FILE: PID_FILE }, encoding: 'utf8', timeout: 45_000 });
  assert.equal(again.status, 0, again.stderr);
  assert.match(again.stdout, /not running/);
});
