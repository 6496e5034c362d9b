/** Audio. */
import type { FormatEntry } from '../catalogue.js';

export const AUDIO: readonly FormatEntry[] = [
  { ext: 'wav', mime_type: 'audio/wav', family: 'audio', name: 'WAVE audio' },
  { ext: 'mp3', mime_type: 'audio/mpeg', family: 'audio', name: 'MP3 audio' },
  { ext: 'flac', mime_type: 'audio/flac', family: 'audio', name: 'FLAC audio' },
  { ext: 'ogg', mime_type: 'audio/ogg', family: 'audio', name: 'Ogg Vorbis audio' },
  { ext: 'opus', mime_type: 'audio/opus', family: 'audio', name: 'Opus audio' },
  { ext: 'm4a', mime_type: 'audio/mp4', family: 'audio', name: 'AAC audio in MP4' },
];
