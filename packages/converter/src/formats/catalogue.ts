/**
 * The format catalogue: every extension the converter reads or writes, its MIME type and
 * family. Extensions are the canonical ids (`jpg`, not `jpeg`); {@link normaliseExtension}
 * maps aliases.
 */

/** Families group formats for presets, options and the formats listing. */
export type FormatFamily =
  | 'document'
  | 'spreadsheet'
  | 'presentation'
  | 'image'
  | 'audio'
  | 'video'
  | 'ebook'
  | 'markup'
  | 'pdf'
  | 'text';

/** One catalogue entry. */
export interface FormatInfo {
  readonly ext: string;
  readonly mime_type: string;
  readonly family: FormatFamily;
  readonly name: string;
  /** Paged formats: `page_range` applies, `pages` is reported. */
  readonly paged?: boolean;
}

const F = (ext: string, mime_type: string, family: FormatFamily, name: string, paged?: boolean): FormatInfo =>
  paged ? { ext, mime_type, family, name, paged } : { ext, mime_type, family, name };

/** All formats, in listing order. */
export const FORMATS: readonly FormatInfo[] = [
  F('pdf', 'application/pdf', 'pdf', 'PDF document', true),
  F('docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'document', 'Word document', true),
  F('doc', 'application/msword', 'document', 'Word 97-2003 document', true),
  F('odt', 'application/vnd.oasis.opendocument.text', 'document', 'OpenDocument text', true),
  F('rtf', 'application/rtf', 'document', 'Rich Text Format', true),
  F('xlsx', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'spreadsheet', 'Excel workbook', true),
  F('xls', 'application/vnd.ms-excel', 'spreadsheet', 'Excel 97-2003 workbook', true),
  F('ods', 'application/vnd.oasis.opendocument.spreadsheet', 'spreadsheet', 'OpenDocument spreadsheet', true),
  F('csv', 'text/csv', 'spreadsheet', 'Comma-separated values'),
  F('pptx', 'application/vnd.openxmlformats-officedocument.presentationml.presentation', 'presentation', 'PowerPoint presentation', true),
  F('ppt', 'application/vnd.ms-powerpoint', 'presentation', 'PowerPoint 97-2003 presentation', true),
  F('odp', 'application/vnd.oasis.opendocument.presentation', 'presentation', 'OpenDocument presentation', true),
  F('png', 'image/png', 'image', 'PNG image'),
  F('jpg', 'image/jpeg', 'image', 'JPEG image'),
  F('webp', 'image/webp', 'image', 'WebP image'),
  F('gif', 'image/gif', 'image', 'GIF image'),
  F('tiff', 'image/tiff', 'image', 'TIFF image'),
  F('avif', 'image/avif', 'image', 'AVIF image'),
  F('bmp', 'image/bmp', 'image', 'Windows bitmap'),
  F('ico', 'image/vnd.microsoft.icon', 'image', 'Windows icon'),
  F('ppm', 'image/x-portable-pixmap', 'image', 'Portable pixmap'),
  F('psd', 'image/vnd.adobe.photoshop', 'image', 'Photoshop image'),
  F('wav', 'audio/wav', 'audio', 'WAVE audio'),
  F('mp3', 'audio/mpeg', 'audio', 'MP3 audio'),
  F('flac', 'audio/flac', 'audio', 'FLAC audio'),
  F('ogg', 'audio/ogg', 'audio', 'Ogg Vorbis audio'),
  F('opus', 'audio/opus', 'audio', 'Opus audio'),
  F('m4a', 'audio/mp4', 'audio', 'AAC audio in MP4'),
  F('mp4', 'video/mp4', 'video', 'MP4 video (H.264)'),
  F('webm', 'video/webm', 'video', 'WebM video (VP9)'),
  F('mkv', 'video/x-matroska', 'video', 'Matroska video'),
  F('mov', 'video/quicktime', 'video', 'QuickTime video'),
  F('avi', 'video/x-msvideo', 'video', 'AVI video'),
  F('md', 'text/markdown', 'markup', 'Markdown'),
  F('html', 'text/html', 'markup', 'HTML'),
  F('rst', 'text/x-rst', 'markup', 'reStructuredText'),
  F('org', 'text/x-org', 'markup', 'Org mode'),
  F('tex', 'application/x-tex', 'markup', 'LaTeX'),
  F('epub', 'application/epub+zip', 'ebook', 'EPUB e-book'),
  F('txt', 'text/plain', 'text', 'Plain text'),
  // OCR output only (tesseract): the page text with word boxes, as XHTML.
  F('hocr', 'text/vnd.hocr+html', 'text', 'hOCR (OCR text with word positions)'),
];

const BY_EXT = new Map(FORMATS.map((f) => [f.ext, f]));

const ALIASES: Readonly<Record<string, string>> = {
  jpeg: 'jpg',
  jpe: 'jpg',
  tif: 'tiff',
  htm: 'html',
  markdown: 'md',
  text: 'txt',
  latex: 'tex',
  oga: 'ogg',
};

/** Lower-cases, strips a leading dot and maps aliases (`JPEG` → `jpg`). */
export function normaliseExtension(ext: string): string {
  const e = ext.trim().toLowerCase().replace(/^\./, '');
  return ALIASES[e] ?? e;
}

/** The catalogue entry for an extension or alias, if any. */
export function formatInfo(ext: string): FormatInfo | undefined {
  return BY_EXT.get(normaliseExtension(ext));
}
