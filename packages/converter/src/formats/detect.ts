/**
 * Format detection from the bytes: magic numbers first, then a look inside zip containers
 * (OOXML's `[Content_Types].xml`, OpenDocument's and EPUB's `mimetype` entry) and OLE2
 * compound files (their stream names); the file name's extension only breaks ties among
 * text formats (plain text vs CSV vs Markdown …) and never overrides what the bytes say.
 */
import { open } from 'node:fs/promises';
import { constants, gunzipSync } from 'node:zlib';
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
  let size = 0;
  try {
    size = (await fh.stat()).size;
    const buf = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await fh.read(buf, 0, HEAD_BYTES, 0);
    head = buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
  const ext = filename ? normaliseExtension(filename.includes('.') ? (filename.split('.').pop() ?? '') : '') : '';
  const byMagic = detectBinary(head);
  if (byMagic === 'zip') return detectZip(path);
  // Binary STL has no magic number: an 80-byte header, a triangle count and 50 bytes a triangle.
  if (!byMagic && size >= 84 && head.length >= 84 && size === 84 + 50 * head.readUInt32LE(80)) return formatInfo('stl') ?? null;
  if (byMagic === 'ole2') return detectOle(Buffer.concat([head, await oleDirectory(path, head)]), ext);
  if (byMagic) return formatInfo(NAMED_VARIANT[byMagic]?.[ext] ?? byMagic) ?? null;
  const byName = detectByExtension(head, ext, size);
  if (byName) return formatInfo(byName) ?? null;
  return detectText(head, ext);
}

/**
 * Formats whose bytes are another's: an ASF with video named `.asf` (rather than `.wmv`), an
 * MPEG-2 program stream named `.vob` without the DVD navigation pack {@link detectAv} looks for.
 */
const NAMED_VARIANT: Readonly<Record<string, Readonly<Record<string, string>>>> = { wmv: { asf: 'asf' }, mpg: { vob: 'vob' } };

/**
 * Binary formats whose bytes alone do not name them: told by the client's file name with a
 * plausible header (no magic number, or the same bytes as a sibling format).
 */
export const BINARY_BY_NAME: ReadonlySet<string> = new Set([
  'tga', 'wbmp', 'msgpack', 'cbor', 'bson', 'mtv', 'avs', 'otb', 'rgf', 'hrz', 'palm', 'g3', 'jbig', 'mac',
  ...Object.values(NAMED_VARIANT).flatMap((v) => Object.values(v)),
]);

/** Signature checks; returns an extension, `zip`/`ole2` for containers, or null. */
export function detectBinary(b: Buffer): string | null {
  if (startsWith(b, '%PDF-')) return 'pdf';
  if (startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return isApng(b) ? 'apng' : 'png';
  if (startsWith(b, [0xff, 0xd8, 0xff])) return 'jpg';
  if (startsWith(b, 'GIF87a') || startsWith(b, 'GIF89a')) return 'gif';
  if (startsWith(b, 'RIFF') && startsWith(b, 'WEBP', 8)) return 'webp';
  if (startsWith(b, 'RIFF') && startsWith(b, 'WAVE', 8)) return 'wav';
  if (startsWith(b, 'RIFF') && startsWith(b, 'AVI ', 8)) return 'avi';
  if (startsWith(b, [0x49, 0x49, 0x2a, 0x00]) || startsWith(b, [0x4d, 0x4d, 0x00, 0x2a])) return tiffHasTag(b, 0xc612) ? 'dng' : 'tiff';
  const av = detectAv(b);
  if (av) return av;
  const more = detectMoreBinary(b);
  if (more) return more;
  if (startsWith(b, '8BPS')) return b.length >= 6 && b.readUInt16BE(4) === 2 ? 'psb' : 'psd';
  if (startsWith(b, [0x00, 0x00, 0x01, 0x00]) && b.length >= 6 && b.readUInt16LE(4) > 0) return 'ico';
  // "BM" plus a file-size field and a known DIB header size: two letters alone are too weak.
  if (startsWith(b, 'BM') && b.length >= 18 && [12, 40, 52, 56, 64, 108, 124].includes(b.readUInt32LE(14))) return 'bmp';
  if (/^P6\s/.test(b.subarray(0, 3).toString('latin1'))) return 'ppm';
  if (startsWith(b, 'fLaC')) return 'flac';
  if (startsWith(b, 'OggS')) return oggKind(b);
  if (startsWith(b, 'ID3')) return 'mp3';
  if (b.length >= 2 && b[0] === 0xff && ((b[1] ?? 0) & 0xe6) === 0xe2) return 'mp3'; // MPEG-1/2 layer III frame sync
  // ADTS: the same 12-bit sync with layer 00; layer II: layer bits 10, a valid bitrate and sample rate.
  if (b.length >= 7 && b[0] === 0xff && ((b[1] ?? 0) & 0xf6) === 0xf0) return 'aac';
  if (b.length >= 4 && b[0] === 0xff && ((b[1] ?? 0) & 0xe6) === 0xe4 && (b[2] ?? 0) >> 4 !== 15 && (((b[2] ?? 0) >> 2) & 3) !== 3) return 'mp2';
  if (startsWith(b, 'ftyp', 4)) {
    const brand = b.subarray(8, 12).toString('latin1');
    if (brand === 'avif' || brand === 'avis') return 'avif';
    // HEIF: the HEVC brands, or the generic image brands without AVIF among the compatible ones.
    const boxSize = Math.min(b.length, b.readUInt32BE(0));
    const compatible = b.subarray(16, boxSize).toString('latin1');
    if (['heic', 'heix', 'hevc', 'hevx', 'heim', 'heis'].includes(brand)) return 'heic';
    if ((brand === 'mif1' || brand === 'msf1') && !compatible.includes('avif')) return 'heic';
    if (brand === 'mif1' || brand === 'msf1') return 'avif';
    if (brand === 'M4A ' || brand === 'M4B ') return 'm4a';
    if (brand === 'qt  ') return 'mov';
    if (brand.startsWith('M4V')) return 'm4v';
    if (brand.startsWith('3g2')) return '3g2';
    if (/^3g[pegrs]/.test(brand)) return '3gp';
    if (brand === 'f4v ' || brand === 'f4p ') return 'f4v';
    return 'mp4';
  }
  if (classicQuickTime(b)) return 'mov';
  if (startsWith(b, [0x1a, 0x45, 0xdf, 0xa3])) {
    if (b.subarray(0, 64).includes(Buffer.from('webm'))) return 'webm';
    const tracks = matroskaTrackTypes(b);
    return tracks.length > 0 && tracks.every((t) => t === TRACK_AUDIO) ? 'mka' : 'mkv';
  }
  if (startsWith(b, '{\\rtf')) return 'rtf';
  const long = detectLongTail(b);
  if (long) return long;
  if (startsWith(b, [0x50, 0x4b, 0x03, 0x04])) return 'zip';
  if (startsWith(b, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])) return 'ole2';
  return null;
}

/**
 * Whether a PNG is animated: an acTL chunk before the first IDAT (the APNG specification; an
 * acTL after it is not an animation, and viewers show the still). The chunks are walked
 * within the bytes read (64 KiB: a PNG whose chunks before its image data are larger counts
 * as a still).
 */
export function isApng(b: Buffer): boolean {
  for (let at = 8; at + 8 <= b.length; ) {
    const type = b.toString('latin1', at + 4, at + 8);
    if (type === 'acTL') return true;
    if (type === 'IDAT' || type === 'IEND') return false;
    at += 12 + b.readUInt32BE(at);
  }
  return false;
}

/** Top-level atoms a QuickTime movie without an `ftyp` box may start with. */
const QUICKTIME_LEADING = new Set(['wide', 'free', 'skip', 'pnot', 'PICT']);
/** The first atom inside `moov`. */
const QUICKTIME_MOOV_FIRST = new Set(['mvhd', 'cmov', 'prfl', 'iods']);

/**
 * A QuickTime movie as cameras and older Apple software write it, with no `ftyp` box (issue 31:
 * a camera's Motion-JPEG MOV was refused at upload): leading `wide`/`free`/`skip`/`pnot`
 * atoms walked over, then an `mdat` of a plausible size or a `moov` whose first child is a
 * movie header. At most eight atoms, all inside the bytes read.
 */
export function classicQuickTime(b: Buffer): boolean {
  let off = 0;
  for (let i = 0; i < 8 && off + 16 <= b.length; i++) {
    const size = b.readUInt32BE(off);
    const type = b.toString('latin1', off + 4, off + 8);
    if (type === 'moov') return size >= 16 && QUICKTIME_MOOV_FIRST.has(b.toString('latin1', off + 12, off + 16));
    // mdat: the media data, often first; 1 means a 64-bit size follows, 0 "to the end of the file".
    if (type === 'mdat') return i > 0 || size === 0 || size === 1 || size >= 16;
    if (!QUICKTIME_LEADING.has(type) || size < 8) return false;
    off += size;
  }
  return false;
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
  // QOI: magic, then width and height, 3 or 4 channels, colour space 0 or 1 (issue 21).
  if (startsWith(b, 'qoif') && b.length >= 14 && (b[12] === 3 || b[12] === 4) && (b[13] === 0 || b[13] === 1)) return 'qoi';
  // CBOR's self-describe tag 55799 (RFC 8949 §3.4.6).
  if (startsWith(b, [0xd9, 0xd9, 0xf7])) return 'cbor';
  if (startsWith(b, 'LBLSIZE=')) return 'vicar';
  // Cursor: an icon directory of type 2 with at least one entry whose reserved byte is 0.
  if (startsWith(b, [0x00, 0x00, 0x02, 0x00]) && b.length >= 22 && b.readUInt16LE(4) > 0 && b[9] === 0 && b.readUInt32LE(18) >= 22) return 'cur';
  // X window dump: header size, then file version 7, a pixmap format 0–2 and a depth 1–32.
  if (b.length >= 100 && b.readUInt32BE(4) === 7 && b.readUInt32BE(0) >= 100 && b.readUInt32BE(0) < 4096 && b.readUInt32BE(8) <= 2 && b.readUInt32BE(12) >= 1 && b.readUInt32BE(12) <= 32) return 'xwd';
  return detectOlderTail(b);
}

/**
 * The older raster tail, by its signatures: PICT (a 512-byte application header, then the
 * picture size, its frame and the version opcode), SIXEL (a DCS introducer ending in `q`),
 * PGX, Cineon, DCX (then the first page's offset past the page table), CALS (its header
 * records), VIPS and Utah RLE (magic, then 8 bits per channel).
 */
function detectOlderTail(b: Buffer): string | null {
  if (b.length >= 526 && (startsWith(b, [0x00, 0x11, 0x02, 0xff], 522) || startsWith(b, [0x11, 0x01], 522))) return 'pict';
  const dcs = startsWith(b, [0x1b, 0x50]) ? 2 : startsWith(b, [0x90]) ? 1 : 0;
  if (dcs && /^[0-9;]*q/.test(b.subarray(dcs, 32).toString('latin1'))) return 'sixel';
  if (/^PG\s?(?:ML|LM)\s?[+-]?\s?\d+\s+\d+\s+\d+\s/.test(b.subarray(0, 64).toString('latin1'))) return 'pgx';
  if (startsWith(b, [0x80, 0x2a, 0x5f, 0xd7]) || startsWith(b, [0xd7, 0x5f, 0x2a, 0x80])) return 'cin';
  if (startsWith(b, [0xb1, 0x68, 0xde, 0x3a]) && b.length >= 8 && b.readUInt32LE(4) >= 8) return 'dcx';
  const head = b.subarray(0, 2048).toString('latin1');
  if (/^(?:srcdocid|dstdocid|version|rtype):/.test(head) && /\brtype: *1\b/.test(head) && /\brpelcnt: *\d+ *, *\d+/.test(head)) return 'cals';
  if (startsWith(b, [0x08, 0xf2, 0xa6, 0xb6]) || startsWith(b, [0xb6, 0xa6, 0xf2, 0x08])) return 'v';
  if (startsWith(b, [0x52, 0xcc]) && b.length >= 15 && b[12] === 8 && (b[11] ?? 0) >= 1) return 'rle';
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
 * is plausible: TGA (colour-map type 0/1, a known image type), WBMP (type 0, fixed header 0),
 * and the older tail, where the header's sides must account for the file's `size` exactly
 * wherever the format is uncompressed (MTV, AVS, OTB, EV3, HRZ).
 */
function detectByExtension(b: Buffer, ext: string, size: number): string | null {
  // MessagePack and CBOR without a self-describe tag: a map or array at the top (what data files hold).
  if (ext === 'msgpack' && b.length >= 1 && ((b[0] ?? 0) >= 0x80 && (b[0] ?? 0) <= 0x9f || [0xdc, 0xdd, 0xde, 0xdf].includes(b[0] ?? 0))) return 'msgpack';
  if (ext === 'cbor' && b.length >= 1 && (b[0] ?? 0) >= 0x80 && (b[0] ?? 0) <= 0xbf) return 'cbor';
  // BSON: a document whose int32 length is the file's size.
  if (ext === 'bson' && b.length >= 5 && b.readInt32LE(0) === size) return 'bson';
  if (ext === 'tga' && b.length >= 18 && (b[1] === 0 || b[1] === 1) && [1, 2, 3, 9, 10, 11].includes(b[2] ?? 0)) return 'tga';
  if (ext === 'wbmp' && b.length >= 4 && b[0] === 0 && b[1] === 0) return 'wbmp';
  return olderTailByExtension(b, ext, size) ? ext : null;
}

/** Whether `b` (of a file of `size` bytes) is a plausible `ext` file of the older raster tail. */
function olderTailByExtension(b: Buffer, ext: string, size: number): boolean {
  switch (ext) {
    case 'mtv': {
      const m = /^(\d{1,5}) (\d{1,5})\n/.exec(b.subarray(0, 16).toString('latin1'));
      return !!m && size === m[0].length + 3 * Number(m[1]) * Number(m[2]);
    }
    case 'avs':
      return b.length >= 8 && size === 8 + 4 * b.readUInt32BE(0) * b.readUInt32BE(4) && size > 8;
    case 'otb': {
      // Info field 0 (one-byte sides), width, height, depth 1; rows packed or padded to bytes.
      const [info, w = 0, h = 0, depth] = b;
      return b.length >= 4 && info === 0 && depth === 1 && w > 0 && h > 0 && size >= 4 + Math.ceil((w * h) / 8) && size <= 4 + Math.ceil(w / 8) * h;
    }
    case 'rgf': {
      const [w = 0, h = 0] = b;
      return w > 0 && h > 0 && size === 2 + Math.ceil(w / 8) * h;
    }
    case 'hrz':
      return size === 256 * 240 * 3;
    case 'palm': {
      // Width, height, bytes per row, flags, bits per pixel, version (0–3).
      if (b.length < 16) return false;
      const [w, h, rowBytes, bpp = 0, version = 9] = [b.readUInt16BE(0), b.readUInt16BE(2), b.readUInt16BE(4), b[8], b[9]];
      return w > 0 && h > 0 && [1, 2, 4, 8, 16].includes(bpp) && version <= 3 && rowBytes >= Math.ceil((w * bpp) / 8) && rowBytes % 2 === 0;
    }
    case 'g3':
      // Raw group 3 starts with an end-of-line code: eleven zero bits, then a one.
      return b.length >= 2 && b[0] === 0 && ((b[1] ?? 0xff) & 0xe0) === 0 && (b[1] ?? 0) !== 0;
    case 'jbig':
      // The 20-byte bi-level image header: lowest ≤ highest resolution layer, planes, a zero byte, sides, stripe height.
      return b.length >= 20 && (b[0] ?? 9) <= (b[1] ?? 0) && (b[2] ?? 0) >= 1 && b[3] === 0 && b.readUInt32BE(4) > 0 && b.readUInt32BE(8) > 0 && b.readUInt32BE(12) > 0;
    case 'mac':
      // MacPaint: version 0, 2 or 3, then a 512-byte header before the packed 576×720 bits.
      return b.length >= 514 && [0, 2, 3].includes(b.readUInt32BE(0));
    case 'pict':
      // PICT without its 512-byte application header (as stored in a resource): size, frame, version.
      return b.length >= 14 && (startsWith(b, [0x00, 0x11, 0x02, 0xff], 10) || startsWith(b, [0x11, 0x01], 10));
    default:
      return false;
  }
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
  const zipOnly = formatInfo('zip') ?? null;
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
    if (types.includes('3dmanufacturing')) return formatInfo('3mf') ?? null;
  }
  // Any other zip is an archive (issue 12): repacked, never opened as a document.
  return zipOnly;
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
/**
 * The start of an OLE2 compound file's directory (its stream names), which writers may put
 * anywhere in the file (LibreOffice puts PowerPoint's last): 16 sectors from where the header
 * says it starts (writers store it contiguously; a scattered one leaves the decision to the
 * name). Empty when the header is implausible.
 */
async function oleDirectory(path: string, head: Buffer): Promise<Buffer> {
  if (head.length < 0x34) return Buffer.alloc(0);
  const shift = head.readUInt16LE(0x1e);
  if (shift !== 9 && shift !== 12) return Buffer.alloc(0);
  const size = 2 ** shift;
  const sector = head.readUInt32LE(0x30);
  if (sector >= 0xfffffffa) return Buffer.alloc(0);
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(16 * size);
    const { bytesRead } = await fh.read(buf, 0, buf.length, (sector + 1) * size);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

function detectOle(head: Buffer, ext: string): Detection {
  const has = (name: string): boolean => head.includes(Buffer.from(name, 'utf16le'));
  if (has('WordDocument')) return formatInfo('doc') ?? null;
  if (has('Workbook') || has('Book')) return formatInfo('xls') ?? null;
  if (has('PowerPoint Document')) return formatInfo('ppt') ?? null;
  return ['doc', 'xls', 'ppt'].includes(ext) ? (formatInfo(ext) ?? null) : null;
}

/** Text formats told apart only by the name (their content has no reliable marker). */
const TEXT_EXTS: ReadonlySet<string> = new Set([
  'txt', 'csv', 'md', 'rst', 'org', 'tex', 'html', 'muse', 'textile', 'wiki', 'dokuwiki', 'jira', 't2t', 'creole', 'adoc', 'texi', 'ms', 'man',
  // Issue 12's data formats (JSON and XML are also found by content), MicroDVD, LRC and OBJ files without their usual start.
  'tsv', 'json', 'ndjson', 'yaml', 'toml', 'xml', 'ini', 'sub', 'lrc', 'obj',
  // Markup and data without a signature of their own.
  'haddock', 'tikiwiki', 'twiki', 'vimwiki', 'json5', 'properties', 'geojson',
  // Typst (issue 21): by its name, or by a leading directive when the name says nothing (looksLikeTypst).
  'typ',
]);

/** Whether only the client's file name tells `ext` apart: a text format without a signature, or a binary one in {@link BINARY_BY_NAME}. */
export function decidedByName(ext: string): boolean {
  return TEXT_EXTS.has(ext) || BINARY_BY_NAME.has(ext);
}

/** XML documents by their root element (and namespace or doctype where the name alone is ambiguous). */
function detectXml(start: string, ext = ''): string | null {
  // Skip the declaration, processing instructions, comments and the doctype to the root element.
  const doctype = /<!doctype\s+([^\s>[]+)([^>]*)/i.exec(start);
  // The root is looked for after the DOCTYPE's internal subset, whose entity values may hold
  // markup (DocBook's `<!ENTITY warn "<emphasis>…">`, Illustrator's `<!ENTITY Viewport "<rect …/>">`,
  // issue 21); a subset running past the head leaves the DOCTYPE's name, which names the root.
  const text = start.replace(/<!--[\s\S]*?-->/g, '');
  const subset = /<!doctype[^[>]*\[/i.exec(text);
  const subsetEnd = subset ? /\][ \t\r\n]*>/.exec(text.slice(subset.index)) : null;
  const body = !subset ? text : subsetEnd ? text.slice(subset.index + subsetEnd.index + subsetEnd[0].length) : '';
  const root = /<(?!\?|!)([A-Za-z_][\w.-]*:)?([A-Za-z_][\w.-]*)([^>]*)>/.exec(body) ??
    (subset && !subsetEnd && doctype ? ['', undefined, doctype[1], ''] as const : null);
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
  if (lower === 'plist') return 'plist';
  if (lower === 'gpx') return 'gpx';
  if (lower === 'kml') return 'kml';
  if (lower === 'trainingcenterdatabase') return 'tcx';
  // JATS: <article> with the JATS (or older NLM) DTD, or its dtd-version attribute and no DocBook namespace.
  if (lower === 'article' && !/docbook/i.test(`${attrs} ${doctype?.[2] ?? ''}`)
    && (/JATS|NLM\/\/DTD|journalpublishing|archivearticle/i.test(doctype?.[2] ?? '') || /\bdtd-version=/.test(attrs))) return 'jats';
  // DocBook by its namespace (5) or its DTD (4); a DocBook 4 file without a doctype (the
  // DocBook project's own test documents have them) by its root and the .dbk name.
  const docbookRoots = ['book', 'article', 'chapter', 'section', 'part', 'set', 'reference', 'refentry', 'appendix', 'preface', 'glossary', 'bibliography'];
  if (docbookRoots.includes(lower) && (/docbook\.org\/ns\/docbook/.test(attrs) || /docbook/i.test(doctype?.[2] ?? '') || ext === 'dbk')) return 'dbk';
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
  let encoding: 'utf8' | 'latin1' = 'utf8';
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head.subarray(0, end));
  } catch {
    // Legacy 8-bit text (a Latin-1 CSV from a public project's tests, issue 12) is still
    // text: bytes above 0x7f are letters there, and no C0 control but tab and line ends.
    if (!isEightBitText(head)) return null;
    encoding = 'latin1';
    end = head.length;
  }
  const text = head.subarray(0, end).toString(encoding).replace(/^\uFEFF/, '').trimStart();
  const start = text.slice(0, 1024).toLowerCase();
  // hOCR (tesseract's and others') is XHTML that names its OCR system in a meta element.
  if (/<meta\s+name=['"]ocr-system['"]/.test(head.subarray(0, 4096).toString('utf8'))) return formatInfo('hocr') ?? null;
  if (start.startsWith('<!doctype html') || start.startsWith('<html')) return formatInfo('html') ?? null;
  if (start.startsWith('<')) {
    const xml = detectXml(text.slice(0, 4096), ext);
    const found = xml ? formatInfo(xml) : undefined;
    if (found) return found;
  }
  if (isNotebook(text)) return formatInfo('ipynb') ?? null;
  // roff: a man page starts with comments and .TH; other roff (ms) only by name.
  if (/^(\.\\"[^\n]*\n|'\\"[^\n]*\n)*\.TH\s/.test(text.slice(0, 4096)) && ext !== 'ms') return formatInfo('man') ?? null;
  const byContent = detectTextContent(head.subarray(0, end).toString(encoding), ext, head.length < HEAD_BYTES);
  if (byContent) return formatInfo(byContent) ?? null;
  if (TEXT_EXTS.has(ext) && formatInfo(ext)) return formatInfo(ext) ?? null;
  if (looksLikeTypst(text)) return formatInfo('typ') ?? null;
  return formatInfo('txt') ?? null;
}

/**
 * A Typst document without its name: after blank lines and comments, the first line is a
 * set/show/let/import/include rule (`#set page(…)`) — code mode, which no other text format
 * here starts with (a Markdown heading is `# ` with a space; a shell script `#!`). Only asked
 * when the name is not a text format's: a `.txt` starting like this stays text.
 */
export function looksLikeTypst(text: string): boolean {
  const body = text.replace(/^\uFEFF/, '').replace(/^(?:\s+|\/\/[^\n]*|\/\*[\s\S]*?\*\/)*/, '');
  return /^#(?:set|show|let|import|include)\s/.test(body);
}

/** Whether `b` reads as single-byte text: no C0 control bytes but tab, line feed, form feed, carriage return. */
function isEightBitText(b: Buffer): boolean {
  for (const byte of b) if ((byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0c && byte !== 0x0d) || byte === 0x7f) return false;
  return true;
}

/** Whether a TIFF's first IFD holds `tag` (DNG's DNGVersion, 0xC612, tells camera raw from TIFF). */
export function tiffHasTag(b: Buffer, tag: number): boolean {
  const le = b[0] === 0x49;
  const u16 = (o: number): number => (le ? b.readUInt16LE(o) : b.readUInt16BE(o));
  const u32 = (o: number): number => (le ? b.readUInt32LE(o) : b.readUInt32BE(o));
  if (b.length < 8) return false;
  const ifd = u32(4);
  if (ifd + 2 > b.length) return false;
  const n = u16(ifd);
  for (let i = 0; i < n && ifd + 2 + i * 12 + 2 <= b.length; i++) if (u16(ifd + 2 + i * 12) === tag) return true;
  return false;
}

/** Signatures of the formats issue 12 brought (audio, archives, fonts, vector, 3D, images). */
function detectMoreBinary(b: Buffer): string | null {
  if (startsWith(b, [0xff, 0x0a]) || startsWith(b, [0, 0, 0, 0x0c, 0x4a, 0x58, 0x4c, 0x20, 0x0d, 0x0a, 0x87, 0x0a])) return 'jxl';
  // A comment runs to the line's end (issue 45: `#[^\n]*\s+` backtracked exponentially on "# # # …").
  const pnm = /^P([1-6])\s+(?:#[^\n]*\n\s*)*\d+\s+\d+/.exec(b.subarray(0, 256).toString('latin1'));
  if (pnm) return ({ 1: 'pbm', 4: 'pbm', 2: 'pgm', 5: 'pgm', 3: 'ppm', 6: 'ppm' } as Record<string, string>)[pnm[1] as string] ?? null;
  if (startsWith(b, 'FORM') && startsWith(b, '8SVX', 8)) return '8svx';
  if (startsWith(b, 'FORM') && (startsWith(b, 'AIFF', 8) || startsWith(b, 'AIFC', 8))) return 'aiff';
  if (startsWith(b, '.snd')) return 'au';
  if (startsWith(b, 'caff')) return 'caf';
  if (startsWith(b, [0x72, 0x69, 0x66, 0x66, 0x2e, 0x91, 0xcf, 0x11])) return 'w64';
  if (startsWith(b, 'wvpk')) return 'wv';
  if (startsWith(b, 'Creative Voice File\x1a')) return 'voc';
  if (startsWith(b, '2BIT')) return 'avr';
  if (startsWith(b, 'NIST_1A')) return 'sph';
  if (startsWith(b, '#!AMR\n')) return 'amr';
  if (startsWith(b, [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c])) return '7z';
  if (startsWith(b, [0x1f, 0x8b])) return gzipped(b);
  if (startsWith(b, 'BZh')) return 'tbz2';
  if (startsWith(b, [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00])) return 'txz';
  if (startsWith(b, 'ustar', 257)) return 'tar';
  if (startsWith(b, '07070') || startsWith(b, [0xc7, 0x71]) || startsWith(b, [0x71, 0xc7])) return 'cpio';
  if (startsWith(b, 'CD001', 32769)) return 'iso';
  if (startsWith(b, 'OTTO')) return 'otf';
  if ((startsWith(b, [0, 1, 0, 0]) || startsWith(b, 'true')) && b.length >= 12 && b.readUInt16BE(4) > 0 && b.readUInt16BE(4) < 100) return 'ttf';
  if (startsWith(b, 'wOFF')) return 'woff';
  if (startsWith(b, 'wOF2')) return 'woff2';
  if (startsWith(b, [0x80, 0x01]) && startsWith(b, '%!PS-AdobeFont', 6)) return 'pfb';
  if (startsWith(b, '%!PS')) return /EPSF/.test(b.subarray(0, 64).toString('latin1').split('\n')[0] ?? '') ? 'eps' : 'ps';
  if (startsWith(b, [0xc5, 0xd0, 0xd3, 0xc6])) return 'eps';
  if (b.length >= 44 && b.readUInt32LE(0) === 1 && startsWith(b, ' EMF', 40)) return 'emf';
  if (startsWith(b, [0xd7, 0xcd, 0xc6, 0x9a]) || ((startsWith(b, [1, 0, 9, 0]) || startsWith(b, [2, 0, 9, 0])) && b.length >= 18 && (b[4] === 0 || b[4] === 3) && b[5] === 1)) return 'wmf';
  if (startsWith(b, 'glTF')) return 'glb';
  if (startsWith(b, 'xof 03')) return 'x';
  if (startsWith(b, 'ply\n') || startsWith(b, 'ply\r\n')) return 'ply';
  if (startsWith(b, [0x4d, 0x4d]) && b.length >= 8 && [0x0002, 0x3d3d].includes(b.readUInt16LE(6))) return '3ds';
  return null;
}

/**
 * An XML comment that ends at its first `-->` (issue 45: `<!--[\s\S]*?-->` repeated could also
 * end at any later one, and backtracked exponentially on a few hundred bytes of "<!---->").
 */
const XML_COMMENT = '<!--(?:[^-]|-(?!->))*-->';
/** An SVG's start: declaration, comments, an SVG doctype, then the root. */
const SVG_HEAD = new RegExp(`^(<\\?xml[^>]*>\\s*)?(${XML_COMMENT}\\s*)*(<!DOCTYPE svg[^>]*>\\s*)?<svg[\\s>]`, 'i');

/** A gzip stream: tar inside (ustar at 257) or SVG inside; anything else is not supported. */
function gzipped(b: Buffer): string | null {
  let inner: Buffer;
  try {
    // The first 2 KiB of the stream, flushed without its end: at most ~2 MiB of output (deflate's
    // ratio tops out near 1,000), enough to see a tar header or an SVG root.
    inner = gunzipSync(b.subarray(0, 2048), { finishFlush: constants.Z_SYNC_FLUSH });
  } catch {
    return null;
  }
  if (startsWith(inner, 'ustar', 257)) return 'tgz';
  const text = inner.toString('utf8').trimStart();
  if (SVG_HEAD.test(text)) return 'svgz';
  return null;
}

/** The root element of an XML text after the declaration, comments, PIs and a DOCTYPE whose subset ends at its first `]` before `>`. */
const XML_ROOT = new RegExp(`^(?:<\\?xml[^>]*\\?>\\s*)?(?:(?:${XML_COMMENT}|<\\?[^>]*\\?>|<!DOCTYPE[^>[]*(?:\\[(?:[^\\]]|\\](?!\\s*>))*\\])?\\s*>)\\s*)*<([A-Za-z_][\\w:.-]*)`);

/** The root element name of an XML text (after the declaration, comments, a DOCTYPE). */
function xmlRoot(text: string): string | null {
  const m = XML_ROOT.exec(text);
  return m ? (m[1] as string) : null;
}

/** A BibTeX/BibLaTeX entry at the start (after comments): `@article{key,` and its kin. */
const BIBTEX = /^(?:%[^\n]*\n\s*)*@(?:article|book|booklet|inbook|incollection|inproceedings|conference|manual|mastersthesis|phdthesis|thesis|misc|online|proceedings|report|techreport|unpublished|string|preamble|comment)\s*[{(]/i;

/**
 * Text formats recognised by their content: markers (vCard, iCalendar, subtitles, SFD),
 * XML roots (SVG, COLLADA, SAMI), JSON that parses, 3D meshes; `whole` says the text is the
 * whole file (JSON is then parsed, not guessed).
 */
export function detectTextContent(text: string, ext: string, whole: boolean): string | null {
  const t = text.trimStart();
  const upper = t.slice(0, 64).toUpperCase();
  if (upper.startsWith('BEGIN:VCARD')) return 'vcf';
  if (upper.startsWith('BEGIN:VCALENDAR')) return 'ics';
  if (t.startsWith('WEBVTT')) return 'vtt';
  if (/^\[Script Info\]/i.test(t)) return /ScriptType:\s*v4\.00\+/i.test(t.slice(0, 4096)) || ext === 'ass' ? 'ass' : 'ssa';
  if (/^\d+\s*\r?\n\d{1,2}:\d{2}:\d{2}[,.]\d{1,3}\s*-->\s*\d/.test(t)) return 'srt';
  if (/^\d+:\d{2}:\d{2}\.\d{3},\d+:\d{2}:\d{2}\.\d{3}\s*\r?\n/.test(t)) return 'sbv';
  if (/^\{\d+\}\{\d*\}/.test(t)) return 'sub';
  if (/^(\[(ar|ti|al|by|length|offset|re|ve):[^\]]*\]\s*)*\[\d{1,3}:\d{2}(?:[.:]\d{1,3})?\]/i.test(t)) return 'lrc';
  if (/^<SAMI[\s>]/i.test(t)) return 'smi';
  if (t.startsWith('SplineFontDB:')) return 'sfd';
  // POD: a file that starts with a POD command (a Perl script with POD inside starts with code).
  if (/^=(pod|head[1-6]|encoding|begin|for)\b/.test(t)) return 'pod';
  if (BIBTEX.test(t)) return 'bib';
  if (t.startsWith('<')) {
    const root = xmlRoot(t);
    if (root === 'svg' || root?.endsWith(':svg')) return 'svg';
    if (root === 'COLLADA') return 'dae';
    if (root && t.startsWith('<?xml')) return 'xml';
    if (root && ext === 'xml') return 'xml';
  }
  if (/^solid\b[^\n]*\n\s*(facet|endsolid)/.test(t)) return 'stl';
  if (/^v\s+-?[\d.]+\s+-?[\d.]+\s+-?[\d.]+/m.test(t) && /^f\s+\d+/m.test(t) && /^(#[^\n]*|o\s.*|g\s.*|mtllib\s.*|v\s.*|\s*)$/m.test(t.split('\n')[0] ?? '')) return 'obj';
  if ((t.startsWith('{') || t.startsWith('[')) && !['json', 'ndjson', 'json5'].includes(ext) && whole) {
    try {
      const v = JSON.parse(t) as unknown;
      // GeoJSON: a FeatureCollection or a Feature (a bare geometry is just JSON).
      if (typeof v === 'object' && v !== null && ['FeatureCollection', 'Feature'].includes((v as { type?: unknown }).type as string)) return 'geojson';
      return 'json';
    } catch {
      const lines = t.split(/\r?\n/).filter((l) => l.trim() !== '');
      try {
        lines.forEach((l) => JSON.parse(l));
        return lines.length > 1 ? 'ndjson' : null;
      } catch {
        return null;
      }
    }
  }
  return null;
}

const ASF_HEADER = [0x30, 0x26, 0xb2, 0x75, 0x8e, 0x66, 0xcf, 0x11, 0xa6, 0xd9, 0x00, 0xaa, 0x00, 0x62, 0xce, 0x6c];
/** ASF_Video_Media, the stream type GUID of a video stream's properties object. */
const ASF_VIDEO_MEDIA = Buffer.from('c0ef19bc4d5bcf11a8fd00805f5c442b', 'hex');

/**
 * Audio and video containers and streams issue 12 added: FLV, ASF (video or not), MPEG
 * program and transport streams, Dolby AC-3/E-AC-3, TTA, YUV4MPEG2, MXF, DV and NUT. (Ogg,
 * Matroska, the ISO brands and the MPEG audio frames are told apart where their families are
 * detected.)
 */
function detectAv(b: Buffer): string | null {
  if (startsWith(b, 'FLV\x01')) return 'flv';
  if (startsWith(b, ASF_HEADER)) return b.subarray(0, 16 * 1024).includes(ASF_VIDEO_MEDIA) ? 'wmv' : 'wma';
  if (startsWith(b, [0x00, 0x00, 0x01, 0xba]) && b.length >= 14) {
    // MPEG-2 packs start with the bits 01, MPEG-1's with 0010; a DVD's first pack carries a
    // navigation packet (private stream 2) right after its system header.
    if (((b[4] ?? 0) & 0xc0) !== 0x40) return 'mpg';
    const sys = 14 + ((b[13] ?? 0) & 7);
    const nav = startsWith(b, [0x00, 0x00, 0x01, 0xbb], sys) && b.length >= sys + 6 ? sys + 6 + b.readUInt16BE(sys + 4) : -1;
    return nav > 0 && startsWith(b, [0x00, 0x00, 0x01, 0xbf], nav) ? 'vob' : 'mpg';
  }
  // Transport streams: a 0x47 sync byte every 188 bytes; BDAV (m2ts) puts a 4-byte timestamp before each.
  const every = (first: number, step: number): boolean => b.length > first + step && [0, 1, 2].every((i) => first + i * step >= b.length || b[first + i * step] === 0x47);
  if (every(0, 188)) return 'ts';
  if (every(4, 192)) return 'm2ts';
  // AC-3 sync word; the bitstream id (bsid) is at most 8 for AC-3, 11–16 for E-AC-3.
  if (startsWith(b, [0x0b, 0x77]) && b.length >= 6) {
    const bsid = (b[5] ?? 0) >> 3;
    if (bsid <= 8 && (b[4] ?? 0) >> 6 !== 3) return 'ac3';
    if (bsid >= 11 && bsid <= 16) return 'eac3';
  }
  if (startsWith(b, 'TTA1')) return 'tta';
  if (startsWith(b, 'YUV4MPEG2 ')) return 'y4m';
  // SMPTE universal label of a partition pack (the header partition opens the file).
  if (startsWith(b, [0x06, 0x0e, 0x2b, 0x34, 0x02, 0x05, 0x01, 0x01, 0x0d, 0x01, 0x02, 0x01])) return 'mxf';
  // DV DIF: a header block (section type 0, id 1F 07 00), then the first subcode block (3F 07 00).
  if (startsWith(b, [0x1f, 0x07, 0x00]) && startsWith(b, [0x3f, 0x07, 0x00], 80)) return 'dv';
  if (startsWith(b, 'nut/multimedia container\0')) return 'nut';
  return null;
}

/**
 * Ogg by the first packets of its opening (BOS) pages: any Theora stream makes it video
 * (ogv); otherwise the first stream's codec: Opus, FLAC (oga), Speex (spx) or Vorbis (ogg).
 */
function oggKind(b: Buffer): string {
  const heads: Buffer[] = [];
  let o = 0;
  while (startsWith(b, 'OggS', o) && b.length > o + 27 && ((b[o + 5] ?? 0) & 0x02) !== 0) {
    const segments = b[o + 26] ?? 0;
    let size = 0;
    for (let i = 0; i < segments; i++) size += b[o + 27 + i] ?? 0;
    const data = o + 27 + segments;
    heads.push(b.subarray(data, data + 8));
    o = data + size;
  }
  const is = (h: Buffer | undefined, sig: string): boolean => h !== undefined && startsWith(h, sig);
  if (heads.some((h) => is(h, '\x80theora'))) return 'ogv';
  if (is(heads[0], 'OpusHead')) return 'opus';
  if (is(heads[0], '\x7fFLAC')) return 'oga';
  if (is(heads[0], 'Speex   ')) return 'spx';
  return 'ogg';
}

const TRACK_AUDIO = 2;
/** EBML element ids walked to the track types. */
const EBML = { segment: 0x18538067, tracks: 0x1654ae6b, trackEntry: 0xae, trackType: 0x83, cluster: 0x1f43b675 } as const;

/** An EBML variable-length integer at `o`: its value (id: with the length marker) and length. */
function vint(b: Buffer, o: number, isId: boolean): { value: number; length: number } | null {
  const first = b[o];
  if (first === undefined || first === 0) return null;
  let length = 1;
  while (!(first & (0x80 >> (length - 1)))) length += 1;
  if (o + length > b.length) return null;
  let value = isId ? first : first & (0xff >> length);
  for (let i = 1; i < length; i++) value = value * 256 + (b[o + i] ?? 0);
  return { value, length };
}

/**
 * The TrackType values (1 video, 2 audio, 17 subtitles …) of a Matroska file's Tracks
 * element, as far as the head holds it; empty when it is not there (then it is taken as video).
 */
function matroskaTrackTypes(b: Buffer): number[] {
  const types: number[] = [];
  // Walks the children of [start, end): into the Segment, Tracks and each TrackEntry.
  const walk = (start: number, end: number, depth: number): void => {
    let o = start;
    while (o < Math.min(end, b.length) && depth < 4) {
      const id = vint(b, o, true);
      const size = id && vint(b, o + id.length, false);
      if (!id || !size) return;
      const data = o + id.length + size.length;
      // An all-ones size is "unknown" (live streams): its element runs to its parent's end.
      const unknown = size.value === 2 ** (7 * size.length) - 1;
      const stop = unknown ? end : data + size.value;
      if (id.value === EBML.cluster) return;
      if (id.value === EBML.segment || id.value === EBML.tracks || id.value === EBML.trackEntry) walk(data, stop, depth + 1);
      else if (id.value === EBML.trackType && size.value === 1) types.push(b[data] ?? 0);
      o = stop;
    }
  };
  walk(0, b.length, 0);
  return types;
}
