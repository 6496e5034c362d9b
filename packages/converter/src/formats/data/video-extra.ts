/** Video containers beyond the common five, all read and written by FFmpeg. */
import type { FormatEntry } from '../catalogue.js';

export const VIDEO_EXTRA: readonly FormatEntry[] = [
  { ext: 'flv', mime_type: 'video/x-flv', family: 'video', name: 'Flash Video' },
  { ext: 'f4v', mime_type: 'video/x-f4v', family: 'video', name: 'Flash MP4 video (F4V)' },
  { ext: 'wmv', mime_type: 'video/x-ms-wmv', family: 'video', name: 'Windows Media Video' },
  { ext: 'asf', mime_type: 'video/x-ms-asf', family: 'video', name: 'Advanced Systems Format video' },
  { ext: 'mpg', aliases: ['mpeg', 'mpe'], mime_type: 'video/mpeg', family: 'video', name: 'MPEG-1 program stream video' },
  { ext: 'vob', mime_type: 'video/dvd', family: 'video', name: 'DVD video object (MPEG-2)' },
  { ext: 'ts', mime_type: 'video/mp2t', family: 'video', name: 'MPEG transport stream video' },
  { ext: 'm2ts', aliases: ['mts'], mime_type: 'video/mp2t', family: 'video', name: 'BDAV MPEG-2 transport stream (Blu-ray)' },
  { ext: 'm4v', mime_type: 'video/x-m4v', family: 'video', name: 'Apple MPEG-4 video (M4V)' },
  { ext: '3gp', mime_type: 'video/3gpp', family: 'video', name: '3GPP video' },
  { ext: '3g2', mime_type: 'video/3gpp2', family: 'video', name: '3GPP2 video' },
  { ext: 'ogv', mime_type: 'video/ogg', family: 'video', name: 'Ogg Theora video' },
  { ext: 'mxf', mime_type: 'application/mxf', family: 'video', name: 'Material Exchange Format video' },
  { ext: 'dv', aliases: ['dif'], mime_type: 'video/x-dv', family: 'video', name: 'DV video (PAL)' },
  { ext: 'nut', mime_type: 'video/x-nut', family: 'video', name: 'NUT video' },
  { ext: 'y4m', mime_type: 'video/x-yuv4mpeg', family: 'video', name: 'YUV4MPEG2 raw video' },
];
