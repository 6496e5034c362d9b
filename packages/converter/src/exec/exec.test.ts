import assert from 'node:assert/strict';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { processGone } from '../testing/tools.js';
import { runSandboxed, sandboxCapabilities } from './exec.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'conv-exec-'));
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

test('a time-out kills the whole process group, grandchildren included', async () => {
  // The child starts a grandchild in the background, prints both pids, then hangs.
  const r = await runSandboxed('/bin/sh', ['-c', 'sleep 300 & echo $$ $!; sleep 300'], { cwd: dir, timeoutMs: 500 });
  assert.equal(r.timedOut, true);
  const [child, grandchild] = r.stdout.toString().trim().split(' ').map(Number);
  assert.ok(child && grandchild && child !== grandchild);
  assert.equal(processGone(child), true, 'child still alive');
  assert.equal(processGone(grandchild), true, 'grandchild still alive');
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
