/**
 * Animated pictures between picture formats (issue 31): an animated AVIF (an image sequence)
 * or an animated JPEG XL becomes an animated GIF or WebP with every frame and each frame's
 * time on screen, and a still target gets the first frame. The sources' frames are decoded
 * by tools in the sandbox (ffmpeg with dav1d for AVIF, djxl for JPEG XL) to PNG files in the
 * job's folder; sharp joins them into the animation in process (libvips: the GIF palette per
 * frame, WebP's ANIM/ANMF with exact delays — ffmpeg 5.1's muxers guess the last frame's).
 * The frames are engine output, read like every other: sharp with the job's pixel limit,
 * all frames together bounded as one picture (frames × width × height), as the input guard
 * bounds an animated upload.
 */
import { open, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp, { type Metadata } from 'sharp';
import { failed, failedFinally, invalid } from '../errors.js';
import type { FormatFamily } from '../formats/catalogue.js';
import { writeApng, writeAvifSequence } from './animation-encode.js';
import { runStep, sandboxFolder, type Step } from './engine.js';

const FFMPEG = '/usr/bin/ffmpeg';
/** libavif's reference tool (libavif-bin): which tracks are the picture and its alpha, and each frame's duration. */
const AVIFDEC = '/usr/bin/avifdec';
/** GIF and WebP delays are whole milliseconds in 0…65535 (sharp's range). */
const MAX_DELAY_MS = 65_535;

/** An animation's frames as PNG files, in order. */
export interface Frames {
  readonly files: readonly string[];
  /** Each frame's time on screen, in ms. */
  readonly delaysMs: readonly number[];
  /** Plays: 0 forever, n plays n times. */
  readonly loop: number;
}

/**
 * The animated targets among the picture formats: an animated source keeps its animation
 * to them (issue 31); a still source makes a one-frame picture.
 */
export const ANIMATED_TARGETS: ReadonlySet<string> = new Set(['gif', 'webp', 'apng', 'avif']);

/** Sources that can be animations, whose still outputs the `frame` option picks a frame of. */
export const ANIMATED_SOURCES: ReadonlySet<string> = new Set(['gif', 'webp', 'avif', 'jxl', 'apng']);
/** The engines that read those sources frame by frame (a route's first step must be one of them). */
export const FRAME_ENGINES: ReadonlySet<string> = new Set(['sharp', 'libjxl']);
/** Highest `frame`. */
export const MAX_FRAME = 10_000;

/** `frame` (1-based) parsed: a whole number from 1 to MAX_FRAME for picture outputs; a 400 naming it otherwise. */
export function parseFrame(raw: unknown, targetFamily: FormatFamily): number {
  const n = typeof raw === 'string' && /^\s*\d+\s*$/.test(raw) ? Number(raw) : raw;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_FRAME) throw invalid('frame', `frame must be a whole number from 1 to ${MAX_FRAME} (1 is the first frame).`);
  if (targetFamily !== 'image') throw invalid('frame', `frame picks the still picture of an animation (${[...ANIMATED_SOURCES].join(', ')}) for a picture output.`);
  return n;
}

/** The frame the step's still output shows (0-based), after checking the animation has it. */
export function stillFrame(step: Step, frames: number): number {
  const frame = step.options.frame ?? 1;
  if (frame > frames) throw invalid('frame', `frame is ${frame} but the ${step.from} ${frames === 1 ? 'is not animated (one frame)' : `has ${frames} frames`}.`);
  return frame - 1;
}

/** Whether the step's bytes start with an ISO-BMFF `ftyp` box listing the AVIF image-sequence brand `avis`. */
export async function isAvifSequence(path: string): Promise<boolean> {
  const head = Buffer.alloc(256);
  const fh = await open(path, 'r');
  let n: number;
  try {
    ({ bytesRead: n } = await fh.read(head, 0, head.length, 0));
  } finally {
    await fh.close();
  }
  if (n < 16 || head.toString('latin1', 4, 8) !== 'ftyp') return false;
  const size = Math.min(head.readUInt32BE(0), n);
  // Major brand at 8, minor version at 12, compatible brands from 16.
  for (let at = 8; at + 4 <= size; at += at === 8 ? 8 : 4) if (head.toString('latin1', at, at + 4) === 'avis') return true;
  return false;
}

/**
 * What `avifdec --info` says of a sequence: size, whether an alpha track goes with the
 * picture, and each frame's duration. avifdec chooses the tracks as a viewer does (the
 * sequence when the file is one, the alpha auxiliary track by its `auxl` reference, never a
 * depth track).
 */
export function parseAvifInfo(text: string): { width: number; height: number; alpha: boolean; delaysMs: number[] } {
  const res = /^\s*\* Resolution\s*: (\d+)x(\d+)/m.exec(text);
  const alpha = /^\s*\* Alpha\s*: (.*)$/m.exec(text);
  const scale = /^\s*\* (\d+(?:\.\d+)?) timescales per second/m.exec(text);
  const timescale = Number(scale?.[1]);
  const delaysMs = [...text.matchAll(/^\s*\* Decoded frame \[\d+\] \[pts [^\]]*\] \[duration [\d.]+ \((\d+) timescales\)\]/gm)].map((m) =>
    timescale > 0 ? Math.min(MAX_DELAY_MS, Math.round((Number(m[1]) * 1000) / timescale)) : 100,
  );
  if (!res || !alpha) throw new Error('avifdec --info: no resolution or alpha line');
  return { width: Number(res[1]), height: Number(res[2]), alpha: !/^Absent/.test(alpha[1] ?? ''), delaysMs };
}

/** Fails unless `count` frames of `width`×`height` fit within the job's pixel limit, all together. */
export function checkBounds(step: Step, count: number, width: number, height: number): void {
  if (count < 1 || width < 1 || height < 1) throw failed(`The ${step.from} animation has no frame to convert.`);
  const pixels = count * width * height;
  if (pixels > step.job.maxInputPixels) {
    throw failedFinally(
      `The ${step.from} animation holds ${count} frames of ${width}×${height} pixels (${Math.round(pixels / 1e6)} million in all), over the ${step.job.maxInputPixels / 1e6} megapixels a conversion accepts.`,
    );
  }
}

/** The PNG frames a tool wrote into `dir` as `f-00001.png`…, in order. */
export async function framesIn(dir: string): Promise<string[]> {
  return (await readdir(dir).catch(() => [] as string[]))
    .filter((n) => /^f-\d{5}\.png$/.test(n))
    .sort()
    .map((n) => join(dir, n));
}

/**
 * The frames of an AVIF image sequence: avifdec reads the facts, ffmpeg (dav1d) decodes the
 * picture track and, when there is one, lays the alpha track on it (alphamerge). `still`
 * decodes only up to the frame a still target shows (the `frame` option, else the first).
 */
export async function avifSequenceFrames(step: Step, dir: string, still = false): Promise<Frames> {
  const info = await runStep(step, AVIFDEC, ['--info', '-j', '1', '--size-limit', String(step.job.maxInputPixels), '--', step.input], { maxStdoutBytes: 4 * 1024 * 1024 });
  let facts: ReturnType<typeof parseAvifInfo>;
  try {
    facts = parseAvifInfo(info.stdout.toString('utf8'));
  } catch (e) {
    throw failed(`The ${step.from} file could not be converted to ${step.to}.`, (e as Error).message);
  }
  const count = still ? stillFrame(step, facts.delaysMs.length) + 1 : facts.delaysMs.length;
  checkBounds(step, count, facts.width, facts.height);
  const graph = facts.alpha ? ['-filter_complex', '[0:v:0][0:v:1]alphamerge,format=rgba[out]', '-map', '[out]'] : ['-map', '0:v:0', '-pix_fmt', 'rgba'];
  await runStep(step, FFMPEG, [
    '-hide_banner', '-nostdin', '-y', '-protocol_whitelist', 'file', '-threads', '1', '-f', 'mov', '-i', step.input,
    ...graph, '-map_metadata', '-1', '-an', '-sn', '-dn', '-fps_mode', 'passthrough', '-frames:v', String(count), '-c:v', 'png', '-f', 'image2',
    join(dir, 'f-%05d.png'),
  ]);
  const files = await framesIn(dir);
  if (files.length !== count) {
    throw failed(`The ${step.from} file could not be converted to ${step.to}.`, `ffmpeg decoded ${files.length} frames; avifdec lists ${count}`);
  }
  return { files, delaysMs: facts.delaysMs.slice(0, count), loop: 0 };
}

/**
 * An APNG's animation control: the number of frames and plays (acTL), each frame's delay
 * (fcTL, delay_num/delay_den seconds; a denominator of 0 means 1/100) and whether it is
 * blended over the frame before (blend_op 1), and the sample depth (IHDR). Null for a PNG
 * that is not animated.
 */
export function apngTiming(png: Buffer): { frames: number; plays: number; delaysMs: number[]; blendsOver: boolean[]; bitDepth: number } | null {
  let at = 8;
  let control: { frames: number; plays: number } | null = null;
  let bitDepth = 8;
  const delaysMs: number[] = [];
  const blendsOver: boolean[] = [];
  while (at + 12 <= png.length) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    const data = at + 8;
    if (data + length > png.length) break;
    if (type === 'IHDR' && length >= 13) bitDepth = png.readUInt8(data + 8);
    if (type === 'acTL' && length >= 8) control = { frames: png.readUInt32BE(data), plays: png.readUInt32BE(data + 4) };
    if (type === 'fcTL' && length >= 26) {
      const num = png.readUInt16BE(data + 20);
      const den = png.readUInt16BE(data + 22) || 100;
      delaysMs.push(Math.min(MAX_DELAY_MS, Math.round((num * 1000) / den)));
      blendsOver.push(png.readUInt8(data + 25) === 1);
    }
    if (type === 'IEND') break;
    at = data + length + 4;
  }
  return control ? { ...control, delaysMs, blendsOver, bitDepth } : null;
}

/**
 * The frames of an animated PNG (an upload, or what djxl wrote of a JPEG XL animation):
 * ffmpeg's APNG decoder composes each frame (blend and dispose operations) to a full PNG,
 * and leaves out a default image that is not part of the animation (IDAT before the first
 * fcTL), as APNG viewers do. Null when `apng` is a single picture (no acTL). `still` decodes
 * only up to the frame a still target shows (the `frame` option, else the first).
 */
export async function apngFrames(step: Step, apng: string, dir: string, still = false): Promise<Frames | null> {
  const timing = apngTiming(await readFile(apng));
  if (!timing) return null;
  const meta = await sharp(apng, { limitInputPixels: step.job.maxInputPixels }).metadata().catch((e: Error) => {
    throw failed(`The ${step.from} file could not be converted to ${step.to}.`, `sharp: ${e.message}`);
  });
  const count = still ? stillFrame(step, timing.frames) + 1 : timing.frames;
  checkBounds(step, count, meta.width ?? 0, meta.height ?? 0);
  // ffmpeg 5.1 composes a 16-bit frame blended over the one before as "Not yet implemented".
  if (timing.bitDepth === 16 && timing.blendsOver.slice(1, count).some(Boolean)) {
    throw failedFinally(`The ${step.from} animation has 16 bits a sample and frames blended over the ones before, which the converter cannot compose; an 8-bit APNG converts.`);
  }
  await runStep(step, FFMPEG, [
    '-hide_banner', '-nostdin', '-y', '-protocol_whitelist', 'file', '-threads', '1', '-f', 'apng', '-i', apng,
    // -dpi 72: ffmpeg 5.1 writes an unknown aspect ratio as a pHYs of 0 pixels a unit, a page 0
    // wide to img2pdf ("float division by zero"); 72 is what a PNG without pHYs is taken for.
    '-map', '0:v:0', '-map_metadata', '-1', '-fps_mode', 'passthrough', '-pix_fmt', 'rgba', '-frames:v', String(count), '-c:v', 'png', '-dpi', '72', '-f', 'image2',
    join(dir, 'f-%05d.png'),
  ]);
  const files = await framesIn(dir);
  if (files.length !== count || timing.delaysMs.length !== timing.frames) {
    throw failed(`The ${step.from} file could not be converted to ${step.to}.`, `ffmpeg decoded ${files.length} frames of ${count}; the APNG lists ${timing.frames} (${timing.delaysMs.length} delays)`);
  }
  return { files, delaysMs: timing.delaysMs.slice(0, count), loop: timing.plays };
}

/** Raw RGBA bytes decoded at once when an animated GIF or WebP is taken apart. */
const CHUNK_BYTES = 64 * 1024 * 1024;

/**
 * The frames of an animated GIF or WebP, each composed on the canvas by libvips (libnsgif and
 * libwebp's demuxer apply the disposal and blending), with the delays and loop count of its
 * metadata. Null for a single picture. The pages are decoded a chunk at a time (at most
 * CHUNK_BYTES of pixels in the service's memory): a GIF's page n needs the pages before it,
 * so one page a run decodes a 150-frame GIF 150 times over (4.9 s against 0.3 s).
 */
export async function pagedFrames(step: Step, dir: string): Promise<Frames | null> {
  let meta: Metadata;
  try {
    meta = await sharp(step.input, { limitInputPixels: step.job.maxInputPixels }).metadata();
  } catch (e) {
    throw failed(`The ${step.from} image could not be read.`, `sharp: ${(e as Error).message}`);
  }
  const pages = meta.pages ?? 1;
  if (pages < 2) return null;
  const width = meta.width ?? 0;
  const height = meta.pageHeight ?? meta.height ?? 0;
  checkBounds(step, pages, width, height);
  const perChunk = Math.max(1, Math.floor(CHUNK_BYTES / (width * height * 4)));
  const seconds = Math.max(1, Math.ceil(step.job.timeoutMs / 1000));
  const files: string[] = [];
  try {
    for (let page = 0; page < pages; page += perChunk) {
      const n = Math.min(perChunk, pages - page);
      const { data, info } = await sharp(step.input, { limitInputPixels: step.job.maxInputPixels, failOn: 'error', page, pages: n })
        .ensureAlpha()
        .raw()
        .timeout({ seconds })
        .toBuffer({ resolveWithObject: true });
      if (info.width !== width || info.height !== height * n || info.channels !== 4) throw new Error(`decoded ${info.width}×${info.height}×${info.channels} for ${n} pages of ${width}×${height}`);
      for (let i = 0; i < n; i++) {
        const file = join(dir, `f-${String(page + i + 1).padStart(5, '0')}.png`);
        const bytes = width * height * 4;
        await sharp(data.subarray(i * bytes, (i + 1) * bytes), { raw: { width, height, channels: 4 } }).png({ compressionLevel: 1 }).toFile(file);
        files.push(file);
      }
    }
  } catch (e) {
    throw failed(`The ${step.from} animation could not be converted to ${step.to}.`, `sharp: ${(e as Error).message}`);
  }
  const delaysMs = Array.from({ length: pages }, (_, i) => meta.delay?.[i] ?? 100);
  return { files, delaysMs, loop: meta.loop ?? 0 };
}

/**
 * Writes `step.output`, an animation of `step.to`, from the frames: GIF and WebP by sharp
 * (libvips's cgif and libwebp), APNG and AVIF by their own encoders (animation-encode.ts).
 */
export async function writeAnimation(step: Step, frames: Frames): Promise<void> {
  if (step.to === 'apng') return writeApng(step, await fitFrames(step, frames));
  if (step.to === 'avif') return writeAvifSequence(step, await fitFrames(step, frames));
  const anim = { loop: frames.loop, delay: [...frames.delaysMs] };
  // An animation of one frame (an APNG's only frame after a default image) is that picture: sharp joins two or more.
  const input = frames.files.length === 1 ? (frames.files[0] as string) : [...frames.files];
  let img = sharp(input, { ...(Array.isArray(input) ? { join: { animated: true } } : {}), limitInputPixels: step.job.maxInputPixels, failOn: 'error' });
  const maxDim = step.options.preset?.maxDimension;
  if (maxDim) img = img.resize({ width: maxDim, height: maxDim, fit: 'inside', withoutEnlargement: true });
  img = step.to === 'gif' ? img.gif(anim) : img.webp(step.quality >= 100 ? { ...anim, lossless: true } : { ...anim, quality: step.quality });
  try {
    await img.timeout({ seconds: Math.max(1, Math.ceil(step.job.timeoutMs / 1000)) }).toFile(step.output);
  } catch (e) {
    throw failed(`The ${step.from} animation could not be converted to ${step.to}.`, `sharp: ${(e as Error).message}`);
  }
}

/**
 * The frames within a preset's size (`maxDimension`), written by sharp beside the originals
 * (the APNG and AVIF encoders take the frames as they are).
 */
async function fitFrames(step: Step, frames: Frames): Promise<Frames> {
  const maxDim = step.options.preset?.maxDimension;
  if (!maxDim) return frames;
  const dir = await sandboxFolder(step.job, 'fitted-frames');
  const files: string[] = [];
  for (const [i, file] of frames.files.entries()) {
    const out = join(dir, `f-${String(i + 1).padStart(5, '0')}.png`);
    try {
      await sharp(file, { limitInputPixels: step.job.maxInputPixels, failOn: 'error' })
        .resize({ width: maxDim, height: maxDim, fit: 'inside', withoutEnlargement: true })
        .png({ compressionLevel: 1 })
        .toFile(out);
    } catch (e) {
      throw failed(`The ${step.from} animation could not be converted to ${step.to}.`, `sharp: ${(e as Error).message}`);
    }
    files.push(out);
  }
  return { ...frames, files };
}
