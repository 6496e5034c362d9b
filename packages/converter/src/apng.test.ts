import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { Converter } from './converter.js';
import { packageFile } from './engines/engine.js';
import { detectFormat } from './formats/detect.js';
import { pillowAnimation, pillowPixel, type PillowAnimation } from './testing/pillow-animation.js';
import { compareFrames, onWhite, opaque, unlike } from './testing/picture-checks.js';
import { atMostTwo, psnr, tool } from './testing/tools.js';

// Issue 31: animated PNG (APNG) as a source, and APNG and animated AVIF as animated targets.
// An animated PNG was read as a plain PNG (libvips reads the default image only): APNG → GIF
// or WebP lost the animation, and a default image that is not part of the animation became
// the still. Now APNG is a format of its own, told by its bytes (an acTL before the image
// data) whatever its name; it keeps every frame, delay and loop count to gif, webp and avif,
// and gives its first animation frame (or the one `frame` picks) to still targets; every
// animated source (gif, webp, AVIF sequence, JPEG XL, APNG) becomes an APNG or an AVIF
// sequence with its frames and delays. Judged by Pillow (python3-pil: APNG, GIF and WebP
// frames composed, durations, loop), avifdec (AVIF: --info and each frame by --index) and
// djxl with ffmpeg's APNG decoder (JPEG XL), against Pillow's own expectations for its APNG
// test files (Tests/test_file_apng.py). The sources are those projects' own test files, as
// small as they come; a file's targets, and the animated sources, are converted two at a time
// (issue 44: the converter's sandbox start-up of one overlaps the referees' reading of another).
const PHOTOS = packageFile('test/photos');
const CORPUS = packageFile('test/corpus');
const AVIFDEC = '/usr/bin/avifdec';

let converter: Converter;
let work: string;
before(async () => {
  work = await mkdtemp(join(tmpdir(), 'apng-'));
  converter = await Converter.create({ workDir: join(work, 'jobs') });
});
after(async () => {
  await converter.close();
  await rm(work, { recursive: true, force: true });
});

let outputs = 0;
async function convert(src: string, from: string, to: string, options: { frame?: number; quality?: number } = {}): Promise<{ out: string; engines: readonly string[] }> {
  // Numbered before any await: two conversions run at once (atMostTwo).
  const n = ++outputs;
  const input = join(work, `in-${n}-${src.split('/').pop() ?? 'x'}`);
  await copyFile(src, input);
  const out = join(work, `out-${n}.${to}`);
  const r = await converter.convert({ inputPath: input, sourceFormat: from, targetFormat: to, outputPath: out, options });
  assert.ok(r.ok, `${src} → ${to}: ${r.ok ? '' : `${r.error.message} ${r.error.detail ?? ''}`}`);
  return { out, engines: r.engines };
}

let dirs = 0;
const referee = (path: string): Promise<PillowAnimation> => pillowAnimation(path, join(work, `pil-${++dirs}`));

/** The index of the frame on screen `t` ms into an animation of these delays. */
function shownAt(delaysMs: readonly (number | null)[], t: number): number {
  let end = 0;
  for (const [i, d] of delaysMs.entries()) {
    end += d ?? 0;
    if (t < end) return i;
  }
  return delaysMs.length - 1;
}

/**
 * An animation written by libvips (GIF, WebP) against its reference, as it plays: libvips
 * writes two identical frames in a row as one frame of both delays (cgif and libwebp's
 * animation encoder merge them; one frame left is a still), so each reference frame is compared
 * with the frame on screen when it starts, and the whole animation must last as long.
 * `only`: the reference frames to compare (GIF cannot show translucent ones).
 */
function playsLike(label: string, out: { frames: readonly string[]; delaysMs: readonly (number | null)[] }, ref: { frames: readonly string[]; delaysMs: readonly (number | null)[] }, minSsim: number, only?: readonly number[]): string[] {
  const problems: string[] = [];
  const total = (ds: readonly (number | null)[]): number => ds.reduce<number>((a, d) => a + (d ?? 0), 0);
  if (out.frames.length > ref.frames.length || out.frames.length < 1) problems.push(`${label}: ${out.frames.length} frames for ${ref.frames.length}`);
  if (out.frames.length > 1 && total(out.delaysMs) !== total(ref.delaysMs)) problems.push(`${label}: delays ${out.delaysMs.join()} for ${ref.delaysMs.join()}`);
  let start = 0;
  for (const [i, ref1] of ref.frames.entries()) {
    const shown = out.frames.length > 1 ? shownAt(out.delaysMs, start) : 0;
    start += ref.delaysMs[i] ?? 0;
    if (only && !only.includes(i)) continue;
    const p = unlike(out.frames[shown] as string, ref1, minSsim);
    if (p) problems.push(`${label} at frame ${i} (${shown} shown): ${p}`);
  }
  return problems;
}

/** An AVIF sequence as avifdec reads it: each frame's duration in ms, and each frame decoded. */
async function avifSequence(path: string): Promise<{ delaysMs: number[]; frames: string[] }> {
  const info = tool(AVIFDEC, ['--info', '-j', '1', path]);
  const scale = Number(/(\d+) timescales per second/.exec(info)?.[1]);
  const delaysMs = [...info.matchAll(/Decoded frame \[\d+\] \[pts [^\]]*\] \[duration [\d.]+ \((\d+) timescales\)\]/g)].map((m) => Math.round((Number(m[1]) * 1000) / scale));
  const dir = join(work, `avifdec-${++dirs}`);
  await mkdir(dir);
  const frames = delaysMs.map((_, i) => {
    const f = join(dir, `f-${i}.png`);
    tool(AVIFDEC, ['-j', '1', '--index', String(i), path, f]);
    return f;
  });
  return { delaysMs, frames };
}

/** Pillow's APNG test files, with what Pillow's own tests say of them (frames of the animation only). */
const APNGS = [
  { file: 'pillow-apng-delay.png', delaysMs: [500, 1000, 500, 1000], loop: 0 },
  { file: 'pillow-apng-num-plays-1.png', delaysMs: [1000, 1000], loop: 1 },
  { file: 'pillow-apng-blend-op-over.png', delaysMs: [100, 100], loop: 1, last: { at: [0, 0], rgba: [0, 255, 0, 255] } },
  { file: 'pillow-apng-dispose-op-previous.png', delaysMs: [100, 100, 100], loop: 1, last: { at: [64, 32], rgba: [0, 255, 0, 255] } },
  { file: 'pillow-apng-dispose-op-background-region.png', delaysMs: [100, 100, 100], loop: 1, last: { at: [0, 0], rgba: [0, 0, 255, 255] } },
  { file: 'pillow-apng-mode-palette-alpha.png', delaysMs: [100, 1000], loop: 1, last: { at: [0, 0], rgba: [0, 255, 0, 255] } },
  { file: 'pillow-apng-different-durations.png', delaysMs: [4000, 1000], loop: 0 },
] as const;

test('an animated PNG is apng by its bytes, whatever its name; a still PNG and one whose acTL follows its image data are png', async () => {
  for (const { file } of APNGS) assert.equal((await detectFormat(join(PHOTOS, file), 'photo.png'))?.ext, 'apng', file);
  const apng = await detectFormat(join(CORPUS, 'apng/image-rs-apng-ball.apng'), 'ball.png');
  assert.deepEqual([apng?.ext, apng?.mime_type, apng?.family], ['apng', 'image/apng', 'image']);
  assert.equal((await detectFormat(join(PHOTOS, 'pillow-apng-chunk-actl-after-idat.png'), 'x.png'))?.ext, 'png');
  assert.equal((await detectFormat(packageFile('test/fixtures/sample.png'), 'sample.apng'))?.ext, 'png');
});

for (const a of APNGS) {
  test(`APNG ${a.file} → gif, webp, avif play every frame for its delay, with its loop count; → png the first frame`, { timeout: 120_000 }, async () => {
    const src = join(PHOTOS, a.file);
    const ref = await referee(src);
    // The referee agrees with Pillow's own tests of the file.
    assert.deepEqual([ref.mime, ref.delaysMs, ref.loop], ['image/apng', [...a.delaysMs], a.loop], 'Pillow: the source');
    if ('last' in a) assert.deepEqual(pillowPixel(ref.frames.at(-1) as string, a.last.at[0], a.last.at[1]), [...a.last.rgba], 'Pillow: the last frame');
    const checks: Record<string, () => Promise<string[]>> = {
      gif: async () => {
        const problems: string[] = [];
        const gif = await referee((await convert(src, 'apng', 'gif')).out);
        // GIF: no NETSCAPE loop block is one play.
        if (gif.frames.length > 1 && gif.loop !== (a.loop === 1 ? null : a.loop)) problems.push(`gif loop ${gif.loop}`);
        const solid = ref.frames.flatMap((f, i) => (opaque(f) ? [i] : []));
        return [...problems, ...playsLike('gif', gif, ref, 0.9, solid)];
      },
      webp: async () => {
        const webp = await referee((await convert(src, 'apng', 'webp', { quality: 100 })).out);
        return [...(webp.frames.length > 1 && webp.loop !== a.loop ? [`webp loop ${webp.loop}`] : []), ...playsLike('webp', webp, ref, 0.99)];
      },
      avif: async () => {
        const avif = await avifSequence((await convert(src, 'apng', 'avif')).out);
        return [...(avif.delaysMs.join() !== a.delaysMs.join() ? [`avif delays ${avif.delaysMs.join()}`] : []), ...compareFrames('avif', avif.frames, ref.frames, 0.95)];
      },
      png: async () => {
        const png = await referee((await convert(src, 'apng', 'png')).out);
        if (png.mime !== 'image/png' || png.frames.length !== 1) return [`png: ${png.mime}, ${png.frames.length} frames`];
        return compareFrames('png', png.frames, ref.frames.slice(0, 1), 0.99);
      },
    };
    const problems = (await atMostTwo(Object.values(checks), (check) => check())).flat();
    assert.deepEqual(problems, []);
  });
}

test('an APNG\'s default image that is not part of the animation is not its still: → png, jpg, pdf show the first animation frame; frame picks another', { timeout: 120_000 }, async () => {
  // Pillow's test: the default image is red, the animation's one frame green.
  const src = join(PHOTOS, 'pillow-apng-single-frame-default.png');
  const problems: string[] = [];
  const png = (await convert(src, 'apng', 'png')).out;
  if (pillowPixel(png, 0, 0).join() !== '0,255,0,255') problems.push(`png: ${pillowPixel(png, 0, 0).join()}`);
  const jpg = (await convert(src, 'apng', 'jpg')).out;
  const [r, g, b] = pillowPixel(jpg, 64, 32);
  if (!((r ?? 255) < 16 && (g ?? 0) > 240 && (b ?? 255) < 16)) problems.push(`jpg: ${r},${g},${b}`);
  const pdf = await convert(src, 'apng', 'pdf');
  assert.deepEqual(pdf.engines, ['sharp', 'img2pdf']);
  tool('/usr/bin/pdfimages', ['-png', pdf.out, `${pdf.out}-image`]);
  if (pillowPixel(`${pdf.out}-image-000.png`, 0, 0).slice(0, 3).join() !== '0,255,0') problems.push(`pdf: ${pillowPixel(`${pdf.out}-image-000.png`, 0, 0).join()}`);
  // One frame animated is a still GIF of that frame.
  const gif = await referee((await convert(src, 'apng', 'gif')).out);
  if (gif.frames.length !== 1 || pillowPixel(gif.frames[0] as string, 0, 0).join() !== '0,255,0,255') problems.push(`gif: ${gif.frames.length} frames`);
  // frame 5 of the bouncing ball is its fifth frame, not the first.
  const ball = join(CORPUS, 'apng/image-rs-apng-ball.apng');
  const ref = await referee(ball);
  const fifth = (await convert(ball, 'apng', 'png', { frame: 5 })).out;
  const p = unlike(fifth, ref.frames[4] as string, 0.99);
  if (p) problems.push(`frame 5: ${p}`);
  if (!unlike(fifth, ref.frames[0] as string, 0.99)) problems.push('frame 5 is like frame 1');
  // A 16-bit APNG whose frames blend over the ones before: its first frame as Pillow composes
  // it; the animation is refused naming the cause (ffmpeg's APNG decoder does not compose them).
  const deep = join(PHOTOS, 'pillow-apng-mode-16bit.png');
  const deepRef = await referee(deep);
  assert.deepEqual(pillowPixel(deepRef.frames.at(-1) as string, 0, 0), [0, 0, 128, 191], 'Pillow: the last frame');
  const q = unlike((await convert(deep, 'apng', 'png')).out, deepRef.frames[0] as string, 0.99);
  if (q) problems.push(`16-bit first frame: ${q}`);
  const copy = join(work, 'deep.png');
  await copyFile(deep, copy);
  const refusedDeep = await converter.convert({ inputPath: copy, sourceFormat: 'apng', targetFormat: 'gif', outputPath: join(work, 'deep.gif') });
  if (refusedDeep.ok || !/16 bits a sample and frames blended/.test(refusedDeep.error.message)) problems.push(`16-bit → gif: ${JSON.stringify(refusedDeep.ok ? refusedDeep.output : refusedDeep.error)}`);
  assert.deepEqual(problems, []);
});

/** The animated sources, with their reference decoders' frames. */
async function sources(): Promise<{ label: string; path: string; from: string; delaysMs: number[]; loop: number; refs: string[]; minSsim: number }[]> {
  const gif = join(PHOTOS, 'libjxl-animation-patches.gif');
  const webp = join(CORPUS, 'webp/image-rs-anim.webp');
  const avif = join(PHOTOS, 'libavif-colors-animated-8bpc.avif');
  const jxl = join(PHOTOS, 'libjxl-cropped-traffic-light.jxl');
  const apng = join(CORPUS, 'apng/image-rs-apng-ball.apng');
  const gifRef = await referee(gif);
  const webpRef = await referee(webp);
  const apngRef = await referee(apng);
  const avifRef = await avifSequence(avif);
  // djxl (libjxl's decoder) writes the animation as an APNG; Pillow composes its frames.
  const jxlApng = join(work, 'traffic-djxl.png');
  tool('/usr/bin/djxl', ['--num_threads=1', jxl, jxlApng]);
  const jxlRef = await referee(jxlApng);
  const delays = [...tool('/usr/bin/jxlinfo', [jxl]).matchAll(/duration: ([\d.]+) ms/g)].map((m) => Number(m[1]));
  return [
    { label: 'gif', path: gif, from: 'gif', delaysMs: gifRef.delaysMs as number[], loop: gifRef.loop ?? 1, refs: [...gifRef.frames], minSsim: 0.95 },
    { label: 'webp', path: webp, from: 'webp', delaysMs: webpRef.delaysMs as number[], loop: webpRef.loop ?? 0, refs: [...webpRef.frames], minSsim: 0.95 },
    { label: 'avif sequence', path: avif, from: 'avif', delaysMs: avifRef.delaysMs, loop: 0, refs: avifRef.frames, minSsim: 0.95 },
    { label: 'jxl', path: jxl, from: 'jxl', delaysMs: delays, loop: jxlRef.loop ?? 0, refs: [...jxlRef.frames], minSsim: 0.95 },
    { label: 'apng', path: apng, from: 'apng', delaysMs: apngRef.delaysMs as number[], loop: apngRef.loop ?? 0, refs: [...apngRef.frames], minSsim: 0.95 },
  ];
}

test('every animated source → apng (its frames exactly, each delay, the loop count) and → avif (an image sequence with each duration)', { timeout: 300_000 }, async () => {
  const perSource = await atMostTwo(await sources(), async (s) => {
    assert.ok(s.refs.length >= 2 && s.delaysMs.length === s.refs.length, `${s.label}: the reference has ${s.refs.length} frames, ${s.delaysMs.length} delays`);
    const problems: string[] = [];
    if (s.from !== 'apng') {
      const out = await referee((await convert(s.path, s.from, 'apng')).out);
      if (out.mime !== 'image/apng') problems.push(`${s.label} → apng: ${out.mime}`);
      if (out.delaysMs.join() !== s.delaysMs.join()) problems.push(`${s.label} → apng delays ${out.delaysMs.join()}, not ${s.delaysMs.join()}`);
      if (out.loop !== s.loop) problems.push(`${s.label} → apng loop ${out.loop}, not ${s.loop}`);
      // Lossless: the composed frames as the source's decoder gives them.
      problems.push(...compareFrames(`${s.label} → apng`, out.frames, s.refs, 0.99));
    }
    if (s.from !== 'avif') {
      const avif = await avifSequence((await convert(s.path, s.from, 'avif')).out);
      if (avif.delaysMs.join() !== s.delaysMs.join()) problems.push(`${s.label} → avif delays ${avif.delaysMs.join()}, not ${s.delaysMs.join()}`);
      problems.push(...compareFrames(`${s.label} → avif`, avif.frames, s.refs, 0.9));
    }
    return problems;
  });
  const problems = perSource.flat();
  assert.deepEqual(problems, []);
});

test('a play count other than forever reaches an APNG: an APNG played once → webp → apng plays once, every frame at its delay', { timeout: 60_000 }, async () => {
  const once = await convert(join(PHOTOS, 'pillow-apng-dispose-op-background-region.png'), 'apng', 'webp', { quality: 100 });
  const webp = await referee(once.out);
  assert.equal(webp.loop, 1, 'Pillow: the WebP plays once');
  const apng = await referee((await convert(once.out, 'webp', 'apng')).out);
  assert.deepEqual([apng.mime, apng.loop, apng.delaysMs], ['image/apng', 1, webp.delaysMs]);
  assert.deepEqual(compareFrames('apng', apng.frames, webp.frames, 0.99), []);
});

test('an APNG that says it has 20,000 frames of 100×100 is refused before any frame is decoded (the job\'s pixel limit over all frames)', { timeout: 60_000 }, async () => {
  const png = await readFile(join(CORPUS, 'apng/image-rs-apng-ball.apng'));
  const at = png.indexOf('acTL');
  assert.ok(at > 0);
  png.writeUInt32BE(20_000, at + 4);
  png.writeUInt32BE(crc32(png.subarray(at, at + 12)), at + 12);
  const src = join(work, 'many-frames.png');
  await writeFile(src, png);
  assert.equal((await detectFormat(src, 'many.png'))?.ext, 'apng');
  const r = await converter.convert({ inputPath: src, sourceFormat: 'apng', targetFormat: 'gif', outputPath: join(work, 'many.gif') });
  assert.ok(!r.ok && r.error.code === 'conversion_failed', JSON.stringify(r.ok ? r.output : r.error));
  assert.match(r.error.message, /20000 frames of 100×100 pixels \(200 million in all\)/);
});

test('a still picture → apng is a one-frame PNG of it; a still → avif stays a still AVIF', { timeout: 60_000 }, async () => {
  const src = join(work, 'still-sample.png');
  await copyFile(packageFile('test/fixtures/sample.png'), src);
  const out = await referee((await convert(src, 'png', 'apng')).out);
  assert.deepEqual([out.mime, out.frames.length], ['image/png', 1]);
  // sharp writes the 16-bit fixture again: equal to ImageMagick's 16-bit measure within 50 dB.
  assert.ok(psnr(onWhite(out.frames[0] as string), onWhite(src)) >= 50);
  const avif = await convert(join(CORPUS, 'jpg', (await readdir(join(CORPUS, 'jpg'))).sort()[0] as string), 'jpg', 'avif');
  assert.match(tool(AVIFDEC, ['--info', avif.out]), /Image Sequence Frames|Resolution/);
  assert.doesNotMatch(tool(AVIFDEC, ['--info', avif.out]), /Image Sequence Frames/);
});

test('frame with an APNG: refused to an animated target, past the last frame; frame 1 of a one-frame animation is allowed', { timeout: 60_000 }, async () => {
  const refused = async (file: string, to: string, frame: number, pattern: RegExp): Promise<void> => {
    const src = join(work, `refused-${file}`);
    await copyFile(join(PHOTOS, file), src);
    const r = await converter.convert({ inputPath: src, sourceFormat: 'apng', targetFormat: to, outputPath: join(work, `refused.${to}`), options: { frame } });
    assert.ok(!r.ok && r.error.code === 'invalid_request' && r.error.field === 'frame', `${file} → ${to} frame ${frame}: ${JSON.stringify(r.ok ? r.output : r.error)}`);
    assert.match(r.error.message, pattern);
  };
  await refused('pillow-apng-delay.png', 'gif', 2, /keeps the animation/);
  await refused('pillow-apng-delay.png', 'avif', 2, /keeps the animation/);
  await refused('pillow-apng-delay.png', 'png', 5, /has 4 frames/);
  await refused('pillow-apng-single-frame-default.png', 'png', 2, /not animated \(one frame\)/);
  await convert(join(PHOTOS, 'pillow-apng-single-frame-default.png'), 'apng', 'png', { frame: 1 });
});
