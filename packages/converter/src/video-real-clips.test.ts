import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Converter } from './converter.js';
import { convertCopy, judgeOutput, sourceFacts, videoSample } from './testing/video-checks.js';

// Issue 31 on real files: clips from the Android media library's test data (test/videos,
// NOTICE.md there) — an iPhone Dolby Vision MOV, HLG and HDR10 clips, an AVI with MPEG-4 part
// 2 and MP3, 3GP with H.263 or AMR-NB, MKVs with SubRip, ASS, PGS and VobSub subtitles, a
// turned and mirrored MP4, an Apple spatial (MV-HEVC) video — each converted to what a user
// asks of it and judged as the generated clips are (src/testing/video-checks.ts): decoded
// whole by FFmpeg, each stream as long as the source's, every stream the target holds present.

interface RealClip {
  readonly file: string;
  /** The detected format. */
  readonly from: string;
  /** Displayed size of a still. */
  readonly size: string;
  readonly pictures: boolean;
  /** Sound tracks. */
  readonly sounds: number;
  /** Subtitle kind: text (any video target holds it) or bitmap (Matroska only). */
  readonly subtitles?: 'text' | 'bitmap';
  /** Seconds of one frame, where over the default 40 ms slack. */
  readonly frame?: number;
}

const CLIPS: readonly RealClip[] = [
  { file: 'dolbyVision-hdr.MOV', from: 'mov', size: '720×1280', pictures: true, sounds: 1 },
  { file: 'hlg10-color-test.mp4', from: 'mp4', size: '1920×1080', pictures: true, sounds: 1 },
  { file: 'hdr10-av1.mp4', from: 'mp4', size: '720×1280', pictures: true, sounds: 1 },
  { file: 'bt601.mov', from: 'mov', size: '640×428', pictures: true, sounds: 1 },
  { file: 'sample.avi', from: 'avi', size: '960×400', pictures: true, sounds: 1 },
  { file: 'bbb_176x144_128kbps_15fps_h263.3gp', from: '3gp', size: '176×144', pictures: true, sounds: 0, frame: 1 / 15 },
  { file: 'bbb_mono_8kHz_12.2kbps_amrnb.3gp', from: '3gp', size: '', pictures: false, sounds: 1 },
  { file: 'sample_with_srt.mkv', from: 'mkv', size: '1080×720', pictures: true, sounds: 1, subtitles: 'text' },
  { file: 'sample_with_ass_subtitles.mkv', from: 'mkv', size: '1080×720', pictures: true, sounds: 1, subtitles: 'text' },
  { file: 'sample_with_pgs_subtitles.mkv', from: 'mkv', size: '1080×720', pictures: true, sounds: 1, subtitles: 'bitmap' },
  { file: 'sample_with_vobsub.mkv', from: 'mkv', size: '1080×720', pictures: true, sounds: 1, subtitles: 'bitmap' },
  { file: 'sample_rotate_and_reflect.mp4', from: 'mp4', size: '720×1080', pictures: true, sounds: 1 },
  { file: 'water_180_mvhevc_5frames.mov', from: 'mov', size: '1934×2160', pictures: true, sounds: 0 },
];

let converter: Converter;
let work: string;
before(async () => {
  work = await mkdtemp(join(tmpdir(), 'video-real-'));
  converter = await Converter.create({ workDir: join(work, 'jobs') });
});
after(async () => {
  await converter.close();
  await rm(work, { recursive: true, force: true });
});

/** What a user asks of a clip: another video container (mkv for an MP4 source), webm, and where there are pictures a gif and a jpg still, where there is sound an mp3. */
function targets(c: RealClip): string[] {
  return [c.from === 'mp4' ? 'mkv' : 'mp4', 'webm', ...(c.pictures ? ['gif', 'jpg'] : []), ...(c.sounds ? ['mp3'] : [])];
}

/** The stream kinds a video target holds of this clip: the pictures, every sound track, text subtitles anywhere, bitmap subtitles in Matroska. */
function wantStreams(c: RealClip, target: string): string[] {
  const subtitles = c.subtitles === 'text' || (c.subtitles === 'bitmap' && target === 'mkv');
  return [...(c.pictures ? ['video'] : []), ...Array<string>(c.sounds).fill('audio'), ...(subtitles ? ['subtitle'] : [])];
}

test('real phone, camera and screen clips → video, gif, jpg, mp3: every stream kept, each as long as the source’s', { timeout: 900_000 }, async () => {
  const problems: string[] = [];
  for (const c of CLIPS) {
    const src = videoSample(c.file);
    const facts = { ...sourceFacts(src, c.size), ...(c.frame ? { frame: c.frame } : {}) };
    for (const target of targets(c)) {
      const label = `${c.file} → ${target}`;
      try {
        problems.push(...judgeOutput(label, await convertCopy(converter, work, src, c.from, target), target, facts, wantStreams(c, target)));
      } catch (e) {
        problems.push(`${label}: ${(e as Error).message.split('\n')[0]}`);
      }
    }
  }
  assert.deepEqual(problems, []);
});
