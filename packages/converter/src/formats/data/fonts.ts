/** Fonts (FontForge). */
import type { FormatEntry } from '../catalogue.js';

export const FONTS: readonly FormatEntry[] = [
  { ext: 'ttf', mime_type: 'font/ttf', family: 'font', name: 'TrueType font' },
  { ext: 'otf', mime_type: 'font/otf', family: 'font', name: 'OpenType (CFF) font' },
  { ext: 'woff', mime_type: 'font/woff', family: 'font', name: 'WOFF web font' },
  { ext: 'woff2', mime_type: 'font/woff2', family: 'font', name: 'WOFF2 web font' },
  { ext: 'sfd', mime_type: 'application/x-fontforge-sfd', family: 'font', name: 'FontForge source font' },
  { ext: 'pfb', mime_type: 'application/x-font-type1', family: 'font', name: 'PostScript Type 1 font' },
];
