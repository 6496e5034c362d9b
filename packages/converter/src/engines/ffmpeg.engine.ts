/**
 * FFmpeg for audio and video. Inputs are read with `-protocol_whitelist file` and the
 * demuxer forced to the detected format where one maps, so a playlist or concat file in
 * disguise cannot pull in other files or URLs (field notes §d.4).
 */
import { probeBinaries, runStep, type Engine, type EngineProbe, type Step } from './engine.js';

const FFMPEG = '/usr/bin/ffmpeg';
const AUDIO = ['wav', 'mp3', 'flac', 'ogg', 'opus', 'm4a', 'aiff', 'au', 'caf', 'w64', 'wv', 'voc'] as const;
/** Audio FFmpeg reads but cannot write (SoX writes them). */
const AUDIO_READ_ONLY = ['amr', 'avr', '8svx', 'sph'] as const;
const VIDEO = ['mp4', 'webm', 'mkv', 'mov', 'avi'] as const;
const VIDEO_SET = new Set<string>(VIDEO);
const AUDIO_SET = new Set<string>([...AUDIO, ...AUDIO_READ_ONLY]);
/** Lossless targets: a lower quality makes them no smaller. */
const LOSSLESS = new Set(['wav', 'flac', 'aiff', 'au', 'caf', 'w64', 'wv', 'voc']);
/** The demuxer for each detected input format. */
const DEMUXER: Readonly<Record<string, string>> = {
  wav: 'wav', mp3: 'mp3', flac: 'flac', ogg: 'ogg', opus: 'ogg', m4a: 'mov', mp4: 'mov', mov: 'mov', webm: 'matroska', mkv: 'matroska', avi: 'avi',
  aiff: 'aiff', au: 'au', caf: 'caf', w64: 'w64', wv: 'wv', voc: 'voc', amr: 'amr', avr: 'avr', '8svx': 'iff', sph: 'nistsphere',
};

/** Audio bitrate in kbit/s for a quality of 1–100 (32 … 320). */
export function audioBitrate(quality: number): number {
  return Math.round(32 + ((320 - 32) * (quality - 1)) / 99);
}

/** The FFmpeg engine. */
export class FfmpegEngine implements Engine {
  readonly name = 'ffmpeg';
  readonly reads = [...AUDIO, ...AUDIO_READ_ONLY, ...VIDEO];
  readonly writes = [...AUDIO, ...VIDEO];

  supports(from: string, to: string): boolean {
    if (from === to) return false;
    // Audio cannot become video; video can become audio (soundtrack) or other video.
    return !(AUDIO_SET.has(from) && VIDEO_SET.has(to));
  }

  tradesQualityForSize(to: string): boolean {
    return !LOSSLESS.has(to);
  }

  probe(): Promise<EngineProbe> {
    return probeBinaries(this.name, [FFMPEG, '/usr/bin/ffprobe'], ['-hide_banner', '-version'], /ffmpeg version (\S+)/);
  }

  async convert(step: Step): Promise<void> {
    const q = step.quality;
    const args = ['-hide_banner', '-nostdin', '-y', '-protocol_whitelist', 'file', '-threads', '1'];
    const demuxer = DEMUXER[step.from];
    if (demuxer) args.push('-f', demuxer);
    args.push('-i', step.input, '-map_metadata', '-1');
    const kbps = `${audioBitrate(q)}k`;
    switch (step.to) {
      case 'wav': args.push('-vn', '-c:a', 'pcm_s16le'); break;
      case 'flac': args.push('-vn', '-c:a', 'flac'); break;
      case 'mp3': args.push('-vn', '-c:a', 'libmp3lame', '-b:a', kbps); break;
      // Vorbis refuses many bitrate/sample-rate combinations; its VBR quality scale (0–10) always works.
      case 'ogg': args.push('-vn', '-c:a', 'libvorbis', '-q:a', String(Math.round(q / 10))); break;
      case 'opus': args.push('-vn', '-c:a', 'libopus', '-b:a', `${Math.min(audioBitrate(q), 256)}k`); break;
      case 'm4a': args.push('-vn', '-c:a', 'aac', '-b:a', kbps); break;
      case 'aiff': args.push('-vn', '-c:a', 'pcm_s16be', '-f', 'aiff'); break;
      case 'au': args.push('-vn', '-c:a', 'pcm_s16be', '-f', 'au'); break;
      case 'caf': args.push('-vn', '-c:a', 'pcm_s16le', '-f', 'caf'); break;
      case 'w64': args.push('-vn', '-c:a', 'pcm_s16le', '-f', 'w64'); break;
      case 'wv': args.push('-vn', '-c:a', 'wavpack', '-f', 'wv'); break;
      case 'voc': args.push('-vn', '-c:a', 'pcm_s16le', '-f', 'voc'); break;
      default: {
        // Video: CRF from quality (x264 51…18, VP9 63…15), audio at the matching bitrate.
        const maxH = step.options.preset?.name === 'web' ? 720 : undefined;
        if (maxH) args.push('-vf', `scale=-2:'min(${maxH},ih)'`);
        if (step.to === 'webm') {
          args.push('-c:v', 'libvpx-vp9', '-b:v', '0', '-crf', String(Math.round(63 - (48 * q) / 100)), '-deadline', 'realtime', '-cpu-used', '8', '-c:a', 'libopus', '-b:a', `${Math.min(audioBitrate(q), 256)}k`);
        } else if (step.to === 'avi') {
          args.push('-c:v', 'mpeg4', '-q:v', String(Math.max(1, Math.round(31 - (30 * q) / 100))), '-c:a', 'libmp3lame', '-b:a', kbps);
        } else {
          args.push('-c:v', 'libx264', '-preset', 'veryfast', '-crf', String(Math.round(51 - (33 * q) / 100)), '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', kbps);
          if (step.to === 'mp4' || step.to === 'mov') args.push('-movflags', '+faststart');
        }
      }
    }
    args.push(step.output);
    await runStep(step, FFMPEG, args);
  }
}
