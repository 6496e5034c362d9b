/**
 * Audio formats beyond the common six: FFmpeg's (aiff, au, caf, w64, wv, voc, and the codec
 * streams and containers below amr) and SoX's (8svx, avr, sph, amr).
 */
import type { FormatEntry } from '../catalogue.js';

export const AUDIO_EXTRA: readonly FormatEntry[] = [
  { ext: 'aiff', aliases: ['aif'], mime_type: 'audio/aiff', family: 'audio', name: 'AIFF audio' },
  { ext: 'au', aliases: ['snd'], mime_type: 'audio/basic', family: 'audio', name: 'Sun/NeXT audio' },
  { ext: 'caf', mime_type: 'audio/x-caf', family: 'audio', name: 'Core Audio Format' },
  { ext: 'w64', mime_type: 'audio/x-w64', family: 'audio', name: 'Sony Wave64 audio' },
  { ext: 'wv', mime_type: 'audio/x-wavpack', family: 'audio', name: 'WavPack audio' },
  { ext: 'voc', mime_type: 'audio/x-voc', family: 'audio', name: 'Creative Voice audio' },
  { ext: '8svx', aliases: ['iff'], mime_type: 'audio/x-8svx', family: 'audio', name: 'Amiga 8SVX audio' },
  { ext: 'avr', mime_type: 'audio/x-avr', family: 'audio', name: 'Audio Visual Research audio' },
  { ext: 'sph', aliases: ['nist'], mime_type: 'audio/x-nist', family: 'audio', name: 'NIST SPHERE audio' },
  { ext: 'amr', mime_type: 'audio/amr', family: 'audio', name: 'AMR-NB speech audio' },
  { ext: 'ac3', mime_type: 'audio/ac3', family: 'audio', name: 'Dolby Digital (AC-3) audio' },
  { ext: 'eac3', aliases: ['ec3'], mime_type: 'audio/eac3', family: 'audio', name: 'Dolby Digital Plus (E-AC-3) audio' },
  { ext: 'mp2', aliases: ['mpa'], mime_type: 'audio/mpeg', family: 'audio', name: 'MPEG-1 Audio Layer II' },
  { ext: 'aac', aliases: ['adts'], mime_type: 'audio/aac', family: 'audio', name: 'AAC audio (ADTS stream)' },
  { ext: 'wma', mime_type: 'audio/x-ms-wma', family: 'audio', name: 'Windows Media Audio' },
  { ext: 'mka', mime_type: 'audio/x-matroska', family: 'audio', name: 'Matroska audio' },
  // Ogg Vorbis keeps .ogg; .oga is Ogg's audio extension, here FLAC in Ogg.
  { ext: 'oga', mime_type: 'audio/ogg', family: 'audio', name: 'Ogg FLAC audio' },
  { ext: 'tta', mime_type: 'audio/x-tta', family: 'audio', name: 'True Audio (TTA)' },
  { ext: 'spx', mime_type: 'audio/ogg', family: 'audio', name: 'Ogg Speex audio' },
];
