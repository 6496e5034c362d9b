/**
 * Format detection from the bytes: magic numbers first, then a look inside zip containers
 * (OOXML's `[Content_Types].xml`, OpenDocument's and EPUB's `mimetype` entry) and OLE2
 * compound files (their stream names); the file name's extension only breaks ties among
 * text formats (plain text vs CSV vs Markdown …) and never overrides what the bytes say.
 */
import { open } from 'node:fs/promises';
import yauzl from 'yauzl';
import { formatInfo, normaliseExtension, type FormatInfo } from './catalogue.js';

const HEAD_BYTES = 64 * 1024;
/** Zip entries we read to classify are tiny; a larger one is not a real marker (zip bomb guard). */
const MAX_MARKER_BYTES = 256 * 1024;

/** What detection found; `null` format means the bytes match nothing we support. */
export type Detection = FormatInfo | null;

const startsWith = (b: Buffer, sig: number[] | string, offset = 0): boolean => {
  const bytes = typeof sig === 'string' ? Buffer.from(sig, 'latin1') : Buffer.from(sig);
  return b.length >= offset + bytes.length && b.subarray(offset, offset + bytes.length).equals(bytes);
};

/**
 * Detects the format of the file at `path`. `filename` (the client's name) is used only as
 * a tie-breaker for text formats.
 */
export async function detectFormat(path: string, filename?: string): Promise<Detection> {
  const fh = await open(path, 'r');
  let head: Buffer;
  try {
    const buf = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await fh.read(buf, 0, HEAD_BYTES, 0);
    head = buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
  const ext = filename ? normaliseExtension(filename.includes('.') ? (filename.split('.').pop() ?? '') : '') : '';
  const byMagic = detectBinary(head);
  if (byMagic === 'zip') return detectZip(path);
  if (byMagic === 'ole2') return detectOle(head, ext);
  if (byMagic) return formatInfo(byMagic) ?? null;
  return detectText(head, ext);
}

/** Signature checks; returns an extension, `zip`/`ole2` for containers, or null. */
export function detectBinary(b: Buffer): string | null {
  if (startsWith(b, '%PDF-')) return 'pdf';
  if (startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'png';
  if (startsWith(b, [0xff, 0xd8, 0xff])) return 'jpg';
  if (startsWith(b, 'GIF87a') || startsWith(b, 'GIF89a')) return 'gif';
  if (startsWith(b, 'RIFF') && startsWith(b, 'WEBP', 8)) return 'webp';
  if (startsWith(b, 'RIFF') && startsWith(b, 'WAVE', 8)) return 'wav';
  if (startsWith(b, 'RIFF') && startsWith(b, 'AVI ', 8)) return 'avi';
  if (startsWith(b, [0x49, 0x49, 0x2a, 0x00]) || startsWith(b, [0x4d, 0x4d, 0x00, 0x2a])) return 'tiff';
  if (startsWith(b, '8BPS')) return 'psd';
  if (startsWith(b, [0x00, 0x00, 0x01, 0x00]) && b.length >= 6 && b.readUInt16LE(4) > 0) return 'ico';
  // "BM" plus a file-size field and a known DIB header size: two letters alone are too weak.
  if (startsWith(b, 'BM') && b.length >= 18 && [12, 40, 52, 56, 64, 108, 124].includes(b.readUInt32LE(14))) return 'bmp';
  if (/^P6\s/.test(b.subarray(0, 3).toString('latin1'))) return 'ppm';
  if (startsWith(b, 'fLaC')) return 'flac';
  if (startsWith(b, 'OggS')) return b.subarray(0, 64).includes(Buffer.from('OpusHead')) ? 'opus' : 'ogg';
  if (startsWith(b, 'ID3')) return 'mp3';
  if (b.length >= 2 && b[0] === 0xff && ((b[1] ?? 0) & 0xe6) === 0xe2) return 'mp3'; // MPEG-1/2 layer III frame sync
  if (startsWith(b, 'ftyp', 4)) {
    const brand = b.subarray(8, 12).toString('latin1');
    if (brand === 'avif' || brand === 'avis') return 'avif';
    if (brand === 'M4A ' || brand === 'M4B ') return 'm4a';
    if (brand === 'qt  ') return 'mov';
    return 'mp4';
  }
  if (startsWith(b, [0x1a, 0x45, 0xdf, 0xa3])) return b.subarray(0, 64).includes(Buffer.from('webm')) ? 'webm' : 'mkv';
  if (startsWith(b, '{\\rtf')) return 'rtf';
  if (startsWith(b, [0x50, 0x4b, 0x03, 0x04])) return 'zip';
  if (startsWith(b, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])) return 'ole2';
  return null;
}

/** Reads a few small entries of a zip and classifies it; anything else in a zip is unsupported. */
async function detectZip(path: string): Promise<Detection> {
  const wanted = new Set(['mimetype', '[Content_Types].xml']);
  let entries: Map<string, string>;
  try {
    entries = await readZipEntries(path, wanted);
  } catch {
    return null; // a broken zip is nothing we can convert
  }
  const mimetype = entries.get('mimetype')?.trim();
  if (mimetype === 'application/vnd.oasis.opendocument.text') return formatInfo('odt') ?? null;
  if (mimetype === 'application/vnd.oasis.opendocument.spreadsheet') return formatInfo('ods') ?? null;
  if (mimetype === 'application/vnd.oasis.opendocument.presentation') return formatInfo('odp') ?? null;
  if (mimetype === 'application/epub+zip') return formatInfo('epub') ?? null;
  const types = entries.get('[Content_Types].xml');
  if (types) {
    if (types.includes('wordprocessingml.document.main')) return formatInfo('docx') ?? null;
    if (types.includes('spreadsheetml.sheet.main')) return formatInfo('xlsx') ?? null;
    if (types.includes('presentationml.presentation.main')) return formatInfo('pptx') ?? null;
  }
  return null;
}

function readZipEntries(path: string, wanted: Set<string>): Promise<Map<string, string>> {
  return new Promise((resolve, reject) => {
    yauzl.open(path, { lazyEntries: true, autoClose: true, strictFileNames: false, validateEntrySizes: true }, (err, zip) => {
      if (err || !zip) return reject(err ?? new Error('zip open failed'));
      const found = new Map<string, string>();
      let scanned = 0;
      zip.on('error', reject);
      zip.on('end', () => resolve(found));
      zip.on('entry', (entry: yauzl.Entry) => {
        scanned += 1;
        // Markers sit among the first entries; a zip with thousands of entries is not an office file.
        if (scanned > 5000 || found.size === wanted.size) {
          zip.close();
          return resolve(found);
        }
        if (!wanted.has(entry.fileName) || entry.uncompressedSize > MAX_MARKER_BYTES) return zip.readEntry();
        zip.openReadStream(entry, (e, stream) => {
          if (e || !stream) return reject(e ?? new Error('zip entry read failed'));
          const chunks: Buffer[] = [];
          let size = 0;
          stream.on('data', (c: Buffer) => {
            size += c.length;
            if (size > MAX_MARKER_BYTES) stream.destroy(new Error('zip marker entry too large'));
            else chunks.push(c);
          });
          stream.on('error', reject);
          stream.on('end', () => {
            found.set(entry.fileName, Buffer.concat(chunks).toString('utf8'));
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  });
}

/**
 * OLE2 compound files (Office 97-2003) name their main stream in a UTF-16 directory entry;
 * for small files it sits in the first 64 KiB. The extension decides if the name is not found.
 */
function detectOle(head: Buffer, ext: string): Detection {
  const has = (name: string): boolean => head.includes(Buffer.from(name, 'utf16le'));
  if (has('WordDocument')) return formatInfo('doc') ?? null;
  if (has('Workbook') || has('Book')) return formatInfo('xls') ?? null;
  if (has('PowerPoint Document')) return formatInfo('ppt') ?? null;
  return ['doc', 'xls', 'ppt'].includes(ext) ? (formatInfo(ext) ?? null) : null;
}

const TEXT_EXTS = new Set(['txt', 'csv', 'md', 'rst', 'org', 'tex', 'html']);

/** Text: valid UTF-8 without NUL bytes; HTML by its content, the rest by extension (plain text otherwise). */
function detectText(head: Buffer, ext: string): Detection {
  if (head.length === 0 || head.includes(0)) return null;
  // Cut a trailing partial UTF-8 sequence left by the 64 KiB window before validating.
  let end = head.length;
  for (let i = 1; i <= 3 && end - i >= 0; i++) {
    const byte = head[end - i] ?? 0;
    if ((byte & 0xc0) === 0xc0) {
      end -= i;
      break;
    }
    if ((byte & 0x80) === 0) break;
  }
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head.subarray(0, end));
  } catch {
    return null;
  }
  const start = head.subarray(0, 1024).toString('utf8').trimStart().toLowerCase();
  // hOCR (tesseract's and others') is XHTML that names its OCR system in a meta element.
  if (/<meta\s+name=['"]ocr-system['"]/.test(head.subarray(0, 4096).toString('utf8'))) return formatInfo('hocr') ?? null;
  if (start.startsWith('<!doctype html') || start.startsWith('<html')) return formatInfo('html') ?? null;
  if (TEXT_EXTS.has(ext)) return formatInfo(ext) ?? null;
  return formatInfo('txt') ?? null;
}
