/** Plain text. */
import type { FormatEntry } from '../catalogue.js';

export const TEXT: readonly FormatEntry[] = [
  { ext: 'txt', aliases: ['text'], mime_type: 'text/plain', family: 'text', name: 'Plain text' },
  // OCR output only (tesseract): the page text with word boxes, as XHTML.
  { ext: 'hocr', mime_type: 'text/vnd.hocr+html', family: 'text', name: 'hOCR (OCR text with word positions)' },
];
