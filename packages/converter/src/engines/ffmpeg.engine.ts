/**
 * FFmpeg for audio and video. Inputs are read with `-protocol_whitelist file` and the
 * demuxer forced to the detected format where one maps, so a playlist or concat file in
 * disguise cannot pull in other files or URLs (field notes §d.4). What each target is made
 * of (codecs, muxer, fixed rates) is one row of {@link TARGETS}. Video also becomes pictures
 * (issue 31): an animated GIF, WebP or APNG of a stretch of the clip, or one still frame.
 */
import { stat } from 'node:fs/promises';
import { ConversionError, invalid } from '../errors.js';
import { makesAnimation, VIDEO_FRAME_DEFAULTS as D, VIDEO_PICTURE_TARGETS } from '../video-options.js';
import { positiveNumber, probeBinaries, runStep, type Engine, type EngineProbe, type Step } from './engine.js';

const FFMPEG = '/usr/bin/ffmpeg';
const AUDIO = [
  'wav', 'mp3', 'flac', 'ogg', 'opus', 'm4a', 'aiff', 'au', 'caf', 'w64', 'wv', 'voc',
  // Issue 12's containers and raw streams.
  'ac3', 'eac3', 'mp2', 'aac', 'wma', 'mka', 'oga', 'tta', 'spx',
] as const;
/** Audio FFmpeg reads but cannot write (SoX writes them). */
const AUDIO_READ_ONLY = ['amr', 'avr', '8svx', 'sph'] as const;
const VIDEO = [
  'mp4', 'webm', 'mkv', 'mov', 'avi',
  'flv', 'wmv', 'asf', 'mpg', 'vob', 'ts', 'm2ts', 'm4v', '3gp', '3g2', 'f4v', 'ogv', 'mxf', 'dv', 'nut', 'y4m',
] as const;
const VIDEO_SET = new Set<string>(VIDEO);
const PICTURE_SET = new Set<string>(VIDEO_PICTURE_TARGETS);
const AUDIO_SET = new Set<string>([...AUDIO, ...AUDIO_READ_ONLY]);
/** Video without sound: nothing audio can be made from it. */
const SILENT_VIDEO = new Set(['y4m']);
/**
 * Targets whose size a lower quality does not reduce: lossless audio, raw video, and DV
 * (a fixed 25 Mbit/s).
 */
const FIXED_QUALITY = new Set(['wav', 'flac', 'aiff', 'au', 'caf', 'w64', 'wv', 'voc', 'oga', 'tta', 'y4m', 'dv']);

/**
 * Video targets that hold text subtitles, and the codec each stores them as (issue 31: an MKV's
 * subtitles were dropped on the way to MP4; FFmpeg 5.1 maps none to MP4 by itself). Matroska
 * keeps ASS/SSA styling; other text becomes SubRip there.
 */
const SUBTITLE_CODECS: Readonly<Record<string, (source: string) => string>> = {
  mp4: () => 'mov_text', mov: () => 'mov_text', m4v: () => 'mov_text', '3gp': () => 'mov_text', '3g2': () => 'mov_text',
  webm: () => 'webvtt',
  mkv: (source) => (source === 'ass' || source === 'ssa' ? 'ass' : 'srt'),
};
/** Subtitle codecs FFmpeg decodes to text. */
const TEXT_SUBTITLES = new Set(['subrip', 'srt', 'ass', 'ssa', 'webvtt', 'mov_text', 'text', 'microdvd', 'subviewer', 'subviewer1', 'realtext', 'sami', 'stl', 'pjs', 'jacosub', 'mpl2', 'vplayer']);
/**
 * Bitmap subtitles (Blu-ray PGS, DVD VobSub, DVB) cannot become text: they are copied as they
 * are where the target's muxer takes them, and left out elsewhere. FFmpeg 5.1: Matroska takes
 * all three; MP4 takes DVD subtitles ('mp4s'), not PGS; MOV, 3GP and M4V (iPod) take neither.
 */
const BITMAP_SUBTITLES: Readonly<Record<string, ReadonlySet<string>>> = {
  mkv: new Set(['hdmv_pgs_subtitle', 'dvd_subtitle', 'dvb_subtitle']),
  mp4: new Set(['dvd_subtitle']),
};
/**
 * Video targets that hold several sound tracks (a film's languages, a screen recording's
 * microphone and system sound): each track goes along. Other targets take the first track.
 */
const MULTI_AUDIO = new Set(['mp4', 'mov', 'm4v', 'mkv', 'webm', 'avi', 'ts', 'm2ts', 'nut', 'ogv', 'wmv', 'asf']);
/** Most streams of each kind mapped from one source (a hostile file may list thousands). */
const MAX_STREAMS = 32;
/** A language tag as ISO 639-2 or BCP 47 write it; anything else a file says is not copied. */
const LANGUAGE = /^[a-z]{2,3}(-[A-Za-z0-9]{1,8})*$/;
/**
 * HDR transfers (HLG, PQ; an iPhone's Dolby Vision 8.4 base layer is HLG) that an 8-bit target
 * cannot carry: the frames are tone-mapped to SDR BT.709 (zimg to linear light at 100 nits,
 * Möbius, back to BT.709) and tagged so, else a phone's HDR clip came out grey and flat.
 * Measured on HLG and PQ clips made from an SDR test pattern: 10.4 and 8.4 dB PSNR against that
 * pattern untouched, 18.9 and 18.5 dB tone-mapped. Pictures and every video target but WebM
 * (VP9 profile 2 keeps 10 bits and the HDR signalling) are 8-bit.
 */
const HDR_TRANSFERS = new Set(['arib-std-b67', 'smpte2084']);
const TONE_MAP = ['zscale=t=linear:npl=100', 'format=gbrpf32le', 'zscale=p=bt709', 'tonemap=tonemap=mobius:desat=0', 'zscale=t=bt709:m=bt709:r=tv', 'format=yuv420p'];
/** Video targets that carry HDR as it is. */
const HOLDS_HDR = new Set(['webm']);

/** One stream of a source, as ffprobe lists it (checked: a hostile file's answer is data). */
interface SourceStream {
  readonly index: number;
  readonly type: 'video' | 'audio' | 'subtitle';
  readonly codec: string;
  readonly language?: string;
}
/** What the engine needs to know of a video source. */
interface ClipFacts {
  /** Seconds, when the container says. */
  readonly duration?: number;
  /** Displayed size of the first picture stream (rotation applied). */
  readonly width?: number;
  readonly height?: number;
  /** Its transfer is HLG or PQ. */
  readonly hdr?: boolean;
  /** Every stream, in order; empty when ffprobe could not say. */
  readonly streams: readonly SourceStream[];
}

/** The demuxer for each detected input format (also the input guard's, for ffprobe). */
export const FFMPEG_DEMUXERS: Readonly<Record<string, string>> = {
  wav: 'wav', mp3: 'mp3', flac: 'flac', ogg: 'ogg', opus: 'ogg', m4a: 'mov', mp4: 'mov', mov: 'mov', webm: 'matroska', mkv: 'matroska', avi: 'avi',
  aiff: 'aiff', au: 'au', caf: 'caf', w64: 'w64', wv: 'wv', voc: 'voc', amr: 'amr', avr: 'avr', '8svx': 'iff', sph: 'nistsphere',
  ac3: 'ac3', eac3: 'eac3', mp2: 'mp3', aac: 'aac', wma: 'asf', mka: 'matroska', oga: 'ogg', tta: 'tta', spx: 'ogg',
  flv: 'flv', wmv: 'asf', asf: 'asf', mpg: 'mpeg', vob: 'mpeg', ts: 'mpegts', m2ts: 'mpegts', m4v: 'mov', '3gp': 'mov', '3g2': 'mov', f4v: 'mov',
  ogv: 'ogg', mxf: 'mxf', dv: 'dv', nut: 'nut', y4m: 'yuv4mpegpipe',
};

/** Audio bitrate in kbit/s for a quality of 1–100 (32 … 320). */
export function audioBitrate(quality: number): number {
  return Math.round(32 + ((320 - 32) * (quality - 1)) / 99);
}

/** The allowed bitrate closest to `kbps` (MP2 and AC-3 accept only their standard rates). */
function nearest(allowed: readonly number[], kbps: number): number {
  return allowed.reduce((best, r) => (Math.abs(r - kbps) < Math.abs(best - kbps) ? r : best));
}
/** MPEG-1 layer II at 32/44.1/48 kHz. */
const MP2_KBPS = [32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384];
const AC3_KBPS = [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448, 512, 576, 640];

/** How a target is encoded, for a quality of 1–100. */
interface TargetArgs {
  /** Arguments after the input (codecs, filters, muxer `-f`). */
  readonly args: (q: number) => string[];
  /** Video targets take the web preset's height cap (a fixed-size format does not). */
  readonly scalable?: boolean;
  /** Video filters of the target itself, after the tone map. */
  readonly filters?: readonly string[];
}

const kbps = (q: number): string => `${audioBitrate(q)}k`;
const opusKbps = (q: number): string => `${Math.min(audioBitrate(q), 256)}k`;
/** MPEG-4 part 2, MPEG-1/2, WMV and Theora quantiser scale (31 worst … 1 best). */
const qscale = (q: number): string => String(Math.max(1, Math.round(31 - (30 * q) / 100)));
/** Vorbis and Theora VBR quality (0–10): Vorbis refuses many bitrate/sample-rate combinations, its quality scale always works. */
const tenth = (q: number): string => String(Math.round(q / 10));
/**
 * AAC at the quality's bitrate. The encoder refuses a stream whose channel layout is unknown
 * (TTA and Speex decoders give "1 channels", not mono): the filter names the layouts it takes.
 */
const aac = (q: number): string[] => ['-af', 'aformat=channel_layouts=mono|stereo|3.0|4.0|5.0|5.1|7.1', '-c:a', 'aac', '-b:a', kbps(q)];
/** H.264 (CRF 51…18 from quality, yuv420p for players) with AAC, for the MP4 family, FLV and MPEG-TS. */
const h264Aac = (q: number): string[] => ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', String(Math.round(51 - (33 * q) / 100)), '-pix_fmt', 'yuv420p', ...aac(q)];
/**
 * MPEG-1/2 video allows only the standard frame rates (23.976 … 60); 25 fits any source (PAL,
 * as MXF and DV want). Audio at 48 kHz, where MP2 and AC-3 take every standard bitrate.
 */
const mpegVideo = (codec: string, q: number): string[] => ['-c:v', codec, '-r', '25', '-q:v', qscale(q), '-ar', '48000'];

/** Encoder and muxer arguments per target. */
const TARGETS: Readonly<Record<string, TargetArgs>> = {
  wav: { args: () => ['-vn', '-c:a', 'pcm_s16le'] },
  flac: { args: () => ['-vn', '-c:a', 'flac'] },
  mp3: { args: (q) => ['-vn', '-c:a', 'libmp3lame', '-b:a', kbps(q)] },
  ogg: { args: (q) => ['-vn', '-c:a', 'libvorbis', '-q:a', tenth(q)] },
  opus: { args: (q) => ['-vn', '-c:a', 'libopus', '-b:a', opusKbps(q)] },
  m4a: { args: (q) => ['-vn', ...aac(q)] },
  aiff: { args: () => ['-vn', '-c:a', 'pcm_s16be', '-f', 'aiff'] },
  au: { args: () => ['-vn', '-c:a', 'pcm_s16be', '-f', 'au'] },
  caf: { args: () => ['-vn', '-c:a', 'pcm_s16le', '-f', 'caf'] },
  w64: { args: () => ['-vn', '-c:a', 'pcm_s16le', '-f', 'w64'] },
  wv: { args: () => ['-vn', '-c:a', 'wavpack', '-f', 'wv'] },
  voc: { args: () => ['-vn', '-c:a', 'pcm_s16le', '-f', 'voc'] },
  ac3: { args: (q) => ['-vn', '-c:a', 'ac3', '-b:a', `${nearest(AC3_KBPS, audioBitrate(q))}k`, '-f', 'ac3'] },
  eac3: { args: (q) => ['-vn', '-c:a', 'eac3', '-b:a', `${nearest(AC3_KBPS, audioBitrate(q))}k`, '-f', 'eac3'] },
  mp2: { args: (q) => ['-vn', '-c:a', 'mp2', '-ar', '48000', '-b:a', `${nearest(MP2_KBPS, audioBitrate(q))}k`, '-f', 'mp2'] },
  aac: { args: (q) => ['-vn', ...aac(q), '-f', 'adts'] },
  wma: { args: (q) => ['-vn', '-c:a', 'wmav2', '-b:a', kbps(q), '-f', 'asf'] },
  mka: { args: (q) => ['-vn', '-c:a', 'libopus', '-b:a', opusKbps(q), '-f', 'matroska'] },
  oga: { args: () => ['-vn', '-c:a', 'flac', '-f', 'oga'] },
  tta: { args: () => ['-vn', '-c:a', 'tta', '-f', 'tta'] },
  spx: { args: (q) => ['-vn', '-c:a', 'libspeex', '-q:a', tenth(q), '-f', 'spx'] },
  // Video: CRF or quantiser from quality, audio at the matching bitrate.
  mp4: { scalable: true, args: (q) => [...h264Aac(q), '-movflags', '+faststart'] },
  mov: { scalable: true, args: (q) => [...h264Aac(q), '-movflags', '+faststart'] },
  mkv: { scalable: true, args: h264Aac },
  webm: {
    scalable: true,
    args: (q) => ['-c:v', 'libvpx-vp9', '-b:v', '0', '-crf', String(Math.round(63 - (48 * q) / 100)), '-deadline', 'realtime', '-cpu-used', '8', '-c:a', 'libopus', '-b:a', opusKbps(q)],
  },
  avi: { scalable: true, args: (q) => ['-c:v', 'mpeg4', '-q:v', qscale(q), '-c:a', 'libmp3lame', '-b:a', kbps(q)] },
  flv: { scalable: true, args: (q) => [...h264Aac(q), '-f', 'flv'] },
  f4v: { scalable: true, args: (q) => [...h264Aac(q), '-f', 'f4v'] },
  // The iPod muxer writes the 'M4V ' brand Apple's players look for.
  m4v: { scalable: true, args: (q) => [...h264Aac(q), '-movflags', '+faststart', '-f', 'ipod'] },
  '3gp': { scalable: true, args: (q) => [...h264Aac(q), '-movflags', '+faststart', '-f', '3gp'] },
  '3g2': { scalable: true, args: (q) => [...h264Aac(q), '-movflags', '+faststart', '-f', '3g2'] },
  ts: { scalable: true, args: (q) => [...h264Aac(q), '-f', 'mpegts'] },
  // Blu-ray's BDAV stream: 192-byte packets (a 4-byte timestamp before each TS packet).
  m2ts: { scalable: true, args: (q) => [...h264Aac(q), '-f', 'mpegts', '-mpegts_m2ts_mode', '1'] },
  wmv: { scalable: true, args: (q) => ['-c:v', 'wmv2', '-q:v', qscale(q), '-c:a', 'wmav2', '-b:a', kbps(q), '-f', 'asf'] },
  asf: { scalable: true, args: (q) => ['-c:v', 'wmv2', '-q:v', qscale(q), '-c:a', 'wmav2', '-b:a', kbps(q), '-f', 'asf'] },
  // The classic .mpg: MPEG-1 video and layer II audio in an MPEG-1 system stream.
  mpg: { scalable: true, args: (q) => [...mpegVideo('mpeg1video', q), '-c:a', 'mp2', '-b:a', `${nearest(MP2_KBPS, audioBitrate(q))}k`, '-f', 'mpeg'] },
  // DVD video object: MPEG-2 video and AC-3 in an MPEG-2 program stream of 2 KiB packs.
  vob: { scalable: true, args: (q) => [...mpegVideo('mpeg2video', q), '-c:a', 'ac3', '-b:a', `${nearest(AC3_KBPS, audioBitrate(q))}k`, '-f', 'vob'] },
  // Broadcast MXF (OP1a): MPEG-2 video and 16-bit PCM.
  mxf: { scalable: true, args: (q) => [...mpegVideo('mpeg2video', q), '-c:a', 'pcm_s16le', '-f', 'mxf'] },
  ogv: { scalable: true, args: (q) => ['-c:v', 'libtheora', '-q:v', tenth(q), '-c:a', 'libvorbis', '-q:a', tenth(q), '-f', 'ogv'] },
  nut: { scalable: true, args: (q) => ['-c:v', 'mpeg4', '-q:v', qscale(q), '-c:a', 'libmp3lame', '-b:a', kbps(q), '-f', 'nut'] },
  // Raw frames, no sound.
  y4m: { scalable: true, args: () => ['-an', '-pix_fmt', 'yuv420p', '-f', 'yuv4mpegpipe'] },
  // DV is PAL 720×576 at 25 fps with 48 kHz stereo. The muxer refuses a frame without its
  // share of sound: the audio is made to start at 0 (ASF's does not) and padded to the picture's length.
  dv: {
    filters: ['scale=720:576'],
    args: () => ['-r', '25', '-pix_fmt', 'yuv420p', '-c:v', 'dvvideo',
      '-af', 'aresample=async=1:first_pts=0,apad', '-c:a', 'pcm_s16le', '-ar', '48000', '-ac', '2', '-shortest', '-f', 'dv'],
  },
};

/** The FFmpeg engine. */
export class FfmpegEngine implements Engine {
  readonly name = 'ffmpeg';
  readonly reads = [...AUDIO, ...AUDIO_READ_ONLY, ...VIDEO];
  readonly writes = [...AUDIO, ...VIDEO, ...VIDEO_PICTURE_TARGETS];

  supports(from: string, to: string): boolean {
    if (from === to) return false;
    if (PICTURE_SET.has(to)) return VIDEO_SET.has(from);
    // Audio cannot become video; video can become audio (its soundtrack) or other video.
    if (AUDIO_SET.has(from) && VIDEO_SET.has(to)) return false;
    return !(SILENT_VIDEO.has(from) && AUDIO_SET.has(to));
  }

  tradesQualityForSize(to: string): boolean {
    // GIF and PNG frames are lossless (the palette is the palette); JPEG and WebP take a quality.
    return !FIXED_QUALITY.has(to) && to !== 'gif' && to !== 'png' && to !== 'apng';
  }

  probe(): Promise<EngineProbe> {
    return probeBinaries(this.name, [FFMPEG, '/usr/bin/ffprobe'], ['-hide_banner', '-version'], /ffmpeg version (\S+)/);
  }

  async convert(step: Step): Promise<void> {
    if (PICTURE_SET.has(step.to)) return this.picture(step);
    const target = TARGETS[step.to];
    if (!target) throw new Error(`ffmpeg: no arguments for ${step.to}`);
    const args = ['-hide_banner', '-nostdin', '-y', '-protocol_whitelist', 'file', '-threads', '1'];
    const demuxer = FFMPEG_DEMUXERS[step.from];
    if (demuxer) args.push('-f', demuxer);
    args.push('-i', step.input, '-map_metadata', '-1');
    const filters: string[] = [];
    const clip = VIDEO_SET.has(step.from) ? await this.clip(step) : undefined;
    // zscale marks the frames BT.709, and the encoder and muxer tag the output so.
    if (clip?.hdr && VIDEO_SET.has(step.to) && !HOLDS_HDR.has(step.to)) filters.push(...TONE_MAP);
    if (target.scalable && step.options.preset?.name === 'web') filters.unshift("scale=-2:'min(720,ih)'");
    filters.push(...(target.filters ?? []));
    if (filters.length) args.push('-vf', filters.join(','));
    if (clip) args.push(...mapStreams(clip.streams, step.to));
    args.push(...target.args(step.quality), step.output);
    await runStep(step, FFMPEG, args);
  }

  /** What a video source holds: its streams, and its first picture stream's length, displayed size and transfer. */
  private async clip(step: Step): Promise<ClipFacts> {
    const args = ['-v', 'error', '-protocol_whitelist', 'file'];
    const demuxer = FFMPEG_DEMUXERS[step.from];
    if (demuxer) args.push('-f', demuxer);
    args.push('-show_entries', 'format=duration:stream=index,codec_type,codec_name,width,height,color_transfer:stream_tags=language:stream_disposition=attached_pic:stream_side_data=rotation', '-of', 'json', step.input);
    const r = await runStep(step, '/usr/bin/ffprobe', args, { maxStdoutBytes: 1024 * 1024 });
    let info: { format?: { duration?: unknown }; streams?: unknown } = {};
    try {
      info = JSON.parse(r.stdout.toString('utf8') || '{}') as typeof info;
    } catch {
      // no facts: the run below still decides
    }
    type Probed = { index?: unknown; codec_type?: unknown; codec_name?: unknown; width?: unknown; height?: unknown; color_transfer?: unknown; tags?: { language?: unknown }; disposition?: { attached_pic?: unknown }; side_data_list?: { rotation?: unknown }[] };
    const probed = (Array.isArray(info.streams) ? info.streams : []) as Probed[];
    // ffprobe's answer about a hostile file is data: whole indexes, known kinds, plain names and finite numbers only.
    const streams: SourceStream[] = [];
    for (const st of probed) {
      const type = st?.codec_type;
      if (!Number.isInteger(st?.index) || (st.index as number) < 0 || (type !== 'video' && type !== 'audio' && type !== 'subtitle')) continue;
      // A cover picture is no clip's pictures.
      if (type === 'video' && st.disposition?.attached_pic === 1) continue;
      const language = typeof st.tags?.language === 'string' && LANGUAGE.test(st.tags.language) && st.tags.language !== 'und' ? st.tags.language : undefined;
      streams.push({ index: st.index as number, type, codec: typeof st.codec_name === 'string' ? st.codec_name : '', ...(language ? { language } : {}) });
    }
    const first = streams.find((st) => st.type === 'video');
    const v = first ? probed.find((st) => st.index === first.index) : probed.find((st) => st?.codec_type === 'video');
    const rotation = Number(Array.isArray(v?.side_data_list) ? v.side_data_list.find((d) => d && typeof d === 'object' && 'rotation' in d)?.rotation : 0);
    const w = positiveNumber(v?.width);
    const h = positiveNumber(v?.height);
    const turned = Math.abs(Math.round(rotation / 90)) % 2 === 1;
    const duration = positiveNumber(info.format?.duration);
    const hdr = typeof v?.color_transfer === 'string' && HDR_TRANSFERS.has(v.color_transfer);
    return { streams, ...(duration ? { duration } : {}), ...(w && h ? (turned ? { width: h, height: w } : { width: w, height: h }) : {}), ...(hdr ? { hdr } : {}) };
  }

  /**
   * A video to a picture. ffmpeg turns frames upright by the clip's rotation (display matrix)
   * before the filters run, so `iw`/`ih` below are the displayed sides; non-square pixels are
   * made square first. Animations (gif, webp, apng): `fps`, at most `width` wide, `duration` seconds from
   * `start`; a GIF gets a palette generated for the clip (palettegen → paletteuse). A still:
   * the frame at `start`, else the most representative frame of the first seconds.
   */
  private async picture(step: Step): Promise<void> {
    const o = step.options.video ?? {};
    const animated = makesAnimation(step.to, o);
    const clip = await this.clip(step);
    const start = o.start ?? 0;
    if (clip.duration !== undefined && start >= clip.duration) {
      throw invalid('start', `start is ${start} s but the clip is ${Math.round(clip.duration * 1000) / 1000} s long.`);
    }
    const maxDim = step.options.preset?.maxDimension;
    const filters = ["scale='trunc(iw*sar)':ih", 'setsar=1'];
    const args = ['-hide_banner', '-nostdin', '-y', '-protocol_whitelist', 'file', '-threads', '1'];
    if (o.start !== undefined) args.push('-ss', String(start));
    const demuxer = FFMPEG_DEMUXERS[step.from];
    if (demuxer) args.push('-f', demuxer);
    let cap = step.job.maxFileBytes;
    if (animated) {
      const fps = o.fps ?? D.fps;
      const duration = o.duration ?? D.durationS;
      const width = Math.min(o.width ?? D.animationWidth, maxDim ?? Infinity);
      // The palette pass holds every frame until the last: the frames × pixels are bounded up front.
      if (clip.width && clip.height) {
        const w = Math.min(width, clip.width);
        const frames = Math.ceil(fps * Math.min(duration, clip.duration !== undefined ? clip.duration - start : duration));
        const pixels = frames * w * Math.ceil((w * clip.height) / clip.width);
        if (pixels > D.maxAnimationPixels) {
          throw invalid('duration', `The animation would hold ${frames} frames of ${w} px wide (${Math.round(pixels / 1e6)} million pixels, over ${D.maxAnimationPixels / 1e6} million): ask for a shorter duration, a lower fps or a smaller width.`);
        }
      }
      args.push('-i', step.input, '-map_metadata', '-1', ...firstPictures(clip), '-an', '-sn', '-dn', '-t', String(duration));
      filters.push(`fps=${fps}`, `scale='min(${width},iw)':-2:flags=lanczos`);
      if (clip.hdr) filters.push(...TONE_MAP);
      // 0 loops forever; n plays n times: GIF's NETSCAPE2.0 count is repeats after the first (-1: no loop block), WebP's ANIM count is plays.
      const loop = o.loop ?? 0;
      if (step.to === 'gif') {
        const graph = `${filters.join(',')},split[a][b];[a]palettegen=stats_mode=diff[p];[b][p]paletteuse=dither=bayer:bayer_scale=5`;
        args.push('-vf', graph, '-c:v', 'gif', '-loop', String(loop === 0 ? 0 : loop === 1 ? -1 : loop - 1), '-f', 'gif');
      } else if (step.to === 'apng') {
        // The frames come at a constant rate (the fps filter): the APNG muxer writes each delay as 1/fps exactly, the last too; -plays is acTL's num_plays.
        args.push('-vf', filters.join(','), '-c:v', 'apng', '-pix_fmt', 'rgb24', '-plays', String(loop), '-f', 'apng');
      } else {
        args.push('-vf', filters.join(','), '-c:v', 'libwebp_anim', '-quality', String(step.quality), '-loop', String(loop), '-f', 'webp');
      }
      // ffmpeg stops writing at the cap; a file that reached it is refused below.
      cap = Math.min(cap, D.maxAnimationBytes);
      args.push('-fs', String(cap));
    } else {
      // Without start: the most representative frame (closest to the mean histogram, so not a fade from black) of the first seconds, sampled at 10 fps.
      // eof_action=pass: pictures shorter than half a sampling step (androidx/media's PGS MKV: 30 frames in 0.05 s) still give their frame.
      if (o.start === undefined) args.push('-t', String(D.stillWindowS));
      args.push('-i', step.input, '-map_metadata', '-1', ...firstPictures(clip), '-an', '-sn', '-dn');
      if (o.start === undefined) filters.push('fps=10:eof_action=pass', `thumbnail=n=${D.stillWindowS * 10}`);
      if (o.width) filters.push(`scale='min(${o.width},iw)':-2:flags=lanczos`);
      if (maxDim) filters.push(`scale='min(${maxDim},iw)':'min(${maxDim},ih)':force_original_aspect_ratio=decrease:flags=lanczos`);
      if (clip.hdr) filters.push(...TONE_MAP);
      args.push('-vf', filters.join(','), '-frames:v', '1');
      if (step.to === 'jpg') args.push('-c:v', 'mjpeg', '-q:v', String(Math.max(2, Number(qscale(step.quality)))), '-f', 'image2', '-update', '1');
      // A still APNG (animated false) is a one-frame PNG, as a still picture → apng is.
      else if (step.to === 'png' || step.to === 'apng') args.push('-c:v', 'png', '-f', 'image2', '-update', '1');
      else args.push('-c:v', 'libwebp', '-quality', String(step.quality), '-f', 'webp');
    }
    args.push(step.output);
    await runStep(step, FFMPEG, args);
    const size = await stat(step.output).then((s) => s.size, () => 0);
    // No frame at start (a clip whose length the container did not say): nothing was written.
    if (size === 0) throw invalid('start', `There is no frame at ${start} s: the clip ends before it.`);
    if (animated && size >= cap) {
      throw new ConversionError('output_too_large', `The ${step.to} animation reached the ${Math.round(cap / 1024 ** 2)} MiB cap for animations: ask for a shorter duration, a lower fps or a smaller width.`);
    }
  }
}

/** The map of a picture's source stream: the clip's first picture stream (not a cover), else FFmpeg's first video stream. */
function firstPictures(clip: ClipFacts): string[] {
  const v = clip.streams.find((st) => st.type === 'video');
  return ['-map', v ? `0:${v.index}` : '0:v:0'];
}

/**
 * The source streams a `to` output takes, with their codecs and language tags (the rest of a
 * file's metadata is not copied): the first picture stream, every sound track where the target
 * holds several (else the first), text subtitles where it holds text and bitmap subtitles
 * where its muxer takes them (see above). Nothing when ffprobe listed no streams: FFmpeg's
 * own choice then decides.
 */
function mapStreams(streams: readonly SourceStream[], to: string): string[] {
  if (!streams.length) return [];
  const pictures = VIDEO_SET.has(to) ? streams.filter((st) => st.type === 'video').slice(0, 1) : [];
  const sounds = streams.filter((st) => st.type === 'audio').slice(0, MULTI_AUDIO.has(to) && VIDEO_SET.has(to) ? MAX_STREAMS : 1);
  const text = SUBTITLE_CODECS[to];
  const bitmap = BITMAP_SUBTITLES[to];
  const subtitles = streams
    .filter((st) => st.type === 'subtitle' && ((text && TEXT_SUBTITLES.has(st.codec)) || bitmap?.has(st.codec)))
    .slice(0, MAX_STREAMS);
  if (!pictures.length && !sounds.length) return [];
  const args: string[] = [];
  [...pictures, ...sounds, ...subtitles].forEach((st, i) => {
    args.push('-map', `0:${st.index}`);
    if (st.language) args.push(`-metadata:s:${i}`, `language=${st.language}`);
  });
  subtitles.forEach((st, i) => args.push(`-c:s:${i}`, text && TEXT_SUBTITLES.has(st.codec) ? text(st.codec) : 'copy'));
  return args;
}
