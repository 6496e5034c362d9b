/**
 * An audio or video output must carry the source's content (issue 31). FFmpeg exits 0 on a
 * source whose frames it cannot decode (a FLAC whose STREAMINFO says 3 s and whose frames
 * are unreadable): the result was a 78-byte WAV header or an unreadable 880-byte MP3,
 * reported as a completed conversion. After the engines ran, ffprobe (sandboxed, bounded)
 * measures the source and the output: when the source says it holds at least half a second
 * of the kind of stream the target carries (sound for an audio target, pictures for a video
 * target) and the output holds none of it — no such stream, nothing ffprobe can read, or
 * less than 5 % of the source's length and under one second — the conversion fails.
 * A container that overstates its length (a hostile header claiming hours) does not fail
 * an output that holds the real content: only an output of (almost) nothing does. A stream
 * without a length of its own (Matroska's) is taken as long as the file; when that would fail
 * an output holding some of it, the stream is measured by reading its packets (no decoding):
 * androidx/media's PGS and VobSub MKVs hold 0.05 s of pictures in a 1.24 s file, and their
 * whole pictures were refused.
 */
import { ConversionError } from '../errors.js';
import { positiveNumber, type JobContext } from '../engines/engine.js';
import type { FormatInfo } from '../formats/catalogue.js';
import { runSandboxed } from '../exec/exec.js';

/** What ffprobe found: seconds of sound and of pictures (0 when there is no such stream). */
export interface MediaContent {
  audioS: number;
  videoS: number;
  /** Kinds whose length is the file's, the stream saying none of its own. */
  fromFile?: Kind[];
}

type Kind = 'audio' | 'video';

/** Below this, a source is too short to judge. */
const MIN_SOURCE_S = 0.5;

/** Seconds of each kind of stream in `path`, or null when ffprobe cannot read it. */
export async function mediaContent(path: string, job: JobContext): Promise<MediaContent | null> {
  const r = await runSandboxed('/usr/bin/ffprobe', ['-v', 'error', '-protocol_whitelist', 'file', '-print_format', 'json', '-show_entries', 'format=duration:stream=codec_type,duration', path], {
    cwd: job.dir,
    timeoutMs: Math.min(job.timeoutMs, 30_000),
    maxStdoutBytes: 256 * 1024,
    ...(job.maxMemoryBytes !== undefined ? { maxMemoryBytes: job.maxMemoryBytes } : {}),
  });
  if (r.exitCode !== 0) return null;
  let info: { format?: { duration?: unknown }; streams?: unknown };
  try {
    info = JSON.parse(r.stdout.toString('utf8') || '{}') as typeof info;
  } catch {
    return null;
  }
  // ffprobe's answer about a hostile file is data: only finite, positive numbers are taken.
  const seconds = (v: unknown): number => positiveNumber(v) ?? 0;
  const whole = seconds(info.format?.duration);
  const content: MediaContent = { audioS: 0, videoS: 0 };
  for (const s of Array.isArray(info.streams) ? (info.streams as { codec_type?: unknown; duration?: unknown }[]) : []) {
    if (s?.codec_type !== 'audio' && s?.codec_type !== 'video') continue;
    const key = s.codec_type === 'audio' ? 'audioS' : 'videoS';
    // A stream without its own duration lasts as long as the file says.
    const own = seconds(s.duration);
    if (!own) content.fromFile = [...(content.fromFile ?? []), s.codec_type];
    content[key] = Math.max(content[key], own || whole);
  }
  return content;
}

/**
 * Seconds of the first `kind` stream in `path` by its packets' times (FFmpeg copies it to
 * nowhere: demuxing only, bounded by the job's time), or null when that fails.
 */
export async function packetSeconds(path: string, kind: Kind, job: JobContext): Promise<number | null> {
  const args = ['-hide_banner', '-nostdin', '-v', 'error', '-protocol_whitelist', 'file', '-i', path, '-map', `0:${kind === 'audio' ? 'a' : 'v'}:0`, '-c', 'copy', '-f', 'null', '-', '-progress', 'pipe:1', '-nostats'];
  const r = await runSandboxed('/usr/bin/ffmpeg', args, {
    cwd: job.dir,
    timeoutMs: Math.min(job.timeoutMs, 60_000),
    maxStdoutBytes: 1024 * 1024,
    ...(job.maxMemoryBytes !== undefined ? { maxMemoryBytes: job.maxMemoryBytes } : {}),
  });
  if (r.exitCode !== 0) return null;
  const last = [...r.stdout.toString('utf8').matchAll(/^out_time_us=(\d+)$/gm)].at(-1);
  return last ? positiveNumber(Number(last[1]) / 1e6) ?? null : null;
}

/** Why `output` carries none of `source`'s content of `kind`, or null when it carries some. */
export function missingContent(source: MediaContent, output: MediaContent | null, kind: Kind): string | null {
  const had = kind === 'audio' ? source.audioS : source.videoS;
  if (had < MIN_SOURCE_S) return null;
  const has = output === null ? 0 : kind === 'audio' ? output.audioS : output.videoS;
  if (has >= Math.min(1, 0.05 * had)) return null;
  const what = kind === 'audio' ? 'sound' : 'pictures';
  return output === null ? `the output cannot be read back, and the source holds ${round(had)} s of ${what}` : `the output holds ${round(has)} s of ${what}, the source ${round(had)} s`;
}

const round = (s: number) => Math.round(s * 10) / 10;

/**
 * Fails the conversion when an audio or video output carries none of the source's sound or
 * pictures (see above). Other families, and sources ffprobe cannot measure, pass.
 */
export async function checkMediaContent(input: string, source: FormatInfo, output: string, target: FormatInfo, job: JobContext): Promise<void> {
  if ((source.family !== 'audio' && source.family !== 'video') || (target.family !== 'audio' && target.family !== 'video')) return;
  const had = await mediaContent(input, job);
  if (!had) return;
  const made = await mediaContent(output, job);
  const kind = target.family;
  let problem = missingContent(had, made, kind);
  if (problem && made && (kind === 'audio' ? made.audioS : made.videoS) > 0 && had.fromFile?.includes(kind)) {
    const measured = await packetSeconds(input, kind, job);
    if (measured !== null) problem = missingContent({ ...had, [kind === 'audio' ? 'audioS' : 'videoS']: measured }, made, kind);
  }
  if (problem) {
    const what = target.family === 'audio' ? 'sound' : 'pictures';
    throw new ConversionError('conversion_failed', `The ${target.ext} output carries none of the ${source.ext} file's ${what}: its ${what} could not be decoded.`, { detail: problem, final: true });
  }
}
