/**
 * QOI ("Quite OK Image") ↔ the common rasters with `qoijs` (pure JavaScript) in a worker
 * thread (`qoi/worker.ts`, the structured engines' runner): QOI → PNG (pixels decoded in the
 * worker, PNG written by sharp), and PNG, JPEG, WebP, GIF, TIFF, AVIF → QOI (read by sharp,
 * bounded by `maxInputPixels`, encoded in the worker). The other rasters go through PNG
 * (registry chains). A QOI header is checked against the pixel budget before any pixel is
 * allocated, and a truncated or damaged file is refused (`qoi/codec.ts`).
 */
import { createRequire } from 'node:module';
import sharp, { type OutputInfo } from 'sharp';
import { failed } from '../errors.js';
import { missingProbe, type Engine, type EngineProbe, type Step } from './engine.js';
import { runWorkerThread, stepFailure } from './structured/run-in-worker.js';
import type { QoiAnswer, QoiJob } from './qoi/worker.js';

const REQUIRES = ['npm:qoijs', 'npm:sharp'];

const WORKER_URL = new URL('./qoi/worker.js', import.meta.url);
/** What sharp reads and hands over as pixels. */
const ENCODE_FROM = new Set(['png', 'jpg', 'webp', 'gif', 'tiff', 'avif']);
/** The worker's heap: pixels live in buffers outside it; the codec itself needs little. */
const HEAP_MB = 128;

type Decoded = Extract<QoiAnswer, { ok: true }>;

/** The QOI engine. */
export class QoiEngine implements Engine {
  readonly name = 'qoi';
  readonly reads = ['qoi', ...ENCODE_FROM];
  readonly writes = ['qoi', 'png'];

  supports(from: string, to: string): boolean {
    return (from === 'qoi' && to === 'png') || (to === 'qoi' && ENCODE_FROM.has(from));
  }

  tradesQualityForSize(): boolean {
    return false;
  }

  async probe(): Promise<EngineProbe> {
    try {
      const { version } = createRequire(import.meta.url)('qoijs/package.json') as { version: string };
      return { engine: this.name, available: true, version: `qoijs ${version}, sharp ${sharp.versions.sharp ?? '?'}`, missing: [], requires: REQUIRES };
    } catch {
      return missingProbe(this.name, REQUIRES, ['npm:qoijs']);
    }
  }

  async convert(step: Step): Promise<void> {
    if (step.from === 'qoi') await this.decode(step);
    else await this.encode(step);
  }

  private async decode(step: Step): Promise<void> {
    const job: QoiJob = { op: 'decode', input: step.input, maxPixels: step.job.maxInputPixels };
    const img = await runWorkerThread<Decoded>(WORKER_URL, job, step.job, { kind: 'qoi', maxHeapMb: HEAP_MB, failure: stepFailure(step) });
    if (!img.pixels) throw failed('The QOI image could not be decoded.', 'qoi worker sent no pixels');
    try {
      await sharp(img.pixels, { raw: { width: img.width, height: img.height, channels: img.channels }, limitInputPixels: step.job.maxInputPixels })
        .png({ compressionLevel: 9 })
        .timeout({ seconds: Math.max(1, Math.ceil(step.job.timeoutMs / 1000)) })
        .toFile(step.output);
    } catch (e) {
      throw failed('The QOI image could not be converted to png.', `sharp: ${(e as Error).message}`);
    }
  }

  private async encode(step: Step): Promise<void> {
    let raw: { data: Buffer; info: OutputInfo };
    try {
      const img = sharp(step.input, { limitInputPixels: step.job.maxInputPixels, failOn: 'error' }).rotate();
      const { hasAlpha } = await img.metadata();
      // QOI holds 8-bit sRGB with or without alpha: grey, 16-bit and CMYK pictures are converted.
      raw = await img.toColourspace('srgb')[hasAlpha ? 'ensureAlpha' : 'removeAlpha']().raw({ depth: 'uchar' })
        .timeout({ seconds: Math.max(1, Math.ceil(step.job.timeoutMs / 1000)) })
        .toBuffer({ resolveWithObject: true });
    } catch (e) {
      throw failed(`The ${step.from} image could not be read.`, `sharp: ${(e as Error).message}`);
    }
    const { width, height, channels } = raw.info;
    if (channels !== 3 && channels !== 4) throw failed(`The ${step.from} image could not be converted to qoi.`, `sharp gave ${channels} channels`);
    // A copy the worker owns (sharp's buffer may share a pool), moved to it.
    const pixels = new Uint8Array(raw.data);
    const job: QoiJob = { op: 'encode', output: step.output, pixels, width, height, channels, maxOutputBytes: step.job.maxFileBytes };
    await runWorkerThread<Decoded>(WORKER_URL, job, step.job, { kind: 'qoi', maxHeapMb: HEAP_MB, failure: stepFailure(step), transfer: [pixels.buffer] });
  }
}
