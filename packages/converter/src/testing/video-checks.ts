/**
 * How the video tests judge an output (issue 31), with FFmpeg's own decoder and ImageMagick
 * rather than the code under test: each stream decoded whole and timed, the streams present,
 * a still's displayed size. Shared by the generated-clip and the real-clip tests. The checks
 * run their tools without blocking, so that a test can judge one output while the converter
 * makes the next (`atMostTwo` in tools.ts, issue 44).
 */
import assert from 'node:assert/strict';
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Converter } from '../converter.js';
import { runTool } from './tools.js';

const FFMPEG = '/usr/bin/ffmpeg';

/** Runs a tool and resolves with its stdout; rejects on a non-zero exit (as tools.ts's `tool`, without blocking). */
export async function run(cmd: string, args: readonly string[]): Promise<string> {
  const r = await runTool(cmd, args);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout.toString('utf8');
}

/** `packages/converter/test/videos/<name>`: real clips from public projects' test data (see the NOTICE.md there). */
export function videoSample(name: string): string {
  return fileURLToPath(new URL(`../../test/videos/${name}`, import.meta.url));
}

/** The streams ffprobe lists, by type, sorted. */
export async function streamKinds(path: string): Promise<string[]> {
  return (await run('/usr/bin/ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_type', '-of', 'csv=p=0', path])).trim().split('\n').filter(Boolean).sort();
}

/**
 * How long a stream lasts when FFmpeg decodes it whole, in seconds; null when there is no such
 * stream. By default its last frame's end on the file's clock (a late start counts: sync);
 * `own`: from its own first frame (a sound-only or picture-only output starts at its first frame).
 */
export async function decodedSeconds(path: string, stream: 'v:0' | 'a:0', own = false): Promise<number | null> {
  const filter = own ? (stream === 'v:0' ? ['-filter:v', 'setpts=PTS-STARTPTS'] : ['-filter:a', 'asetpts=PTS-STARTPTS']) : [];
  const out = await run(FFMPEG, ['-v', 'error', '-i', path, '-map', `0:${stream}?`, ...filter, '-f', 'null', '-', '-progress', 'pipe:1']);
  const times = [...out.matchAll(/^out_time_us=(\d+)$/gm)].map((m) => Number(m[1]));
  const last = times.at(-1);
  return last ? last / 1e6 : null;
}

/**
 * One audio frame of the output's sound (AAC and Opus hold whole frames: the last one is
 * padded). AAC's 1,024 samples at the 8 kHz of an AMR-NB source are 128 ms, 6 % of a 2 s clip;
 * the sound is not cut, only padded. At least 40 ms.
 */
export async function frameSeconds(path: string): Promise<number> {
  const [codec, rate] = (await run('/usr/bin/ffprobe', ['-v', 'error', '-select_streams', 'a:0', '-show_entries', 'stream=codec_name,sample_rate', '-of', 'csv=p=0', path])).trim().split(',');
  const samples = codec === 'aac' ? 1024 : codec === 'mp3' ? 1152 : codec === 'opus' ? 960 : 0;
  return Math.max(0.04, samples / (Number(rate) || 48_000));
}

/** Within 2 % of `want`, or within `slack` seconds (a frame) of it. */
export const within = (got: number | null, want: number | null, slack: number): boolean => got !== null && want !== null && Math.abs(got - want) <= Math.max(want * 0.02, slack);

/** What a source holds, as FFmpeg decodes it. */
export interface SourceFacts {
  /** Decoded seconds of the first picture stream; null: none. */
  readonly video: number | null;
  /** Decoded seconds of the first sound stream; null: none. */
  readonly sound: number | null;
  /** The pictures' and the sound's own length (from their first frame), for a gif and an mp3. */
  readonly ownVideo: number | null;
  readonly ownSound: number | null;
  /** Displayed size of a still, `W×H` (a phone's rotation applied). */
  readonly size: string;
  /** The time of one source frame: slack for the picture's length (default 40 ms). */
  readonly frame?: number;
}

/** The decoded facts of a source file. */
export async function sourceFacts(path: string, size: string): Promise<SourceFacts> {
  const [video, sound, ownVideo, ownSound] = await Promise.all([decodedSeconds(path, 'v:0'), decodedSeconds(path, 'a:0'), decodedSeconds(path, 'v:0', true), decodedSeconds(path, 'a:0', true)]);
  return { video, sound, ownVideo, ownSound, size };
}

/**
 * What is wrong with `out`, a conversion of a source with `src`'s facts to `target` (empty:
 * nothing). Video targets: exactly the stream kinds `wantStreams`, pictures and sound each as
 * long as the source's; gif: within a 12-fps frame of the source; mp3: sound only, as long;
 * a still: the displayed size.
 */
export async function judgeOutput(label: string, out: string, target: string, src: SourceFacts, wantStreams: readonly string[]): Promise<string[]> {
  const problems: string[] = [];
  const kinds = await streamKinds(out);
  const frame = Math.max(src.frame ?? 0, 0.04);
  if (target === 'gif') {
    // 12 frames a second: within a frame's time of the source.
    const got = await decodedSeconds(out, 'v:0');
    if (!within(got, src.ownVideo, Math.max(1 / 12 + 0.01, frame))) problems.push(`${label}: ${got} s, the source's ${src.ownVideo} s`);
  } else if (target === 'mp3') {
    const got = await decodedSeconds(out, 'a:0', true);
    if (kinds.join() !== 'audio') problems.push(`${label}: streams ${kinds.join(',')}`);
    if (!within(got, src.ownSound, await frameSeconds(out))) problems.push(`${label}: ${got} s, the source's ${src.ownSound} s`);
  } else if (target === 'jpg' || target === 'png') {
    const size = await run('/usr/bin/identify', ['-format', '%w×%h', out]);
    if (size !== src.size) problems.push(`${label}: ${size}, not ${src.size}`);
  } else {
    const want = [...wantStreams].sort();
    if (kinds.join() !== want.join()) problems.push(`${label}: streams ${kinds.join(',')}, not ${want.join(',')}`);
    if (src.video !== null) {
      const got = await decodedSeconds(out, 'v:0');
      if (!within(got, src.video, frame)) problems.push(`${label}: pictures ${got} s, the source's ${src.video} s`);
    }
    if (src.sound !== null) {
      const got = await decodedSeconds(out, 'a:0');
      if (!within(got, src.sound, await frameSeconds(out))) problems.push(`${label}: sound ${got} s, the source's ${src.sound} s`);
    }
  }
  return problems;
}

/** Converts a copy of `src` (in `work`) through `converter`; fails the test with the error when it is refused. */
export async function convertCopy(converter: Converter, work: string, src: string, from: string, to: string, options?: Record<string, unknown>): Promise<string> {
  const input = join(work, `in-${Math.random().toString(36).slice(2)}.${from}`);
  await copyFile(src, input);
  const out = `${input}.${to}`;
  const r = await converter.convert({ inputPath: input, sourceFormat: from, targetFormat: to, outputPath: out, ...(options ? { options } : {}) });
  assert.ok(r.ok, `${from} → ${to}: ${r.ok ? '' : `${r.error.message} ${r.error.detail ?? ''}`}`);
  return out;
}

/** One stream as ffprobe lists it. */
export interface ProbedStream {
  readonly codec_type: string;
  readonly codec_name?: string;
  readonly pix_fmt?: string;
  readonly color_transfer?: string;
  readonly color_primaries?: string;
  readonly color_space?: string;
  /** A Dolby Vision configuration record's profile. */
  readonly dv_profile?: number;
  /** Matroska's tags come upper-case (LANGUAGE). */
  readonly tags?: { readonly language?: string; readonly LANGUAGE?: string };
}

/** Every stream of `path` as ffprobe lists it. */
export async function probeStreams(path: string): Promise<ProbedStream[]> {
  const out = await run('/usr/bin/ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_type,codec_name,pix_fmt,color_transfer,color_primaries,color_space:stream_tags=language:stream_side_data=dv_profile', '-of', 'json', path]);
  const streams = (JSON.parse(out) as { streams?: (ProbedStream & { side_data_list?: { dv_profile?: number }[] })[] }).streams ?? [];
  return streams.map(({ side_data_list, ...st }) => {
    const dv = side_data_list?.find((d) => d.dv_profile !== undefined)?.dv_profile;
    return dv === undefined ? st : { ...st, dv_profile: dv };
  });
}

/** The first frame of `path`'s pictures as a PNG (FFmpeg's decode, turned upright, its colour tags honoured). */
export async function firstFrame(path: string, png: string): Promise<string> {
  await run(FFMPEG, ['-v', 'error', '-y', '-i', path, '-frames:v', '1', png]);
  return png;
}

/** A picture's mean saturation (ImageMagick's HSL, 0–1): a washed-out HDR frame has little. */
export async function meanSaturation(picture: string): Promise<number> {
  return Number(await run('/usr/bin/convert', [picture, '-colorspace', 'HSL', '-channel', 'G', '-separate', '-format', '%[fx:mean]', 'info:']));
}

/** A stream's packets' MD5 (copied, not decoded): equal when the packets went through unchanged. */
export async function packetsHash(path: string, stream: string): Promise<string> {
  return (await run(FFMPEG, ['-v', 'error', '-i', path, '-map', `0:${stream}`, '-c', 'copy', '-f', 'streamhash', '-hash', 'md5', '-'])).trim().replace(/^\d+,/, '');
}
