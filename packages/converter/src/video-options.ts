/**
 * Options of video → picture conversions (issue 31): an animated GIF, WebP or APNG of a stretch
 * of the clip, or one still frame (jpg, png, webp, apng). Flat option names, as the API takes them;
 * which source and target they fit is checked by the converter (it knows both).
 */
import { invalid } from './errors.js';
import type { FormatFamily } from './formats/catalogue.js';

/** Validated video → picture options; absent fields take the defaults of {@link VIDEO_FRAME_DEFAULTS}. */
export interface VideoFrameOptions {
  /** Seconds into the clip where the animation starts, or of the still frame. */
  readonly start?: number;
  /** Animations: seconds of the clip. */
  readonly duration?: number;
  /** Animations: frames per second. */
  readonly fps?: number;
  /** Most pixels wide (never enlarged). */
  readonly width?: number;
  /** Animations: 0 loops forever; n plays the animation n times in all. */
  readonly loop?: number;
  /** GIF, WebP and APNG targets: false makes a still picture instead of an animation. */
  readonly animated?: boolean;
}

/** The option names, as the API takes them. */
export const VIDEO_OPTION_NAMES = ['start', 'duration', 'fps', 'width', 'loop', 'animated'] as const;

/** What a video becomes as pictures: animations (gif, webp, apng) and still frames (jpg, png; webp and apng with `animated` false). */
export const VIDEO_PICTURE_TARGETS = ['gif', 'webp', 'apng', 'jpg', 'png'] as const;

/** Options of animations only (a still takes `start` and `width`). */
export const ANIMATION_ONLY_OPTIONS = ['duration', 'fps', 'loop'] as const;

/** Defaults and caps, as documented in docs/convert-api.md. */
export const VIDEO_FRAME_DEFAULTS = {
  /** Animations: the first 10 s of the clip (from `start`) unless `duration` says otherwise. */
  durationS: 10,
  /** Longest `duration`. */
  maxDurationS: 60,
  fps: 12,
  /** Animations: at most 480 pixels wide. Stills keep the clip's displayed size. */
  animationWidth: 480,
  /** Largest animation written: over it the conversion fails with output_too_large. */
  maxAnimationBytes: 20 * 1024 * 1024,
  /** Most decoded pixels an animation may hold in all (frames × width × height): GIF's palette pass keeps every frame. */
  maxAnimationPixels: 300_000_000,
  /** A still without `start`: the most representative frame of the first 3 s (ffmpeg's thumbnail filter). */
  stillWindowS: 3,
} as const;

/** Largest `start` (a day of video). */
export const MAX_START_S = 86_400;

function number(field: string, v: unknown, min: number, max: number, integer: boolean): number {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
    throw invalid(field, `${field} must be ${integer ? 'a whole number' : 'a number'} from ${min} to ${max}.`);
  }
  return n;
}

/** The video → picture options present in `raw`; they apply to picture targets only. */
export function parseVideoOptions(raw: Readonly<Record<string, unknown>>, present: (k: string) => boolean, targetFamily: FormatFamily): VideoFrameOptions | undefined {
  const given = VIDEO_OPTION_NAMES.filter(present);
  if (!given.length) return undefined;
  for (const f of given) {
    if (targetFamily !== 'image') throw invalid(f, `${f} applies to video sources converted to gif, webp, apng, jpg or png only.`);
  }
  const o: { -readonly [K in keyof VideoFrameOptions]: VideoFrameOptions[K] } = {};
  if (present('start')) o.start = number('start', raw.start, 0, MAX_START_S, false);
  if (present('duration')) o.duration = number('duration', raw.duration, 0.01, VIDEO_FRAME_DEFAULTS.maxDurationS, false);
  if (present('fps')) o.fps = number('fps', raw.fps, 1, 30, true);
  if (present('width')) o.width = number('width', raw.width, 16, 1920, true);
  if (present('loop')) o.loop = number('loop', raw.loop, 0, 65_535, true);
  if (present('animated')) {
    const v = raw.animated;
    if (v !== true && v !== false && v !== 'true' && v !== 'false') throw invalid('animated', 'animated must be true or false.');
    o.animated = v === true || v === 'true';
  }
  return o;
}

/** Whether a video → `target` conversion with these options makes an animation (gif, webp, apng unless `animated` is false). */
export function makesAnimation(target: string, o: VideoFrameOptions | undefined): boolean {
  return (target === 'gif' || target === 'webp' || target === 'apng') && o?.animated !== false;
}

/** The options as stored and answered (their API names), for the record. */
export function videoOptionsRecord(o: VideoFrameOptions | undefined): Record<string, number | boolean> {
  if (!o) return {};
  const out: Record<string, number | boolean> = {};
  for (const k of VIDEO_OPTION_NAMES) if (o[k] !== undefined) out[k] = o[k];
  return out;
}
