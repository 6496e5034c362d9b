// QOI (issue 21): a QOI file written by FFmpeg → PNG → QOI keeps every pixel (FFmpeg decodes
// both ends); JPEG → QOI is read back by FFmpeg; a header claiming a huge picture is refused
// before anything is allocated (by the input guard and by the engine's own worker), and
// truncated or damaged files fail with `conversion_failed`.
import assert from 'node:assert/strict';
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Converter } from '../converter.js';
import { ConversionError } from '../errors.js';
import { fixture, identify, scratchDir, tool, toolBytes } from '../testing/tools.js';
import { qoiReferee } from '../testing/matrix/validate-extra.js';
import { chunkPixels, decodeQoi, QoiError } from './qoi/codec.js';
import { QoiEngine } from './qoi.engine.js';
import type { Step } from './engine.js';

let dir: string;
let conv: Converter;
let qoi: string;

before(async () => {
  dir = await scratchDir('conv-qoi-');
  conv = await Converter.create({ workDir: join(dir, 'work'), timeoutMs: 60_000 });
  // The 16-bit RGBA PNG fixture, as FFmpeg's QOI encoder writes it (independent of qoijs).
  qoi = join(dir, 'ffmpeg.qoi');
  tool('/usr/bin/ffmpeg', ['-v', 'error', '-y', '-i', fixture('sample.png'), '-c:v', 'qoi', '-f', 'image2', '-update', '1', qoi]);
});
after(async () => {
  await conv.close();
  await rm(dir, { recursive: true, force: true });
});

/** FFmpeg's decoding of a QOI file to RGBA bytes. */
const rgba = (path: string): Buffer => toolBytes('/usr/bin/ffmpeg', ['-v', 'error', '-f', 'qoi_pipe', '-i', path, '-f', 'rawvideo', '-pix_fmt', 'rgba', '-']);

/** A QOI header (and end marker) with any sides and a single RGBA chunk. */
function qoiFile(width: number, height: number, chunks: number[] = [0xff, 1, 2, 3, 255]): Buffer {
  const head = Buffer.alloc(14);
  head.write('qoif', 0, 'latin1');
  head.writeUInt32BE(width, 4);
  head.writeUInt32BE(height, 8);
  head[12] = 4;
  head[13] = 0;
  return Buffer.concat([head, Buffer.from(chunks), Buffer.from([0, 0, 0, 0, 0, 0, 0, 1])]);
}

/** A qoi → png step outside the converter (no guard before it), with a 1-megapixel budget. */
function stepFor(jobDir: string, input: string, output: string): Step {
  return {
    input, output, from: 'qoi', to: 'png', options: {}, quality: 90, qualityRequested: false,
    job: { dir: jobDir, timeoutMs: 30_000, maxFileBytes: 64 * 1024 ** 2, maxInputPixels: 1_000_000 },
  };
}

async function convert(input: string, from: string, to: string) {
  const output = join(dir, `out-${Math.random().toString(36).slice(2)}.${to}`);
  return { r: await conv.convert({ inputPath: input, sourceFormat: from, targetFormat: to, outputPath: output }), output };
}

test('qoi → png → qoi keeps every pixel: FFmpeg decodes the first and the last file alike', { timeout: 60_000 }, async () => {
  const png = await convert(qoi, 'qoi', 'png');
  if (!png.r.ok) assert.fail(JSON.stringify(png.r.error));
  assert.deepEqual(png.r.engines, ['qoi']);
  assert.deepEqual(identify(png.output), { format: 'PNG', width: 64, height: 48 });
  const back = await convert(png.output, 'png', 'qoi');
  if (!back.r.ok) assert.fail(JSON.stringify(back.r.error));
  assert.deepEqual(back.r.engines, ['qoi']);
  assert.equal(back.r.output.mime_type, 'image/qoi');
  assert.match(await qoiReferee(back.output), /64x48, 4 channels; ffmpeg qoi: 3072 pixels decoded/);
  assert.ok(rgba(back.output).equals(rgba(qoi)), 'pixels differ after the round trip');
});

test('a JPEG becomes an RGB QOI; QOI reaches JPEG and BMP through PNG', { timeout: 60_000 }, async () => {
  const jpg = join(dir, 'in.jpg');
  tool('/usr/bin/convert', [fixture('sample.png'), '-background', 'white', '-flatten', jpg]);
  const q = await convert(jpg, 'jpg', 'qoi');
  if (!q.r.ok) assert.fail(JSON.stringify(q.r.error));
  assert.match(await qoiReferee(q.output), /64x48, 3 channels/);
  for (const [to, format] of [['jpg', 'JPEG'], ['bmp', 'BMP']] as const) {
    const out = await convert(qoi, 'qoi', to);
    if (!out.r.ok) assert.fail(JSON.stringify(out.r.error));
    assert.equal(out.r.engines[0], 'qoi');
    assert.equal(identify(out.output).format, format);
  }
});

test('a QOI header claiming 100000×100000 pixels is refused before any allocation: by the guard and by the engine itself', { timeout: 60_000 }, async () => {
  const huge = join(dir, 'huge.qoi');
  await writeFile(huge, qoiFile(100_000, 100_000));
  const before = process.memoryUsage().arrayBuffers;
  const { r, output } = await convert(huge, 'qoi', 'png');
  assert.equal(r.ok, false);
  if (r.ok) return;
  assert.equal(r.error.code, 'conversion_failed');
  assert.match(r.error.message, /100000×100000 pixels, over the 100 megapixels/);
  await assert.rejects(stat(output));
  // The engine's worker checks the header too (a caller that skipped the guard).
  const engine = new QoiEngine();
  await assert.rejects(engine.convert(stepFor(dir, huge, join(dir, 'never.png'))), (e: unknown) => e instanceof ConversionError && /over the 1 megapixels/.test(e.message));
  // The codec refuses from the header (a 40 GB picture would not fit in memory anyway).
  assert.throws(() => decodeQoi(qoiFile(100_000, 100_000), 1_000_000), (e: unknown) => e instanceof QoiError && /megapixels/.test(e.message));
  assert.ok(process.memoryUsage().arrayBuffers - before < 64 * 1024 ** 2, 'pixels were allocated');
});

test('truncated and damaged QOI files fail with conversion_failed; the chunks must hold the declared pixels', { timeout: 60_000 }, async () => {
  const good = await readFile(qoi);
  assert.equal(chunkPixels(good), 64 * 48);
  const cases: Record<string, Buffer> = {
    // Cut in the middle: no end marker.
    cut: good.subarray(0, Math.floor(good.length / 2)),
    // Cut, with an end marker glued on: fewer pixels than the header says (qoijs would repeat the last one).
    short: Buffer.concat([good.subarray(0, 60), Buffer.from([0, 0, 0, 0, 0, 0, 0, 1])]),
    // More chunks than pixels: 2×2 declared, a run of 62 held.
    long: qoiFile(2, 2, [0xfd]),
    // A chunk running into the end marker.
    overrun: qoiFile(1, 1, [0xff, 1, 2]),
    // Larger than any QOI of its sides can be.
    oversized: qoiFile(1, 1, new Array<number>(64).fill(0)),
  };
  for (const [name, bytes] of Object.entries(cases)) {
    const path = join(dir, `${name}.qoi`);
    await writeFile(path, bytes);
    const { r } = await convert(path, 'qoi', 'png');
    assert.equal(r.ok, false, name);
    if (r.ok) continue;
    assert.equal(r.error.code, 'conversion_failed', name);
    assert.match(r.error.message, /QOI/, name);
  }
});
