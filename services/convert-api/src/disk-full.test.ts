// A full disk (issue 28), for real: the conversion service's data folder (SQLite database
// and storage) on a small tmpfs the test mounts and fills. What a client sees: 507
// `insufficient_storage` (never a 500), an upload that cannot fit refused before its body is
// read, /readyz not ready under the free-space floor or when the database cannot write, a
// conversion that runs out of space failed as `insufficient_storage` and refunded — and,
// once the space is back, everything working again without a restart, nothing left behind,
// no request count lost. Needs root for the mount (CI has it); fails, never skips, without.
// Bounded: a 64 MiB volume, one server process with a capped heap, every wait a deadline.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import sharp from 'sharp';
import { openServiceCore, type ServiceCore } from '@mailconv/platform';
import { freePort, mountSmallVolume, startProcess, stopProcess, type SmallVolume, type StartedProcess } from '@mailconv/platform/testing';
import { CONVERT_KEY_PREFIX } from './app.js';
import { loadConvertConfig } from './config.js';
import { CONVERT_MIGRATIONS } from './db/migrations.js';
import type { ConvertTables } from './db/schema.js';

const SERVER = fileURLToPath(new URL('./server.js', import.meta.url));
const MiB = 1024 * 1024;

describe('a full disk under the conversion service', { timeout: 240_000 }, () => {
  let volume: SmallVolume;
  let server: StartedProcess;
  let core: ServiceCore<ConvertTables>;
  let base: string;
  let auth: Record<string, string>;
  let accountId: string;
  let keyId: string;
  /** Requests made with the key: each must be counted once in api_key_usage (issue 28, item 5). */
  let keyed = 0;
  let storage: string;
  let png: Buffer;

  const call = async (method: string, path: string, init: { json?: unknown; body?: RequestInit['body']; headers?: Record<string, string> } = {}) => {
    keyed++;
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...auth, ...(init.json !== undefined ? { 'content-type': 'application/json' } : {}), ...(init.headers ?? {}) },
      ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : init.body !== undefined ? { body: init.body, duplex: 'half' } : {}),
      signal: AbortSignal.timeout(60_000),
    } as RequestInit);
    const text = await res.text();
    return { status: res.status, body: (text.startsWith('{') ? JSON.parse(text) : {}) as Record<string, unknown>, headers: res.headers };
  };
  const upload = (bytes: Buffer, name: string) => {
    const form = new FormData();
    form.append('file', new Blob([bytes]), name);
    return call('POST', '/api/v1/upload', { body: form });
  };
  const ready = async () => {
    const res = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(10_000) });
    return { status: res.status, checks: ((await res.json()) as { checks: Record<string, string> }).checks };
  };
  const files = async (folder: string) => (await readdir(join(storage, folder))).sort();
  const used = () => core.quota.used(accountId);
  const assertListening = () => assert.equal(server.child.exitCode, null, 'the service process is still running');

  before(async () => {
    volume = await mountSmallVolume(64 * MiB);
    const port = await freePort();
    const env = {
      CONVERT_DATA_DIR: join(volume.path, 'data'),
      CONVERT_PORT: String(port),
      CONVERT_PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      CONVERT_MIN_FREE_MB: '4',
      CONVERT_LOG_LEVEL: 'info',
      NODE_OPTIONS: '--max-old-space-size=384',
    };
    server = await startProcess(SERVER, env);
    base = `http://127.0.0.1:${port}`;
    const config = loadConvertConfig(env);
    storage = config.storageDir;
    core = await openServiceCore<ConvertTables>({ database: config.database, migrations: CONVERT_MIGRATIONS, keyPrefix: CONVERT_KEY_PREFIX });
    const acct = await core.accounts.createAccount({ email: 'disk-full@example.test', plan: 'api' }, new Date());
    assert.ok(acct.ok);
    auth = { authorization: `Bearer ${acct.apiKey}` };
    accountId = acct.account.id;
    keyId = (await core.database.db.selectFrom('api_keys').select('id').where('account_id', '=', accountId).executeTakeFirstOrThrow()).id;
  });

  after(async () => {
    if (server) await stopProcess(server.child, 'SIGKILL');
    await core?.close();
    await volume?.unmount();
  });

  test('free space is in /readyz and the metrics; an upload whose declared length cannot fit is refused (507) before its body is sent', async () => {
    assert.deepEqual([(await ready()).status, (await ready()).checks.storage, (await ready()).checks.database], [200, 'ok', 'ok']);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    const free = Number(/^disk_free_bytes\{folder="storage"\} (\d+)/m.exec(metrics)?.[1]);
    assert.ok(Math.abs(free - (await volume.free())) < 8 * MiB, `disk_free_bytes{folder="storage"} ${free} against ${await volume.free()} free`);
    assert.match(metrics, /^disk_free_bytes\{folder="data"\} \d+/m);
    assert.match(metrics, new RegExp(`^disk_free_floor_bytes ${4 * MiB}$`, 'm'));

    // Headers only, announcing 200 MiB: the answer comes without a byte of the body.
    keyed++;
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(base).port), '127.0.0.1');
      let text = '';
      const timer = setTimeout(() => reject(new Error(`no answer before the body: ${text}`)), 10_000);
      socket.on('data', (b) => {
        text += b.toString();
        if (/\r\n\r\n[\s\S]*\}/.test(text)) {
          clearTimeout(timer);
          socket.destroy();
          resolve(text);
        }
      });
      socket.on('error', reject);
      socket.write(`POST /api/v1/upload HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${auth.authorization}\r\nContent-Type: multipart/form-data; boundary=x\r\nContent-Length: ${200 * MiB}\r\n\r\n`);
    });
    assert.match(answer, /^HTTP\/1\.1 507 /);
    assert.match(answer, /"error":"insufficient_storage"/);
    assert.deepEqual(await files('uploads'), [], 'nothing stored');
    assertListening();
  });

  test('a conversion that runs out of space fails as insufficient_storage and is refunded; once space is back it converts, needing the output\'s size once (moved, not copied)', async () => {
    // A flat 2000×2000 picture: a tiny PNG whose BMP is 12 MB.
    png = await sharp({ create: { width: 2000, height: 2000, channels: 3, background: { r: 200, g: 40, b: 90 } } }).png().toBuffer();
    const up = await upload(png, 'flat.png');
    assert.equal(up.status, 201, JSON.stringify(up.body));
    const uploadId = up.body.upload_id as string;
    // 24-bit rows of 6,000 bytes (no padding) after a BITMAPV5 header of 138 bytes.
    const bmpBytes = 2000 * 2000 * 3 + 138;

    await volume.fill(6 * MiB);
    const short = await call('POST', '/api/v1/convert?wait=60', { json: { upload_id: uploadId, target_format: 'bmp' } });
    assert.equal(short.status, 200, JSON.stringify(short.body));
    assert.equal(short.body.status, 'failed');
    assert.deepEqual((short.body.error as { code: string }).code, 'insufficient_storage', JSON.stringify(short.body.error));
    assert.equal(await used(), 0, 'refunded');
    assert.deepEqual(await files('work'), [], 'no job folder left');
    assert.deepEqual(await files('outputs'), [], 'no partial output left');

    // Space for the output once but not twice: a copy out of the job folder would not fit.
    await volume.drain();
    await volume.fill(Math.round(bmpBytes * 1.5));
    const again = await call('POST', '/api/v1/convert?wait=60', { json: { upload_id: uploadId, target_format: 'bmp' } });
    assert.equal(again.body.status, 'completed', JSON.stringify(again.body));
    const output = again.body.output as { size_bytes: number; sha256: string };
    assert.equal(output.size_bytes, bmpBytes);
    const [stored] = await files('outputs');
    const hash = createHash('sha256');
    for await (const chunk of createReadStream(join(storage, 'outputs', stored!))) hash.update(chunk as Buffer);
    assert.equal(hash.digest('hex'), output.sha256, 'the moved file is the one hashed');
    assert.equal(await used(), 1, 'the completed conversion is charged once');
    assert.deepEqual(await files('work'), []);
    await volume.drain();
    assertListening();
  });

  test('under the floor: /readyz not ready, uploads refused or cut with 507 and no partial file; the database full: 507 for writes, /readyz names it; all back by itself once space is freed', async () => {
    const before = await files('uploads');
    await volume.fill(2 * MiB);
    const low = await ready();
    assert.equal(low.status, 503);
    assert.equal(low.checks.storage, 'error');
    // Small enough to be sent, too big for what is left above the floor.
    const small = await upload(randomBytes(64 * 1024), 'small.bin');
    assert.deepEqual([small.status, small.body.error], [507, 'insufficient_storage']);
    // No declared length (chunked): the disk fills mid-stream.
    const boundary = 'diskfullboundary';
    const chunks = [Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`)];
    for (let i = 0; i < 48; i++) chunks.push(randomBytes(64 * 1024));
    chunks.push(Buffer.from(`\r\n--${boundary}--\r\n`));
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift();
        if (next) controller.enqueue(next);
        else controller.close();
      },
    });
    const cut = await call('POST', '/api/v1/upload', { body: stream, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } });
    assert.deepEqual([cut.status, cut.body.error], [507, 'insufficient_storage'], JSON.stringify(cut.body));
    assert.deepEqual(await files('uploads'), before, 'the partial file was removed');

    // Nothing left at all: the database cannot write either.
    await volume.fill(0);
    const key = await call('POST', '/api/dashboard/api-keys', { json: { name: 'while full' } });
    assert.deepEqual([key.status, key.body.error], [507, 'insufficient_storage'], JSON.stringify(key.body));
    const full = await ready();
    assert.deepEqual([full.status, full.checks.database, full.checks.storage], [503, 'error', 'error']);
    const polled = await call('GET', '/api/v1/account/usage');
    assert.equal(polled.status, 200, 'reads still answer');
    // The background write of the key's request counts fails meanwhile (and must keep them).
    for (const deadline = Date.now() + 10_000; !server.lines.some((l) => l.includes('background write failed')); await sleep(100)) {
      assert.ok(Date.now() < deadline, 'the request counts were written while the disk was full');
    }
    assertListening();

    await volume.drain();
    for (const deadline = Date.now() + 10_000; (await ready()).status !== 200; await sleep(100)) assert.ok(Date.now() < deadline, 'ready again once space is back');
    const created = await call('POST', '/api/dashboard/api-keys', { json: { name: 'after' } });
    assert.ok([200, 201].includes(created.status), JSON.stringify(created.body));
    const later = await upload(png, 'later.png');
    assert.equal(later.status, 201, JSON.stringify(later.body));
    // Every request made with the key is counted, those made while the database could not write included.
    let counted = 0;
    for (const deadline = Date.now() + 15_000; counted !== keyed; await sleep(200)) {
      counted = Number((await core.database.db.selectFrom('api_key_usage').select((eb) => eb.fn.sum<number>('requests').as('n')).where('key_id', '=', keyId).executeTakeFirst())?.n ?? 0);
      assert.ok(Date.now() < deadline, `api_key_usage counts ${counted} requests, the test made ${keyed}`);
    }
    assertListening();
  });
});
