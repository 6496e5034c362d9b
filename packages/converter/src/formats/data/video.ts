/** Video. */
import type { FormatEntry } from '../catalogue.js';

export const VIDEO: readonly FormatEntry[] = [
  { ext: 'mp4', mime_type: 'video/mp4', family: 'video', name: 'MP4 video (H.264)' },
  { ext: 'webm', mime_type: 'video/webm', family: 'video', name: 'WebM video (VP9)' },
  { ext: 'mkv', mime_type: 'video/x-matroska', family: 'video', name: 'Matroska video' },
  { ext: 'mov', mime_type: 'video/quicktime', family: 'video', name: 'QuickTime video' },
  { ext: 'avi', mime_type: 'video/x-msvideo', family: 'video', name: 'AVI video' },
];
