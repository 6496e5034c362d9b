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
  const byName = detectByExtension(head, ext);
  if (byName) return formatInfo(byName) ?? null;
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
  if (startsWith(b, '8BPS')) return b.length >= 6 && b.readUInt16BE(4) === 2 ? 'psb' : 'psd';
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
  const long = detectLongTail(b);
  if (long) return long;
  if (startsWith(b, [0x50, 0x4b, 0x03, 0x04])) return 'zip';
  if (startsWith(b, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])) return 'ole2';
  return null;
}

/**
 * The formats issue 12 added, by their bytes: e-books (Palm database types, LIT, LRF,
 * RocketBook, TCR, SNB) and the raster long tail. Formats whose header has no magic number
 * (TGA, WBMP) are left to {@link detectByExtension}.
 */
function detectLongTail(b: Buffer): string | null {
  // Palm databases: type and creator at 60. MOBI files with a KF8-only header (version 8) are AZW3.
  if (startsWith(b, 'BOOKMOBI', 60)) return mobiVersion(b) === 8 ? 'azw3' : 'mobi';
  if (startsWith(b, 'TEXtREAd', 60) || startsWith(b, 'PNRdPPrs', 60)) return 'pdb';
  if (startsWith(b, 'ITOLITLS')) return 'lit';
  if (startsWith(b, [0x4c, 0x00, 0x52, 0x00, 0x46, 0x00, 0x00, 0x00])) return 'lrf';
  if (startsWith(b, [0xb0, 0x0c, 0xb0, 0x0c]) && startsWith(b, 'NUVO', 6)) return 'rb';
  if (startsWith(b, '!!8-Bit!!')) return 'tcr';
  if (startsWith(b, 'SNBP000B')) return 'snb';
  // Images.
  if (startsWith(b, 'DDS ')) return 'dds';
  if (startsWith(b, 'SIMPLE  =')) return 'fits';
  if (/^P[Ff]\r?\n/.test(b.subarray(0, 3).toString('latin1'))) return 'pfm';
  if (/^P[25]\s/.test(b.subarray(0, 3).toString('latin1'))) return 'pgm';
  if (/^P[14]\s/.test(b.subarray(0, 3).toString('latin1'))) return 'pbm';
  if (/^P7\r?\n/.test(b.subarray(0, 3).toString('latin1'))) return 'pam';
  if (startsWith(b, [0x59, 0xa6, 0x6a, 0x95])) return 'ras';
  if (startsWith(b, [0x01, 0xda]) && b.length >= 4 && (b[2] === 0 || b[2] === 1) && [1, 2].includes(b[3] ?? 0)) return 'sgi';
  if (startsWith(b, '/* XPM */')) return 'xpm';
  if (/^#define \S+_width \d+/.test(b.subarray(0, 256).toString('latin1'))) return 'xbm';
  // PCX: manufacturer 10, a known version, RLE encoding, a plausible bit depth.
  if (b.length >= 128 && b[0] === 0x0a && [0, 2, 3, 4, 5].includes(b[1] ?? 9) && b[2] === 1 && [1, 2, 4, 8].includes(b[3] ?? 0)) return 'pcx';
  if (startsWith(b, [0x00, 0x00, 0x00, 0x0c, 0x6a, 0x50, 0x20, 0x20, 0x0d, 0x0a, 0x87, 0x0a])) return 'jp2';
  if (startsWith(b, [0xff, 0x4f, 0xff, 0x51])) return 'j2k';
  if (startsWith(b, '#?RADIANCE') || startsWith(b, '#?RGBE')) return 'hdr';
  if (startsWith(b, 'id=ImageMagick')) return 'miff';
  if (startsWith(b, 'SDPX') || startsWith(b, 'XPDS')) return 'dpx';
  if (startsWith(b, [0xab, 0x01])) return 'viff';
  if (startsWith(b, [0x8a, 0x4d, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'mng';
  if (startsWith(b, [0x8b, 0x4a, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'jng';
  if (startsWith(b, 'gimp xcf')) return 'xcf';
  if (startsWith(b, 'LBLSIZE=')) return 'vicar';
  // Cursor: an icon directory of type 2 with at least one entry whose reserved byte is 0.
  if (startsWith(b, [0x00, 0x00, 0x02, 0x00]) && b.length >= 22 && b.readUInt16LE(4) > 0 && b[9] === 0 && b.readUInt32LE(18) >= 22) return 'cur';
  // X window dump: header size, then file version 7, a pixmap format 0–2 and a depth 1–32.
  if (b.length >= 100 && b.readUInt32BE(4) === 7 && b.readUInt32BE(0) >= 100 && b.readUInt32BE(0) < 4096 && b.readUInt32BE(8) <= 2 && b.readUInt32BE(12) >= 1 && b.readUInt32BE(12) <= 32) return 'xwd';
  return null;
}

/** The file version in a MOBI header (record 0 + 16), or 0. */
function mobiVersion(b: Buffer): number {
  if (b.length < 82) return 0;
  const record0 = b.readUInt32BE(78);
  if (b.length < record0 + 40 || !startsWith(b, 'MOBI', record0 + 16)) return 0;
  return b.readUInt32BE(record0 + 36);
}

/**
 * Binary formats without a magic number, recognised when the name says so and the header
 * is plausible: TGA (colour-map type 0/1, a known image type), WBMP (type 0, fixed header 0).
 */
function detectByExtension(b: Buffer, ext: string): string | null {
  if (ext === 'tga' && b.length >= 18 && (b[1] === 0 || b[1] === 1) && [1, 2, 3, 9, 10, 11].includes(b[2] ?? 0)) return 'tga';
  if (ext === 'wbmp' && b.length >= 4 && b[0] === 0 && b[1] === 0) return 'wbmp';
  return null;
}

/** Reads a few small entries of a zip and classifies it; anything else in a zip is unsupported. */
async function detectZip(path: string): Promise<Detection> {
  const wanted = new Set(['mimetype', '[Content_Types].xml', 'metadata.opf', 'index.html', 'index.txt']);
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
  // calibre's zipped e-books: an OPF beside index.html (HTMLZ) or index.txt (TXTZ).
  if (entries.has('metadata.opf') && entries.has('index.html')) return formatInfo('htmlz') ?? null;
  if (entries.has('metadata.opf') && entries.has('index.txt')) return formatInfo('txtz') ?? null;
  const types = entries.get('[Content_Types].xml');
  if (types) {
    if (types.includes('sheet.binary.macroEnabled.main')) return formatInfo('xlsb') ?? null;
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
        if (!wanted.has(entry.fileName)) return zip.readEntry();
        // Too large to be a marker: only its presence counts.
        if (entry.uncompressedSize > MAX_MARKER_BYTES) {
          found.set(entry.fileName, '');
          return zip.readEntry();
        }
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

/** Text formats told apart only by the name (their content has no reliable marker). */
const TEXT_EXTS = new Set([
  'txt', 'csv', 'md', 'rst', 'org', 'tex', 'html', 'muse', 'textile', 'wiki', 'dokuwiki', 'jira', 't2t', 'creole', 'adoc', 'texi', 'ms', 'man',
]);

/** XML documents by their root element (and namespace or doctype where the name alone is ambiguous). */
function detectXml(start: string): string | null {
  // Skip the declaration, processing instructions, comments and the doctype to the root element.
  const doctype = /<!doctype\s+([^\s>[]+)([^>]*)/i.exec(start);
  const root = /<(?!\?|!)([A-Za-z_][\w.-]*:)?([A-Za-z_][\w.-]*)([^>]*)>/.exec(start.replace(/<!--[\s\S]*?-->/g, ''));
  if (!root) return null;
  const [, , name = '', attrs = ''] = root;
  const lower = name.toLowerCase();
  if (lower === 'fictionbook') return 'fb2';
  if (lower === 'opml') return 'opml';
  if (lower === 'svg') return 'svg';
  if (lower === 'tei' || lower === 'teicorpus') return 'tei';
  if (lower === 'document' && /InCopyInterchange/.test(start)) return 'icml';
  if (lower === 'document' && root[1] === 'office:') {
    const m = /office:mimetype="application\/vnd\.oasis\.opendocument\.(text|spreadsheet|presentation)"/.exec(attrs);
    if (m) return { text: 'fodt', spreadsheet: 'fods', presentation: 'fodp' }[m[1] as 'text' | 'spreadsheet' | 'presentation'];
  }
  const docbookRoots = ['book', 'article', 'chapter', 'section', 'part', 'set', 'reference', 'refentry'];
  if (docbookRoots.includes(lower) && (/docbook\.org\/ns\/docbook/.test(attrs) || /docbook/i.test(doctype?.[2] ?? ''))) return 'dbk';
  if (lower === 'html') return 'html';
  return null;
}

/** A Jupyter notebook: a JSON object with `cells` and `nbformat`. */
function isNotebook(start: string): boolean {
  return start.startsWith('{') && /"nbformat"\s*:/.test(start) && /"cells"\s*:/.test(start);
}

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
  const text = head.subarray(0, end).toString('utf8').replace(/^\uFEFF/, '').trimStart();
  const start = text.slice(0, 1024).toLowerCase();
  if (start.startsWith('<!doctype html') || start.startsWith('<html')) return formatInfo('html') ?? null;
  if (start.startsWith('<')) {
    const xml = detectXml(text.slice(0, 4096));
    const found = xml ? formatInfo(xml) : undefined;
    if (found) return found;
  }
  if (isNotebook(text)) return formatInfo('ipynb') ?? null;
  // roff: a man page starts with comments and .TH; other roff (ms) only by name.
  if (/^(\.\\"[^\n]*\n|'\\"[^\n]*\n)*\.TH\s/.test(text.slice(0, 4096)) && ext !== 'ms') return formatInfo('man') ?? null;
  if (TEXT_EXTS.has(ext) && formatInfo(ext)) return formatInfo(ext) ?? null;
  return formatInfo('txt') ?? null;
}
