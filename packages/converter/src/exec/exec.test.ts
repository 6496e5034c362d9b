import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { processGone, scratchDir } from '../testing/tools.js';
import { runSandboxed, SANDBOX_UID, sandboxCapabilities } from './exec.js';

let dir: string;
before(async () => {
  dir = await scratchDir('conv-exec-');
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('arguments are passed as an array, never through a shell', async () => {
  const r = await runSandboxed('/bin/echo', ['$(id)', '; rm -rf /', '`x`'], { cwd: dir, timeoutMs: 5000 });
  assert.equal(r.exitCode, 0);
  assert.equal(r.stdout.toString(), '$(id) ; rm -rf / `x`\n');
});

test('relative program names are refused', () => {
  assert.throws(() => runSandboxed('echo', ['x'], { cwd: dir, timeoutMs: 1000 }), /absolute path/);
});

test('the environment is minimal: HOME is the job folder, no inherited variables', async () => {
  process.env.MAILCONV_TEST_SECRET = 'do-not-leak';
  try {
    const r = await runSandboxed('/usr/bin/env', [], { cwd: dir, timeoutMs: 5000, env: { OMP_THREAD_LIMIT: '1' } });
    const env = r.stdout.toString();
    assert.match(env, new RegExp(`^HOME=${dir}$`, 'm'));
    assert.match(env, /^PATH=\/usr\/bin:\/bin$/m);
    assert.match(env, /^OMP_THREAD_LIMIT=1$/m);
    assert.doesNotMatch(env, /MAILCONV_TEST_SECRET/);
  } finally {
    delete process.env.MAILCONV_TEST_SECRET;
  }
});

/** Host pids whose command line holds `marker` (pids inside the sandbox are its own namespace's). */
function pidsWith(marker: string): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${e}/cmdline`, 'utf8').includes(marker) && !processGone(Number(e))) out.push(Number(e));
    } catch {
      // gone
    }
  }
  return out;
}

test('a time-out kills the whole process group, grandchildren included', async () => {
  // The child starts a grandchild in the background, then hangs; both carry a marker in argv.
  const marker = `301.${Date.now() % 100000}`;
  const r = await runSandboxed('/bin/sh', ['-c', `sleep ${marker} & sleep ${marker}`], { cwd: dir, timeoutMs: 500 });
  assert.equal(r.timedOut, true);
  for (let i = 0; i < 50 && pidsWith(marker).length; i++) await new Promise((res) => setTimeout(res, 20));
  assert.deepEqual(pidsWith(marker), [], 'a process of the run is still alive');
});

test('engines see only their folder, the system and named files, as an unprivileged user (#13)', async () => {
  const caps = sandboxCapabilities();
  assert.equal(caps.filesystem_isolated, true, 'bubblewrap should work here');
  await writeFile(join(dir, 'mine.txt'), 'job data');
  const outside = await mkdtemp(join(tmpdir(), 'conv-exec-outside-'));
  await writeFile(join(outside, 'secret.txt'), 'SECRET');
  try {
    const script = `id -u; cat mine.txt; echo; for p in /etc/passwd /etc/shadow /root /home ${outside}/secret.txt ${process.cwd()}; do test -e $p && echo "SEES $p"; done; echo ok > written.txt`;
    const r = await runSandboxed('/bin/sh', ['-c', script], { cwd: dir, timeoutMs: 10_000 });
    assert.equal(r.exitCode, 0, r.stderr);
    const lines = r.stdout.toString().trim().split('\n');
    if (process.getuid?.() === 0) assert.equal(lines[0], String(SANDBOX_UID));
    assert.equal(lines[1], 'job data');
    assert.deepEqual(lines.filter((l) => l.startsWith('SEES')), []);
    assert.equal(await readFile(join(dir, 'written.txt'), 'utf8'), 'ok\n');
    const named = await runSandboxed('/bin/cat', [join(outside, 'secret.txt')], { cwd: dir, timeoutMs: 10_000, readOnly: [outside] });
    if (process.getuid?.() !== 0) assert.equal(named.stdout.toString(), 'SECRET');
    const write = await runSandboxed('/bin/sh', ['-c', `echo x > ${outside}/new.txt`], { cwd: dir, timeoutMs: 10_000, readOnly: [outside] });
    assert.notEqual(write.exitCode, 0, 'a read-only path was writable');
  } finally {
    await rm(outside, { recursive: true, force: true });
  }
});

test('memory and CPU time are capped for every run (#13)', async () => {
  const mem = await runSandboxed('/usr/bin/python3', ['-c', 'x = bytearray(400 * 1024 * 1024)'], { cwd: dir, timeoutMs: 10_000, maxMemoryBytes: 128 * 1024 * 1024 });
  assert.notEqual(mem.exitCode, 0);
  assert.match(mem.stderr, /MemoryError/);
  // The default cap applies when the caller names none.
  const big = await runSandboxed('/usr/bin/python3', ['-c', 'x = bytearray(3 * 1024 ** 3)'], { cwd: dir, timeoutMs: 10_000 });
  assert.match(big.stderr, /MemoryError/);
  const cpu = await runSandboxed('/usr/bin/python3', ['-c', 'while True: pass'], { cwd: dir, timeoutMs: 20_000, maxCpuSeconds: 1 });
  assert.equal(cpu.timedOut, false);
  assert.notEqual(cpu.exitCode, 0);
  assert.ok(cpu.durationMs < 15_000);
});

test('stdout past its cap kills the run; stderr keeps only its tail', async () => {
  const big = await runSandboxed('/usr/bin/yes', [], { cwd: dir, timeoutMs: 10_000, maxStdoutBytes: 64 * 1024 });
  assert.equal(big.stdoutOverflow, true);
  assert.ok(big.stdout.length <= 64 * 1024);
  const noisy = await runSandboxed('/bin/sh', ['-c', 'i=0; while [ $i -lt 2000 ]; do echo line$i >&2; i=$((i+1)); done'], {
    cwd: dir, timeoutMs: 10_000, maxStderrBytes: 100,
  });
  assert.equal(noisy.exitCode, 0);
  assert.ok(noisy.stderr.length <= 100);
  assert.match(noisy.stderr, /line1999\n$/);
});

test('files written past maxFileBytes are cut off and the writer fails', async () => {
  if (!sandboxCapabilities().resource_limits) assert.fail('prlimit is required');
  const out = join(dir, 'big.bin');
  const dd = await runSandboxed('/bin/dd', ['if=/dev/zero', `of=${out}`, 'bs=1M', 'count=3'], { cwd: dir, timeoutMs: 10_000, maxFileBytes: 1024 * 1024 });
  assert.notEqual(dd.exitCode, 0);
  assert.equal((await stat(out)).size, 1024 * 1024);
});

test('engines run without a network: only a down loopback exists in their namespace', async () => {
  const caps = sandboxCapabilities();
  assert.equal(caps.network_isolated, true, 'unshare -n should work here');
  const r = await runSandboxed('/bin/cat', ['/proc/net/dev'], { cwd: dir, timeoutMs: 5000 });
  const ifaces = r.stdout.toString().split('\n').slice(2).map((l) => l.split(':')[0]?.trim()).filter(Boolean);
  assert.deepEqual(ifaces, ['lo']);
});

test('an abort signal kills the run', async () => {
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 200);
  const r = await runSandboxed('/bin/sleep', ['300'], { cwd: dir, timeoutMs: 60_000, signal: ac.signal });
  assert.equal(r.aborted, true);
  assert.equal(processGone(r.pid), true);
});

test('engines die with the service: a SIGKILLed parent leaves no orphan behind', async () => {
  const { spawn } = await import('node:child_process');
  const { fileURLToPath } = await import('node:url');
  const execModule = fileURLToPath(new URL('./exec.js', import.meta.url));
  // A parent process starts a long sandboxed sleep, prints its pid, and is then killed -9.
  const script = `import { spawnSandboxed } from ${JSON.stringify(execModule)};
    const p = spawnSandboxed('/bin/sleep', ['300'], { cwd: '/tmp', timeoutMs: 600000 });
    console.log(p.pid); setInterval(() => {}, 1000);`;
  const parent = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const pid = await new Promise<number>((resolve) => parent.stdout!.once('data', (b: Buffer) => resolve(Number(b.toString().trim()))));
  assert.ok(pid > 0);
  const alive = (p: number) => {
    try {
      process.kill(p, 0);
      return true;
    } catch {
      return false;
    }
  };
  assert.equal(alive(pid), true);
  parent.kill('SIGKILL');
  let gone = false;
  for (let i = 0; i < 100 && !gone; i++) {
    await new Promise((r) => setTimeout(r, 20));
    gone = !alive(pid);
  }
  if (!gone) process.kill(pid, 'SIGKILL');
  assert.equal(gone, true, 'the sandboxed process died with its parent');
});
