/** Raster formats brought by libheif, libjxl, LibRaw (camera raw is read-only) and qoijs. */
import type { FormatEntry } from '../catalogue.js';

export const IMAGES_EXTRA: readonly FormatEntry[] = [
  { ext: 'heic', aliases: ['heif', 'hif'], mime_type: 'image/heic', family: 'image', name: 'HEIF/HEIC image' },
  { ext: 'jxl', mime_type: 'image/jxl', family: 'image', name: 'JPEG XL image' },
  // Issue 21: the Quite OK Image format (qoijs); `image/qoi` is the type its specification recommends.
  { ext: 'qoi', mime_type: 'image/qoi', family: 'image', name: 'QOI image (Quite OK Image)' },
  { ext: 'dng', mime_type: 'image/x-adobe-dng', family: 'image', name: 'Adobe DNG camera raw' },
];
