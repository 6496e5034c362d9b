/**
 * Independent checks of a conversion's output, by target format: libmagic (`file`),
 * ImageMagick's `identify` (system policy, not ours), `ffprobe`, `pdfinfo`/`pdftotext`,
 * `unzip -t`, `xmllint`, Python's csv module, JSON.parse; never only our own detector. For
 * text-bearing targets of a source with a known marker word, the marker must survive.
 */
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { runTool as run } from '../tools.js';
import { canValidateExtra, judgeExtra } from './validate-extra.js';
import { hasRasterReferee, rasterSides } from './validate-raster.js';
import { BINARY_BY_NAME } from '../../formats/detect.js';

/** A check's verdict: what the tool said, or why the output is rejected. */
export type Verdict = { ok: true; check: string } | { ok: false; reason: string };

const mimeOf = async (path: string): Promise<string> => (await run('/usr/bin/file', ['-b', '--mime-type', path])).stdout.toString('utf8').trim();
const describe = async (path: string): Promise<string> => (await run('/usr/bin/file', ['-b', path])).stdout.toString('utf8').trim();

/** libmagic's MIME type per target, where libmagic knows the format. */
const FILE_MIME: Readonly<Record<string, readonly string[]>> = {
  png: ['image/png'], jpg: ['image/jpeg'], webp: ['image/webp'], gif: ['image/gif'], tiff: ['image/tiff'], avif: ['image/avif'],
  // libmagic 5.44 names an APNG image/png (a still source makes a one-frame PNG).
  apng: ['image/png', 'image/apng'],
  bmp: ['image/bmp', 'image/x-ms-bmp'], ico: ['image/vnd.microsoft.icon', 'image/x-icon'], ppm: ['image/x-portable-pixmap'],
  pgm: ['image/x-portable-greymap'], pbm: ['image/x-portable-bitmap'], pam: ['image/x-portable-arbitrarymap'], fits: ['image/fits'],
  jp2: ['image/jp2'], j2k: ['image/x-jp2-codestream'], miff: ['image/x-miff'], mng: ['video/x-mng'], jng: ['video/x-jng'],
  pcx: ['image/x-pcx'], tga: ['image/x-tga'], xpm: ['image/x-xpixmap'], xwd: ['image/x-xwindowdump'], dpx: ['image/x-dpx'],
  psd: ['image/vnd.adobe.photoshop'], psb: ['image/vnd.adobe.photoshop'], dcx: ['image/x-dcx'], g3: ['image/g3fax'],
  doc: ['application/msword'], xls: ['application/vnd.ms-excel'], ppt: ['application/vnd.ms-powerpoint'], rtf: ['text/rtf'],
  html: ['text/html'],
};
/** `identify`'s format name per image target (decodes the picture). */
const MAGICK: Readonly<Record<string, readonly string[]>> = {
  png: ['PNG'], apng: ['PNG'], jpg: ['JPEG'], webp: ['WEBP'], gif: ['GIF'], tiff: ['TIFF'], bmp: ['BMP', 'BMP3'], ico: ['ICO'], ppm: ['PPM', 'PNM'],
  pgm: ['PGM', 'PNM'], pbm: ['PBM', 'PNM'], pam: ['PAM'], pfm: ['PFM'], psd: ['PSD'], psb: ['PSB', 'PSD'], dds: ['DDS'], fits: ['FITS'],
  ras: ['SUN'], sgi: ['SGI'], xbm: ['XBM'], xpm: ['XPM'], pcx: ['PCX'], tga: ['TGA'], jp2: ['JP2'], j2k: ['J2K', 'JPC'], hdr: ['HDR'],
  miff: ['MIFF'], wbmp: ['WBMP'], dpx: ['DPX'], xwd: ['XWD'], viff: ['VIFF'], mng: ['MNG'], jng: ['JNG'], vicar: ['VICAR'],
  pict: ['PICT'], otb: ['OTB'], mtv: ['MTV'], sixel: ['SIXEL'], pgx: ['PGX'], hrz: ['HRZ'], cin: ['CIN'], dcx: ['DCX'],
  cals: ['CALS'], avs: ['AVS'], g3: ['G3', 'FAX'], jbig: ['JBIG'], v: ['VIPS'], rgf: ['RGF'],
};
/** ImageMagick's coder where the extension is not one of its names. */
const IDENTIFY_CODER: Readonly<Record<string, string>> = { v: 'vips' };
/**
 * ffprobe's demuxer name (one of) and the stream codec it must hold, per media target; where
 * containers share a demuxer, the ISO brand (`major_brand`) or the codec tells them apart.
 * Audio targets must hold no video stream (mka is not mkv, wma not wmv).
 */
interface MediaCheck {
  readonly format: string;
  readonly stream: 'audio' | 'video';
  readonly codec?: string;
  readonly brand?: RegExp;
}
const MEDIA: Readonly<Record<string, MediaCheck>> = {
  wav: { format: 'wav', stream: 'audio' }, mp3: { format: 'mp3', stream: 'audio', codec: 'mp3' }, flac: { format: 'flac', stream: 'audio', codec: 'flac' },
  ogg: { format: 'ogg', stream: 'audio', codec: 'vorbis' }, opus: { format: 'ogg', stream: 'audio', codec: 'opus' }, m4a: { format: 'mp4', stream: 'audio', codec: 'aac' },
  mp4: { format: 'mp4', stream: 'video' }, webm: { format: 'webm', stream: 'video' }, mkv: { format: 'matroska', stream: 'video' },
  mov: { format: 'mov', stream: 'video' }, avi: { format: 'avi', stream: 'video' },
  ac3: { format: 'ac3', stream: 'audio', codec: 'ac3' }, eac3: { format: 'eac3', stream: 'audio', codec: 'eac3' },
  mp2: { format: 'mp3', stream: 'audio', codec: 'mp2' }, aac: { format: 'aac', stream: 'audio', codec: 'aac' },
  wma: { format: 'asf', stream: 'audio', codec: 'wmav2' }, mka: { format: 'matroska', stream: 'audio' },
  oga: { format: 'ogg', stream: 'audio', codec: 'flac' }, tta: { format: 'tta', stream: 'audio', codec: 'tta' }, spx: { format: 'ogg', stream: 'audio', codec: 'speex' },
  flv: { format: 'flv', stream: 'video' }, f4v: { format: 'mp4', stream: 'video', brand: /^f4v $/ }, m4v: { format: 'mp4', stream: 'video', brand: /^M4V/ },
  '3gp': { format: '3gp', stream: 'video', brand: /^3g[pegrs]/ }, '3g2': { format: '3g2', stream: 'video', brand: /^3g2/ },
  wmv: { format: 'asf', stream: 'video' }, asf: { format: 'asf', stream: 'video' },
  mpg: { format: 'mpeg', stream: 'video', codec: 'mpeg1video' }, vob: { format: 'mpeg', stream: 'video', codec: 'mpeg2video' },
  ts: { format: 'mpegts', stream: 'video' }, m2ts: { format: 'mpegts', stream: 'video' },
  mxf: { format: 'mxf', stream: 'video' }, ogv: { format: 'ogg', stream: 'video', codec: 'theora' }, dv: { format: 'dv', stream: 'video', codec: 'dvvideo' },
  nut: { format: 'nut', stream: 'video' }, y4m: { format: 'yuv4mpegpipe', stream: 'video', codec: 'rawvideo' },
};
const OOXML: Readonly<Record<string, string>> = {
  docx: 'wordprocessingml.document.main', xlsx: 'spreadsheetml.sheet.main', pptx: 'presentationml.presentation.main',
};
const ODF: Readonly<Record<string, string>> = {
  odt: 'application/vnd.oasis.opendocument.text', ods: 'application/vnd.oasis.opendocument.spreadsheet',
  odp: 'application/vnd.oasis.opendocument.presentation', epub: 'application/epub+zip',
};
/** XML targets: root element (local name) that xmllint must find in a well-formed file. */
const XML_ROOT: Readonly<Record<string, readonly string[]>> = {
  dbk: ['article', 'book'], opml: ['opml'], jats: ['article'], tei: ['TEI'], icml: ['Document'], fb2: ['FictionBook'],
  fodt: ['document'], fods: ['document'], fodp: ['document'],
  // hOCR is XHTML (tesseract's names its OCR system in a meta element).
  hocr: ['html'],
};
/** Plain-text targets: any text MIME libmagic gives, valid UTF-8. */
const TEXT = new Set(['txt', 'md', 'rst', 'org', 'tex', 'muse', 'textile', 'wiki', 'dokuwiki', 'jira', 'man', 'adoc', 'texi', 'ms', 'haddock', 'xwiki']);
/** Markup targets with a structural check in validate-extra.ts whose text is read for the marker. */
const TEXT_EXTRA = new Set(['zimwiki', 'mkiv', 'bib']);
/** calibre outputs libmagic does not know: read back by calibre's own reader (a different program). */
const CALIBRE_READBACK = new Set(['rb', 'tcr', 'snb']);
/** E-books libmagic describes: a pattern its description must match. */
const EBOOK_MAGIC: Readonly<Record<string, RegExp>> = {
  mobi: /Mobipocket E-book.*version [1-7]\b/, azw3: /Mobipocket E-book.*version 8\b/, pdb: /PalmDOC|AportisDoc|eReader/,
  lit: /Microsoft Reader eBook/, lrf: /BBeB ebook/,
};
/** Targets where text is compressed and no independent tool extracts it: the marker is not looked for. */
const NO_TEXT_EXTRACT = new Set(['mobi', 'azw3', 'pdb', 'lit', 'lrf']);
const TEXT_BEARING_FAMILIES = new Set(['document', 'spreadsheet', 'presentation', 'markup', 'ebook', 'text', 'pdf']);

/** The formats this module can judge; a pair whose target is not here stays unproven. */
export function canValidate(to: string): boolean {
  return to === 'pdf' || to === 'csv' || to === 'ipynb' || to in FILE_MIME || to in MAGICK || to in MEDIA || to in OOXML || to in ODF
    || to in XML_ROOT || TEXT.has(to) || CALIBRE_READBACK.has(to) || to in EBOOK_MAGIC || to === 'htmlz' || to === 'txtz' || canValidateExtra(to);
}

/**
 * Judges `path` as a `to` file. `marker`: a word of the source document that must survive
 * into text-bearing targets (`family` is the target's family).
 */
export async function validate(path: string, to: string, family: string, marker?: string): Promise<Verdict> {
  try {
    const { size } = await stat(path);
    if (size === 0 && to !== 'txt') return { ok: false, reason: 'empty output' };
    const check = await judge(path, to);
    if (marker && TEXT_BEARING_FAMILIES.has(family) && !NO_TEXT_EXTRACT.has(to)) {
      const text = await extractText(path, to);
      if (text !== undefined && !text.toLowerCase().includes(marker.toLowerCase())) {
        return { ok: false, reason: `${check}; marker "${marker}" lost` };
      }
    }
    return { ok: true, check };
  } catch (e) {
    return { ok: false, reason: (e as Error).message.slice(0, 300) };
  }
}

async function judge(path: string, to: string): Promise<string> {
  if (to === 'pdf') {
    const r = await run('/usr/bin/pdfinfo', [path]);
    const pages = Number(/^Pages:\s+(\d+)/m.exec(r.stdout.toString('utf8'))?.[1] ?? 0);
    if (r.code !== 0 || pages < 1) throw new Error(`pdfinfo: ${r.stderr.trim().split('\n').pop() ?? 'no pages'}`);
    return `pdfinfo: ${pages} page${pages > 1 ? 's' : ''}`;
  }
  if (to in MEDIA) {
    const want = MEDIA[to] as MediaCheck;
    const r = await run('/usr/bin/ffprobe', ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', path]);
    const info = JSON.parse(r.stdout.toString('utf8') || '{}') as {
      format?: { format_name?: string; duration?: string; tags?: { major_brand?: string } };
      streams?: { codec_type?: string; codec_name?: string }[];
    };
    const names = (info.format?.format_name ?? '').split(',');
    const stream = info.streams?.find((s) => s.codec_type === want.stream && (!want.codec || s.codec_name === want.codec));
    const brand = info.format?.tags?.major_brand ?? '';
    const videoInAudio = want.stream === 'audio' && info.streams?.some((s) => s.codec_type === 'video');
    if (r.code !== 0 || !names.includes(want.format) || !stream || !(Number(info.format?.duration) > 0) || videoInAudio || (want.brand && !want.brand.test(brand))) {
      throw new Error(`ffprobe: ${info.format?.format_name ?? 'unreadable'} ${brand} ${info.streams?.map((s) => s.codec_name).join('+') ?? ''}`);
    }
    // BDAV: every 188-byte packet behind a 4-byte timestamp (ffprobe reads both kinds of TS alike).
    if (to === 'm2ts' || to === 'ts') {
      const head = (await readFile(path)).subarray(0, 192 * 3);
      const at = to === 'm2ts' ? [4, 196, 388] : [0, 188, 376];
      if (!at.every((o) => o >= head.length || head[o] === 0x47)) throw new Error(`not ${to === 'm2ts' ? '192' : '188'}-byte packets`);
    }
    return `ffprobe: ${info.format?.format_name}${brand ? ` (${brand.trim()})` : ''} ${stream.codec_name}`;
  }
  if (to in MAGICK) {
    const mime = await mimeOf(path);
    // Decodes the picture (no -ping). Formats without magic are read with their coder named:
    // ImageMagick's own sniffing would win over the extension (an AVS picture 435 pixels wide
    // starts 00 00 01 B3, an MPEG sequence header).
    const coder = IDENTIFY_CODER[to] ?? (BINARY_BY_NAME.has(to) ? to : undefined);
    const r = await run('/usr/bin/identify', ['-format', '%m %w %h\n', `${coder ? `${coder}:` : ''}${path}[0]`]);
    const [format = '', w, h] = r.stdout.toString('utf8').trim().split(/\s+/);
    const byMagick = r.code === 0 && (MAGICK[to] ?? []).includes(format) && Number(w) > 0 && Number(h) > 0;
    const byFile = (FILE_MIME[to] ?? []).includes(mime);
    if (FILE_MIME[to] && mime !== 'application/octet-stream' && !byFile) throw new Error(`file: ${mime}`);
    if (!byMagick && !(byFile && to === 'avif')) throw new Error(`identify: ${format || r.stderr.trim().split('\n')[0]}`);
    // ImageMagick reads a large-document Photoshop file with its PSD coder: libmagic tells them apart.
    if (to === 'psb' && !(await describe(path)).includes('(PSB)')) throw new Error(`file: ${await describe(path)}`);
    if (hasRasterReferee(to)) {
      // A second decoder (or a header parse) must agree on the sides; a fax line is always
      // 1728 pixels to g3topbm, whatever width ImageMagick reads it back at, so only the height counts.
      const { sides, by } = await rasterSides(path, to);
      if (sides.height !== Number(h) || (to !== 'g3' && sides.width !== Number(w))) throw new Error(`${by}: ${sides.width}x${sides.height}, identify: ${w}x${h}`);
      return `identify: ${format} ${w}x${h}; ${by}: ${sides.width}x${sides.height}`;
    }
    return byFile ? `file: ${mime}; identify: ${format} ${w}x${h}` : `identify: ${format} ${w}x${h}`;
  }
  if (to === 'avif') {
    const mime = await mimeOf(path);
    if (mime !== 'image/avif') throw new Error(`file: ${mime}`);
    return `file: ${mime}`;
  }
  if (to in OOXML || to in ODF || to === 'htmlz' || to === 'txtz') {
    const t = await run('/usr/bin/unzip', ['-tqq', path]);
    if (t.code !== 0) throw new Error(`unzip -t: ${t.stdout.toString('utf8').trim().slice(0, 200)}`);
    if (to in OOXML) {
      const types = (await run('/usr/bin/unzip', ['-p', path, '[[]Content_Types].xml'])).stdout.toString('utf8');
      if (!types.includes(OOXML[to] as string)) throw new Error('unzip: no main part of the right type');
      return `unzip -t: ok; ${OOXML[to]}`;
    }
    if (to in ODF) {
      const mimetype = (await run('/usr/bin/unzip', ['-p', path, 'mimetype'])).stdout.toString('utf8').trim();
      if (mimetype !== ODF[to]) throw new Error(`unzip: mimetype ${mimetype}`);
      return `unzip -t: ok; mimetype ${mimetype}`;
    }
    const list = (await run('/usr/bin/unzip', ['-Z1', path])).stdout.toString('utf8').split('\n');
    const index = to === 'htmlz' ? 'index.html' : 'index.txt';
    if (!list.includes(index) || !list.includes('metadata.opf')) throw new Error(`unzip: no ${index}/metadata.opf`);
    return `unzip -t: ok; ${index} + metadata.opf`;
  }
  if (to in XML_ROOT) {
    const r = await run('/usr/bin/xmllint', ['--noout', '--nonet', path]);
    if (r.code !== 0) throw new Error(`xmllint: ${r.stderr.trim().split('\n')[0]}`);
    const root = (await run('/usr/bin/xmllint', ['--nonet', '--xpath', 'local-name(/*)', path])).stdout.toString('utf8').trim();
    if (!(XML_ROOT[to] ?? []).includes(root)) throw new Error(`xmllint: root ${root}`);
    return `xmllint: well-formed, <${root}>`;
  }
  if (to in FILE_MIME) {
    const mime = await mimeOf(path);
    if (!(FILE_MIME[to] ?? []).includes(mime)) throw new Error(`file: ${mime}`);
    return `file: ${mime}`;
  }
  if (to in EBOOK_MAGIC) {
    const d = await describe(path);
    if (!(EBOOK_MAGIC[to] as RegExp).test(d)) throw new Error(`file: ${d}`);
    return `file: ${d.slice(0, 80)}`;
  }
  if (CALIBRE_READBACK.has(to)) {
    const text = await calibreText(path, to);
    if (!text.trim()) throw new Error('calibre read-back: no text');
    return `calibre read-back: ${text.trim().length} chars`;
  }
  if (to === 'ipynb') {
    const nb = JSON.parse(await readFile(path, 'utf8')) as { nbformat?: unknown; cells?: unknown };
    if (typeof nb.nbformat !== 'number' || !Array.isArray(nb.cells)) throw new Error('JSON.parse: not a notebook');
    return `JSON.parse: nbformat ${nb.nbformat}, ${nb.cells.length} cells`;
  }
  if (to === 'csv') {
    const r = await run('/usr/bin/python3', ['-c', 'import csv,sys\nrows=list(csv.reader(open(sys.argv[1],encoding="utf-8",newline="")))\nassert rows, "no rows"\nprint(len(rows), max(len(r) for r in rows))', path]);
    if (r.code !== 0) throw new Error(`python csv: ${r.stderr.trim().split('\n').pop()}`);
    return `python csv: ${r.stdout.toString('utf8').trim().replace(' ', ' rows, ')} columns`;
  }
  if (TEXT.has(to)) {
    const mime = await mimeOf(path);
    const buf = await readFile(path);
    new TextDecoder('utf-8', { fatal: true }).decode(buf);
    if (buf.length && !mime.startsWith('text/')) {
      // A short text can look like a magic number to libmagic ("P1\nT2" is a PBM header, a
      // notebook's text lines JSON): its encoding tests alone (`-e soft` skips the magic
      // file, `-e json` the JSON test) must still call it text.
      const soft = (await run('/usr/bin/file', ['-b', '--mime-type', '-e', 'soft', '-e', 'json', path])).stdout.toString('utf8').trim();
      if (!soft.startsWith('text/')) throw new Error(`file: ${mime}`);
      return `file: ${mime} by its magic tests, ${soft} by its encoding; UTF-8`;
    }
    return `file: ${mime || 'empty'}; UTF-8`;
  }
  if (canValidateExtra(to)) return judgeExtra(path, to);
  throw new Error(`no independent check for ${to}`);
}

/** calibre's reader, outside our sandbox, as a referee for formats nothing else reads. */
async function calibreText(path: string, ext: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'matrix-readback-'));
  try {
    const input = join(dir, `in.${ext}`);
    await run('/bin/cp', [path, input]);
    const out = join(dir, 'out.txt');
    const r = await run('/usr/bin/ebook-convert', [input, out], 120_000, dir);
    if (r.code !== 0) throw new Error(`calibre read-back: ${r.stderr.trim().split('\n').pop()}`);
    return await readFile(out, 'utf8');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The text of an output, by an independent extractor; undefined where none applies. */
async function extractText(path: string, to: string): Promise<string | undefined> {
  if (to === 'pdf') return (await run('/usr/bin/pdftotext', ['-q', path, '-'])).stdout.toString('utf8');
  if (to in OOXML || to in ODF || to === 'htmlz' || to === 'txtz') return (await run('/usr/bin/unzip', ['-p', path])).stdout.toString('utf8');
  if (CALIBRE_READBACK.has(to)) return calibreText(path, to);
  if (to === 'doc' || to === 'xls' || to === 'ppt') {
    const buf = await readFile(path);
    return `${buf.toString('latin1')}\n${buf.toString('utf16le')}`;
  }
  if (to === 'rtf' || to === 'html' || to === 'csv' || to === 'ipynb' || to in XML_ROOT || TEXT.has(to) || TEXT_EXTRA.has(to)) return readFile(path, 'utf8');
  return undefined;
}
