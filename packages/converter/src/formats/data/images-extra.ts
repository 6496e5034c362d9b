/** Raster formats brought by libheif, libjxl and LibRaw (camera raw is read-only). */
import type { FormatEntry } from '../catalogue.js';

export const IMAGES_EXTRA: readonly FormatEntry[] = [
  { ext: 'heic', aliases: ['heif', 'hif'], mime_type: 'image/heic', family: 'image', name: 'HEIF/HEIC image' },
  { ext: 'jxl', mime_type: 'image/jxl', family: 'image', name: 'JPEG XL image' },
  { ext: 'dng', mime_type: 'image/x-adobe-dng', family: 'image', name: 'Adobe DNG camera raw' },
];
