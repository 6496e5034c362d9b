/** Archives (repacked between each other, never extracted for the caller). */
import type { FormatEntry } from '../catalogue.js';

export const ARCHIVES: readonly FormatEntry[] = [
  { ext: 'zip', mime_type: 'application/zip', family: 'archive', name: 'ZIP archive' },
  { ext: '7z', mime_type: 'application/x-7z-compressed', family: 'archive', name: '7-Zip archive' },
  { ext: 'tar', mime_type: 'application/x-tar', family: 'archive', name: 'Tar archive' },
  { ext: 'tgz', aliases: ['tar.gz'], mime_type: 'application/gzip', family: 'archive', name: 'Tar archive, gzip-compressed' },
  { ext: 'tbz2', aliases: ['tar.bz2', 'tbz'], mime_type: 'application/x-bzip2', family: 'archive', name: 'Tar archive, bzip2-compressed' },
  { ext: 'txz', aliases: ['tar.xz'], mime_type: 'application/x-xz', family: 'archive', name: 'Tar archive, xz-compressed' },
  { ext: 'cpio', mime_type: 'application/x-cpio', family: 'archive', name: 'cpio archive' },
  { ext: 'iso', mime_type: 'application/x-iso9660-image', family: 'archive', name: 'ISO 9660 image' },
];
