import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createTestDatabase, freePort, startProcess, stopProcess } from '@mailconv/platform/testing';

const run = promisify(execFile);
const SERVER = fileURLToPath(new URL('./server.js', import.meta.url));
const ADMIN = fileURLToPath(new URL('./admin.js', import.meta.url));
const WORKER = fileURLToPath(new URL('./worker.js', import.meta.url));

let url: string;
let drop: () => Promise<void>;
const storage = mkdtempSync(join(tmpdir(), 'convert-process-'));
before(async () => ({ url, drop } = await createTestDatabase('sqlite')));
after(async () => {
  await drop();
  rmSync(storage, { recursive: true, force: true });
});

test('the conversion server refuses bad settings, listing every problem at once', async () => {
  await assert.rejects(
    run(process.execPath, [SERVER], { env: { ...process.env, CONVERT_PORT: '70000', CONVERT_PUBLIC_BASE_URL: 'not a url', CONVERT_BODY_LIMIT_BYTES: '-1' } }),
    (err: { code: number; stderr: string }) => {
      assert.equal(err.code, 1);
      for (const name of ['CONVERT_PORT', 'CONVERT_PUBLIC_BASE_URL', 'CONVERT_BODY_LIMIT_BYTES']) assert.match(err.stderr, new RegExp(name));
      return true;
    },
  );
});

// Issue #15: a mistyped URL printed its password in the start-up error.
test('a bad URL setting is named with its rule, its value (and password) never printed', async () => {
  const secrets = { CONVERT_DATABASE_URL: 'postgress://admin:hunter2-db@db.example.test/x', CONVERT_REDIS_URL: 'redis:/:hunter2-redis@cache.example.test:6379' };
  for (const file of [SERVER, WORKER]) {
    await assert.rejects(run(process.execPath, [file], { env: { ...process.env, ...secrets, CONVERT_ROLE: 'both' } }), (err: { code: number; stdout: string; stderr: string }) => {
      assert.equal(err.code, 1, file);
      assert.match(err.stderr, /CONVERT_DATABASE_URL: must be sqlite:PATH or postgres/);
      assert.match(err.stderr, /CONVERT_REDIS_URL: must be redis:\/\/… or rediss:\/\/…/);
      assert.match(err.stderr, /CONVERT_ROLE: must be all, api or worker/);
      assert.doesNotMatch(err.stderr + err.stdout, /hunter2|example\.test/);
      return true;
    });
  }
});

test('admin CLI of the conversion service: its own accounts, plans and key prefix', async () => {
  const env = { ...process.env, CONVERT_DATABASE_URL: url };
  const { stdout } = await run(process.execPath, [ADMIN, 'create-account', '--email', 'conv@example.test', '--plan', 'pro', '--json'], { env });
  const acct = JSON.parse(stdout) as Record<string, string>;
  assert.deepEqual(Object.keys(acct), ['account_id', 'email', 'plan', 'api_key']);
  assert.match(acct.api_key!, /^cv_live_[0-9A-Za-z]{32}$/);
  assert.equal(acct.plan, 'pro');
  await assert.rejects(run(process.execPath, [ADMIN, 'create-account', '--email', 'x@example.test', '--plan', 'scale'], { env }), (err: { code: number; stderr: string }) => {
    assert.equal(err.code, 2);
    assert.match(err.stderr, /unknown plan "scale"; plans: free, starter, pro, business, api/);
    return true;
  });
});

/** Writes `steps` on a raw loopback connection (strings sent, numbers waited in ms) and resolves with the answer once the server closes; bounded by `limitMs`. */
async function rawExchange(port: number, steps: Array<string | number>, limitMs = 15_000): Promise<{ text: string; ms: number }> {
  const socket = connect(port, '127.0.0.1');
  const started = performance.now();
  let text = '';
  socket.on('data', (d: Buffer) => {
    if (text.length < 65_536) text += d.toString('latin1');
  });
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const limit = setTimeout(() => socket.destroy(), limitMs);
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  for (const step of steps) {
    if (socket.destroyed) break;
    if (typeof step === 'number') await Promise.race([new Promise((r) => setTimeout(r, step)), closed]);
    else socket.write(step);
  }
  await closed;
  clearTimeout(limit);
  return { text, ms: performance.now() - started };
}

// Issue #15: a body that never finished was held open for over 100 s; /readyz said ready with Redis down.
test('the conversion server: a slow but steady upload is not cut, a stalled one is (408); /readyz names a Redis that is down', async () => {
  const env = { ...process.env, CONVERT_DATABASE_URL: url };
  const { stdout } = await run(process.execPath, [ADMIN, 'create-account', '--email', 'slow@example.test', '--plan', 'pro', '--json'], { env });
  const key = (JSON.parse(stdout) as { api_key: string }).api_key;
  const port = await freePort();
  const closedPort = await freePort(); // nothing listens there
  const server = await startProcess(SERVER, {
    CONVERT_DATABASE_URL: url,
    CONVERT_PORT: String(port),
    CONVERT_STORAGE_DIR: storage,
    CONVERT_LOG_LEVEL: 'info',
    CONVERT_BODY_IDLE_TIMEOUT_MS: '600',
    CONVERT_REDIS_URL: `redis://127.0.0.1:${closedPort}/0`,
  });
  try {
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(10_000) });
    assert.equal(ready.status, 503);
    const checks = ((await ready.json()) as { checks: Record<string, string> }).checks;
    assert.deepEqual([checks.redis, checks.database], ['error', 'ok']);
    assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(10_000) })).status, 200);

    const line = 'The quick brown fox jumps over the lazy dog.\n';
    const head = '--b0undary\r\nContent-Disposition: form-data; name="file"; filename="slow.txt"\r\nContent-Type: text/plain\r\n\r\n';
    const tail = '\r\n--b0undary--\r\n';
    const content = line.repeat(12);
    const request = (length: number) => `POST /api/v1/upload HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: multipart/form-data; boundary=b0undary\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n`;
    const total = Buffer.byteLength(head + content + tail);

    // Twelve lines 250 ms apart: 3 s in all, five times the idle limit, never idle for long.
    const steady: Array<string | number> = [request(total), head];
    for (let i = 0; i < 12; i++) steady.push(250, line);
    steady.push(tail);
    const ok = await rawExchange(port, steady);
    assert.match(ok.text, /^HTTP\/1\.1 201 /, ok.text.slice(0, 300));

    // Half the file, then nothing: cut after the idle limit with the contract's 408.
    const stalled = await rawExchange(port, [request(total), head, line.repeat(6), 10_000]);
    assert.match(stalled.text, /^HTTP\/1\.1 408 /);
    assert.equal((JSON.parse(stalled.text.split('\r\n\r\n')[1]!) as { error: string }).error, 'request_timeout');
    assert.ok(stalled.ms < 5000, `cut after ${Math.round(stalled.ms)} ms`);
  } finally {
    await stopProcess(server.child, 'SIGTERM');
  }
});

// Issue #15: the worker processes have no HTTP, so their counters were never scraped.
test('a conversion worker with CONVERT_WORKER_METRICS_PORT serves its own /metrics (token-protected) and nothing else', async () => {
  const port = await freePort();
  const token = 'worker-metrics-token-0123';
  const worker = await startProcess(WORKER, { CONVERT_DATABASE_URL: url, CONVERT_STORAGE_DIR: storage, CONVERT_LOG_LEVEL: 'info', CONVERT_WORKER_METRICS_PORT: String(port), CONVERT_METRICS_TOKEN: token });
  try {
    assert.equal(worker.ready.metrics_port, port);
    const scrape = (headers: Record<string, string> = {}, path = '/metrics') => fetch(`http://127.0.0.1:${port}${path}`, { headers, signal: AbortSignal.timeout(10_000) });
    const denied = await scrape();
    assert.equal(denied.status, 401);
    assert.equal(((await denied.json()) as { error: string }).error, 'unauthorized');
    const res = await scrape({ authorization: `Bearer ${token}` });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    const text = await res.text();
    for (const name of ['convert_queue_depth{status="queued"}', 'convert_libreoffice_restarts_total', 'convert_libreoffice_queue_depth', 'process_resident_memory_bytes']) assert.ok(text.includes(`${name} `), name);
    assert.equal((await scrape({ authorization: `Bearer ${token}` }, '/healthz')).status, 404);
  } finally {
    assert.equal(await stopProcess(worker.child, 'SIGTERM'), 0);
  }
});
