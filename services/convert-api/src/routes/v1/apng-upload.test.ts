import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { Converter } from '@mailconv/converter';
import { findProjectRoot } from '@mailconv/platform';
import { testBackends } from '@mailconv/platform/testing';
import { useConvertApp } from './api.test-support.js';

// Issue 31: an animated PNG as phones and browsers save it — named `.png`, sent as image/png —
// is accepted and detected from its bytes as `apng`, and converts to an animated GIF with its
// frames (it was read as a still PNG, its first picture). The frames are counted by
// ImageMagick's identify, not by the code under test.
const BALL = join(findProjectRoot(), 'packages', 'converter', 'test', 'corpus', 'apng', 'image-rs-apng-ball.apng');
const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

let converter: Converter;
let work: string;
before(async () => {
  work = await mkdtemp(join(tmpdir(), 'convert-api-apng-'));
  converter = await Converter.create({ workDir: join(work, 'engine') });
});
after(async () => {
  await converter.close();
  await rm(work, { recursive: true, force: true });
});

describe('an animated PNG uploaded as ball.png (image/png)', () => {
  const backend = testBackends()[0]!;
  const f = useConvertApp(backend, { storage: () => join(work, 'storage'), converter: () => converter, email: 'apng@example.test' });

  test('is accepted as apng and converts to a GIF of its 20 frames', { timeout: 120_000 }, async () => {
    const form = new FormData();
    form.append('file', new Blob([await readFile(BALL)], { type: 'image/png' }), 'ball.png');
    const req = new Request('http://127.0.0.1/', { method: 'POST', body: form });
    const headers = { 'content-type': req.headers.get('content-type') as string, authorization: `Bearer ${f.key}` };
    const up = await f.app.inject({ method: 'POST', url: '/api/v1/upload', payload: Buffer.from(await req.arrayBuffer()), headers });
    assert.equal(up.statusCode, 201, up.body);
    const upload = up.json() as { upload_id: string; format: string; mime_type: string; filename: string };
    assert.deepEqual([upload.format, upload.mime_type, upload.filename], ['apng', 'image/apng', 'ball.png']);

    const targets = await f.app.inject({ method: 'GET', url: '/api/v1/formats/apng/targets', headers: { authorization: `Bearer ${f.key}` } });
    assert.equal(targets.statusCode, 200, targets.body);
    const listed = JSON.stringify(targets.json());
    for (const t of ['"gif"', '"webp"', '"avif"', '"png"']) assert.ok(listed.includes(t), `targets list ${t}`);

    const conv = await f.app.inject({ method: 'POST', url: '/api/v1/convert?wait=90', payload: { upload_id: upload.upload_id, target_format: 'gif' }, headers: { authorization: `Bearer ${f.key}` } });
    assert.equal(conv.statusCode, 200, conv.body);
    const rec = conv.json() as { id: string; status: string; download_token: string; output: { sha256: string } };
    assert.equal(rec.status, 'completed');
    const dl = await f.app.inject({ method: 'GET', url: `/api/v1/jobs/${rec.id}/download/${rec.download_token}`, headers: { authorization: `Bearer ${f.key}` } });
    assert.equal(dl.statusCode, 200);
    assert.equal(sha256(dl.rawPayload), rec.output.sha256);
    const gif = join(work, 'ball.gif');
    await writeFile(gif, dl.rawPayload);
    const id = spawnSync('/usr/bin/identify', ['-format', '%m\n', gif], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(id.status, 0, id.stderr);
    const frames = id.stdout.trim().split('\n');
    assert.equal(frames.length, 20, 'identify: the frames');
    assert.ok(frames.every((m) => m === 'GIF'));
  });
});
