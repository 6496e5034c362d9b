// Issue 31: video → animated GIF / WebP and video → still frame, through the real Converter
// and its committed proof. The clips are generated here by ffmpeg's lavfi sources (testsrc2,
// no real-world clip in the corpus); every output is read back by tools that did not write
// it: ImageMagick's identify (frames, sides, GIF loop count), ffprobe -count_frames,
// exiftool (WebP's ANIM chunk), Pillow (an APNG's frames, delays and play count).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Converter } from '../converter.js';
import { pillowAnimation } from '../testing/pillow-animation.js';
import { scratchDir, ssim, tool } from '../testing/tools.js';

let dir: string;
let conv: Converter;
const clips = new Map<string, string>();

const ffmpeg = (args: string[]): void => {
  tool('/usr/bin/ffmpeg', ['-v', 'error', '-y', ...args]);
};

before(async () => {
  dir = await scratchDir('conv-video-frames-');
  await mkdir(join(dir, 'out'), { recursive: true });
  conv = await Converter.create({ workDir: join(dir, 'work'), timeoutMs: 120_000, libreoffice: { instances: 1 } });
  // Generated (ffmpeg lavfi): a 3 s 960×540 clip at 25 fps with sound, as a phone's landscape video.
  const wide = join(dir, 'wide.mp4');
  ffmpeg(['-f', 'lavfi', '-i', 'testsrc2=duration=3:size=960x540:rate=25', '-f', 'lavfi', '-i', 'sine=duration=3', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', wide]);
  clips.set('mp4', wide);
  // A phone held upright: 320×180 pixels stored, a display matrix turning them by 90° (portrait 180×320).
  const small = join(dir, 'small.mp4');
  ffmpeg(['-f', 'lavfi', '-i', 'testsrc2=duration=3:size=320x180:rate=25', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', small]);
  const rotated = join(dir, 'rotated.mp4');
  ffmpeg(['-i', small, '-c', 'copy', '-metadata:s:v', 'rotate=90', rotated]);
  clips.set('rotated', rotated);
  // A clip that fades in from black: its representative frame is not the first one.
  const fade = join(dir, 'fade.mp4');
  ffmpeg(['-f', 'lavfi', '-i', 'testsrc2=duration=3:size=160x90:rate=25,fade=in:st=0:d=1', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', fade]);
  clips.set('fade', fade);
  // Other containers of the same pictures, made by the ffmpeg CLI.
  ffmpeg(['-i', small, '-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', join(dir, 'small.webm')]);
  ffmpeg(['-i', small, '-c', 'copy', join(dir, 'small.mkv')]);
  ffmpeg(['-i', small, '-c', 'copy', join(dir, 'small.mov')]);
  ffmpeg(['-i', small, '-c:v', 'mpeg4', join(dir, 'small.avi')]);
  ffmpeg(['-i', small, '-c', 'copy', '-f', '3gp', join(dir, 'small.3gp')]);
  for (const ext of ['webm', 'mkv', 'mov', 'avi', '3gp']) clips.set(ext, join(dir, `small.${ext}`));
});
after(async () => {
  await conv.close();
  await rm(dir, { recursive: true, force: true });
});

let n = 0;
async function convert(clip: string, to: string, options: Record<string, unknown> = {}, from = clip === 'rotated' || clip === 'fade' ? 'mp4' : clip): Promise<string> {
  const out = join(dir, 'out', `${n++}-${clip}.${to}`);
  const r = await conv.convert({ inputPath: clips.get(clip) as string, sourceFormat: from, targetFormat: to, outputPath: out, options });
  if (!r.ok) assert.fail(`${clip} → ${to}: ${JSON.stringify(r.error)}`);
  assert.deepEqual(r.engines, ['ffmpeg']);
  return out;
}

/** Every frame's sides, by ImageMagick. */
function frames(path: string): { width: number; height: number }[] {
  return tool('/usr/bin/identify', ['-format', '%w %h\n', path]).trim().split('\n').map((l) => {
    const [w, h] = l.split(' ').map(Number);
    return { width: w as number, height: h as number };
  });
}

/** The GIF's NETSCAPE2.0 loop count as ImageMagick reads it; undefined without a loop block (plays once). */
function gifIterations(path: string): number | undefined {
  const m = /Iterations: (\d+)/.exec(tool('/usr/bin/identify', ['-verbose', `${path}[0]`]));
  return m ? Number(m[1]) : undefined;
}

/** The loop count stored in the GIF's NETSCAPE2.0 application extension, read from the bytes. */
function netscapeCount(path: string): number | undefined {
  const buf = readFileSync(path);
  const at = buf.indexOf('NETSCAPE2.0');
  // "NETSCAPE2.0", sub-block size 3, sub-block id 1, the count (little-endian).
  return at < 0 ? undefined : buf.readUInt16LE(at + 13);
}

/** ffprobe's count of decoded frames. */
function countFrames(path: string): number {
  return Number(tool('/usr/bin/ffprobe', ['-v', 'error', '-count_frames', '-select_streams', 'v:0', '-show_entries', 'stream=nb_read_frames', '-of', 'csv=p=0', path]).trim());
}

test('mp4 → gif: about 12 fps, at most 480 px wide with the aspect kept, a palette of its own, looping forever', { timeout: 120_000 }, async () => {
  const gif = await convert('mp4', 'gif');
  const fs = frames(gif);
  // 3 s at 12 fps (not the clip's 25): 36 frames, give or take the last one.
  assert.ok(Math.abs(fs.length - 36) <= 1, `${fs.length} frames`);
  assert.equal(countFrames(gif), fs.length);
  assert.deepEqual(fs[0], { width: 480, height: 270 });
  assert.equal(gifIterations(gif), 0, 'loops forever');
  assert.equal(netscapeCount(gif), 0);
  // The palette made for the clip: testsrc2's colours, far more than a fixed 6×7×6 would keep apart.
  const colours = Number(tool('/usr/bin/identify', ['-format', '%k', `${gif}[0]`]));
  assert.ok(colours > 64, `${colours} colours`);
});

test('gif options: start, duration, fps, width and loop', { timeout: 120_000 }, async () => {
  const gif = await convert('mp4', 'gif', { start: 1, duration: 1.5, fps: 8, width: 200, loop: 3 });
  const fs = frames(gif);
  assert.ok(Math.abs(fs.length - 12) <= 1, `${fs.length} frames for 1.5 s at 8 fps`);
  assert.equal(fs[0]?.width, 200);
  assert.ok(Math.abs((fs[0]?.height ?? 0) - 112.5) <= 1, `${fs[0]?.height} high`);
  // Played 3 times: ImageMagick reports the plays; the NETSCAPE2.0 block holds the repeats after the first.
  assert.equal(gifIterations(gif), 3);
  assert.equal(netscapeCount(gif), 2);
  // Once: no loop block at all. Form fields arrive as strings.
  const once = await convert('mov', 'gif', { loop: '1', fps: '5', duration: '1' });
  assert.equal(gifIterations(once), undefined);
  assert.equal(netscapeCount(once), undefined);
  assert.ok(Math.abs(frames(once).length - 5) <= 1);
  // The width is never enlarged.
  assert.equal(frames(await convert('webm', 'gif', { width: 1920, duration: 0.5 }))[0]?.width, 320);
});

test('mp4 → webp is animated by default; animated false makes a still', { timeout: 120_000 }, async () => {
  const anim = await convert('mp4', 'webp', { duration: 2 });
  const fs = frames(anim);
  assert.ok(Math.abs(fs.length - 24) <= 1, `${fs.length} frames`);
  assert.deepEqual(fs[0], { width: 480, height: 270 });
  const exif = tool('/usr/bin/exiftool', ['-n', '-s', '-AnimationLoopCount', '-WebP_Flags', anim]);
  assert.match(exif, /AnimationLoopCount\s*:\s*0/);
  assert.match(exif, /Animation/);
  const twice = await convert('mkv', 'webp', { duration: 1, loop: 2 });
  assert.match(tool('/usr/bin/exiftool', ['-n', '-s', '-AnimationLoopCount', twice]), /AnimationLoopCount\s*:\s*2/);
  const still = await convert('mp4', 'webp', { animated: false, start: 1 });
  assert.deepEqual(frames(still), [{ width: 960, height: 540 }]);
  assert.doesNotMatch(tool('/usr/bin/exiftool', ['-s', '-WebP_Flags', still]), /Animation/);
});

test('mp4 → apng: 12 fps with every delay exactly 1/12 s, 480 px wide, looping forever; options as for gif; animated false a one-frame PNG', { timeout: 120_000 }, async () => {
  const anim = await pillowAnimation(await convert('mp4', 'apng', { duration: 2 }), join(dir, 'pil-apng'));
  assert.equal(anim.mime, 'image/apng');
  assert.equal(anim.frames.length, 24, '2 s at 12 fps');
  assert.ok(anim.delaysMs.every((d) => Math.abs((d ?? 0) - 1000 / 12) < 1e-6), `delays ${anim.delaysMs.join()}`);
  assert.deepEqual([anim.width, anim.height, anim.loop], [480, 270, 0]);
  // Frame 12 (1 s in) is the clip's picture at 1 s, as the ffmpeg CLI scales it.
  const ref = join(dir, 'ref-1s.png');
  ffmpeg(['-ss', '1', '-i', clips.get('mp4') as string, '-frames:v', '1', '-vf', 'scale=480:270:flags=lanczos', ref]);
  const s = ssim(anim.frames[12] as string, ref);
  assert.ok(s > 0.9, `SSIM ${s} at 1 s`);
  const opts = await pillowAnimation(await convert('mov', 'apng', { start: 1, duration: 1, fps: 5, width: 160, loop: 2 }), join(dir, 'pil-apng-opts'));
  assert.deepEqual([opts.frames.length, opts.width, opts.height, opts.loop], [5, 160, 90, 2]);
  assert.ok(opts.delaysMs.every((d) => d === 200), `delays ${opts.delaysMs.join()}`);
  const still = await pillowAnimation(await convert('mp4', 'apng', { animated: false, start: 1 }), join(dir, 'pil-apng-still'));
  assert.deepEqual([still.mime, still.frames.length, still.width], ['image/png', 1, 960]);
});

test('a phone clip turned by its display matrix: the still and the GIF are portrait', { timeout: 120_000 }, async () => {
  for (const to of ['jpg', 'png', 'gif']) {
    const out = await convert('rotated', to, to === 'gif' ? { duration: 0.5 } : {});
    assert.deepEqual(frames(out)[0], { width: 180, height: 320 }, to);
  }
  const at = await convert('rotated', 'png', { start: 2.5, width: 90 });
  assert.deepEqual(frames(at), [{ width: 90, height: 160 }]);
});

test('a still without start is a representative frame, not the black first one', { timeout: 60_000 }, async () => {
  const png = await convert('fade', 'png');
  const first = join(dir, 'first.png');
  ffmpeg(['-i', clips.get('fade') as string, '-frames:v', '1', first]);
  const mean = (p: string): number => Number(tool('/usr/bin/identify', ['-format', '%[fx:mean]', p]));
  assert.ok(mean(first) < 0.05, `the first frame is black (${mean(first)})`);
  assert.ok(mean(png) > 0.2, `the still is lit (${mean(png)})`);
});

test('every video container the issue names converts to gif, webp, jpg and png', { timeout: 300_000 }, async () => {
  for (const from of ['webm', 'mkv', 'mov', 'avi', '3gp']) {
    for (const to of ['gif', 'webp', 'jpg', 'png']) {
      const out = await convert(from, to, to === 'gif' || to === 'webp' ? { duration: 0.5 } : { start: 0.2 });
      assert.deepEqual(frames(out)[0], { width: 320, height: 180 }, `${from} → ${to}`);
    }
  }
});

test('bad values and misplaced options fail with invalid_request naming the field; start past the end too', { timeout: 60_000 }, async () => {
  const cases: [string, string, Record<string, unknown>, string][] = [
    ['mp4', 'gif', { fps: 0 }, 'fps'],
    ['mp4', 'gif', { fps: 31 }, 'fps'],
    ['mp4', 'gif', { fps: 2.5 }, 'fps'],
    ['mp4', 'gif', { width: 15 }, 'width'],
    ['mp4', 'gif', { width: 1921 }, 'width'],
    ['mp4', 'gif', { duration: 0 }, 'duration'],
    ['mp4', 'gif', { duration: 61 }, 'duration'],
    ['mp4', 'gif', { start: -1 }, 'start'],
    ['mp4', 'gif', { start: 'soon' }, 'start'],
    ['mp4', 'gif', { loop: -1 }, 'loop'],
    ['mp4', 'webp', { animated: 'maybe' }, 'animated'],
    ['mp4', 'jpg', { fps: 10 }, 'fps'],
    ['mp4', 'png', { duration: 2 }, 'duration'],
    ['mp4', 'webp', { animated: false, loop: 0 }, 'loop'],
    ['mp4', 'jpg', { animated: true }, 'animated'],
    ['mp4', 'apng', { fps: 31 }, 'fps'],
    ['mp4', 'apng', { animated: false, fps: 5 }, 'fps'],
    ['mp4', 'mp3', { start: 1 }, 'start'],
    ['png', 'jpg', { start: 1 }, 'start'],
  ];
  for (const [from, to, options, field] of cases) {
    const plan = conv.plan(from, to, options);
    assert.equal(plan.ok, false, `${from} → ${to} ${JSON.stringify(options)}`);
    if (!plan.ok) {
      assert.equal(plan.error.code, 'invalid_request', JSON.stringify(options));
      assert.equal(plan.error.field, field, JSON.stringify(options));
    }
  }
  for (const to of ['png', 'gif']) {
    const r = await conv.convert({ inputPath: clips.get('mp4') as string, sourceFormat: 'mp4', targetFormat: to, outputPath: join(dir, 'out', `late.${to}`), options: { start: 3.5 } });
    assert.equal(r.ok, false);
    if (!r.ok) {
      assert.equal(r.error.code, 'invalid_request');
      assert.equal(r.error.field, 'start');
      assert.match(r.error.message, /start is 3\.5 s but the clip is 3(\.\d+)? s long/);
    }
  }
});
