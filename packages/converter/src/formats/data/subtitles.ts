/** Subtitles and timed lyrics. */
import type { FormatEntry } from '../catalogue.js';

export const SUBTITLES: readonly FormatEntry[] = [
  { ext: 'srt', mime_type: 'application/x-subrip', family: 'subtitle', name: 'SubRip subtitles' },
  { ext: 'vtt', aliases: ['webvtt'], mime_type: 'text/vtt', family: 'subtitle', name: 'WebVTT subtitles' },
  { ext: 'ass', mime_type: 'text/x-ass', family: 'subtitle', name: 'Advanced SubStation Alpha subtitles' },
  { ext: 'ssa', mime_type: 'text/x-ssa', family: 'subtitle', name: 'SubStation Alpha subtitles' },
  { ext: 'sub', mime_type: 'text/x-microdvd', family: 'subtitle', name: 'MicroDVD subtitles' },
  { ext: 'sbv', mime_type: 'text/x-sbv', family: 'subtitle', name: 'YouTube SubViewer subtitles' },
  { ext: 'lrc', mime_type: 'application/x-lrc', family: 'subtitle', name: 'LRC timed lyrics' },
  { ext: 'smi', aliases: ['sami'], mime_type: 'application/x-sami', family: 'subtitle', name: 'SAMI subtitles' },
];
