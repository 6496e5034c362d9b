/** Vector graphics. */
import type { FormatEntry } from '../catalogue.js';

export const VECTOR: readonly FormatEntry[] = [
  { ext: 'svg', mime_type: 'image/svg+xml', family: 'vector', name: 'SVG image' },
  { ext: 'svgz', mime_type: 'image/svg+xml', family: 'vector', name: 'Compressed SVG image' },
  { ext: 'eps', aliases: ['epsf'], mime_type: 'application/postscript', family: 'vector', name: 'Encapsulated PostScript' },
  { ext: 'ps', mime_type: 'application/postscript', family: 'vector', name: 'PostScript' },
  { ext: 'emf', mime_type: 'image/emf', family: 'vector', name: 'Windows enhanced metafile' },
  { ext: 'wmf', mime_type: 'image/wmf', family: 'vector', name: 'Windows metafile' },
];
