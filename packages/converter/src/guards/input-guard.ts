/**
 * Bomb checks run before any engine sees the whole input (issue #13): each one reads only
 * headers, through the engines' own probe tools or a well-kept library, in the sandbox:
 *
 * - images: pixel count from the header (libvips through sharp, else ImageMagick `identify
 *   -ping` under our policy), never decoding the pixels;
 * - PDF: `qpdf --requires-password` (an encrypted PDF without its password is
 *   `password_required`) and the page count (`qpdf --show-npages`);
 * - audio and video: the duration from `ffprobe`, with the demuxer forced and only the
 *   `file` protocol allowed (as the engine reads it);
 * - XML sources (flat ODF, DocBook, OPML, FB2, TEI, SVG, …): the prolog; a document whose
 *   DOCTYPE declares internal entities is rewritten without them (`xml-entities.ts`: expanded
 *   under {@link InputLimits.maxEntityExpansion}, external and parameter entities refused) and
 *   the engines read that copy;
 * - zip containers (docx, xlsx, xlsb, pptx, odt, ods, odp, epub, htmlz, txtz): the central directory through
 *   yauzl — entry count, declared expansion and ratio — and the head of every XML part for
 *   a DTD that declares entities (OOXML, ODF and EPUB never need one; entity expansion and
 *   external entities both start there);
 * - archives (zip, 7z, tar.*, cpio, iso): their listing, in `archive-guard.ts`.
 *
 * A file over a limit fails with `conversion_failed` and a message naming the limit and
 * the measured value; a broken header is left to the engine (it fails with its own clear
 * error) unless noted.
 */
import sharp from 'sharp';
import yauzl from 'yauzl';
import { chmod, open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ConversionError, failed } from '../errors.js';
import { runSandboxed } from '../exec/exec.js';
import { packageFile, jobLimits, type JobContext } from '../engines/engine.js';
import { FFMPEG_DEMUXERS } from '../engines/ffmpeg.engine.js';
import { checkQoiBounds, qoiHeader, QoiError, QOI_HEADER_BYTES } from '../engines/qoi/codec.js';
import { formatInfo } from '../formats/catalogue.js';
import { inspectArchive } from './archive-guard.js';
import { decodeXml, MAX_REWRITE_BYTES, parseProlog, PROLOG_BYTES, sniffEncoding } from './xml-entities.js';
import { expandInWorker } from './xml-entities-run.js';

/** What a bomb check allows. */
export interface InputLimits {
  /** Decoded pixels (width × height × frames); default 100 million. */
  readonly maxInputPixels: number;
  /** PDF pages; default 5,000. */
  readonly maxPages: number;
  /** Audio and video length in seconds; default 4 hours. */
  readonly maxMediaSeconds: number;
  /** Entries of a zip container; default 10,000. */
  readonly maxArchiveEntries: number;
  /** Declared uncompressed size of a zip container; default 1 GiB. */
  readonly maxArchiveBytes: number;
  /** Declared uncompressed size ÷ file size, checked past 50 MiB expanded; default 100. */
  readonly maxArchiveRatio: number;
  /** Files of an archive converted one by one (option `batch`); default 100. */
  readonly maxBatchFiles: number;
  /**
   * Characters an XML source's internal entities may expand to, in total (each expansion
   * counts its replacement text, nested expansions included); default 10 million.
   */
  readonly maxEntityExpansion: number;
}

export const DEFAULT_INPUT_LIMITS: InputLimits = {
  maxInputPixels: 100_000_000,
  maxPages: 5_000,
  maxMediaSeconds: 4 * 3600,
  maxArchiveEntries: 10_000,
  maxArchiveBytes: 1024 ** 3,
  maxArchiveRatio: 100,
  maxBatchFiles: 100,
  maxEntityExpansion: 10_000_000,
};

/** What the checks measured (for logs and tests). */
export interface InputFacts {
  pages?: number;
  width?: number;
  height?: number;
  frames?: number;
  duration_s?: number;
  entries?: number;
  expanded_bytes?: number;
  /** Archives: the regular files among the entries (the archiver's own metadata left out), and the links. */
  files?: number;
  links?: number;
  /** Entity references an XML source's pre-pass expanded (nested ones included). */
  entity_references?: number;
}

/** What {@link inspectInput} answers: the facts, and the file the engines must read. */
export interface Inspected {
  readonly facts: InputFacts;
  /** The input itself, or the entity-free copy the XML pre-pass wrote beside it. */
  readonly input: string;
}

const ZIP_CONTAINERS = new Set(['docx', 'xlsx', 'xlsb', 'pptx', 'odt', 'ods', 'odp', 'epub', 'htmlz', 'txtz']);
/** XML sources, read whole by their engine's XML parser: internal entities expanded by the pre-pass, the rest refused. */
const XML_SOURCES = new Set(['fodt', 'fods', 'fodp', 'dbk', 'opml', 'fb2', 'tei', 'svg', 'dae', 'xml', 'smi']);
/** The demuxer ffprobe is forced to: the engine's own table, so the guard reads a file as FFmpeg will. */
const DEMUXER = FFMPEG_DEMUXERS;
/** Bytes of each zip XML part read for a DTD; declarations come before the root element. */
const XML_HEAD_BYTES = 16 * 1024;
const MAX_XML_PARTS_READ = 2_000;

/**
 * Checks `path` (a file in the job's folder, readable by the sandbox user) of detected
 * format `ext` against `limits`; throws a {@link ConversionError} when it is over one.
 * Answers what it measured and the file the engines must read instead of `path` (an XML
 * source with internal entities is rewritten without them into the job's folder).
 */
export async function inspectInput(path: string, ext: string, limits: InputLimits, job: JobContext): Promise<Inspected> {
  if (XML_SOURCES.has(ext)) return inspectXml(path, ext, limits, job);
  return { facts: await inspectFacts(path, ext, limits, job), input: path };
}

async function inspectFacts(path: string, ext: string, limits: InputLimits, job: JobContext): Promise<InputFacts> {
  const family = formatInfo(ext)?.family;
  if (ext === 'pdf') return inspectPdf(path, limits, job);
  if (family === 'image') return inspectImage(path, ext, limits, job);
  if (family === 'audio' || family === 'video') return inspectMedia(path, ext, limits, job);
  if (ZIP_CONTAINERS.has(ext)) return inspectZip(path, ext, limits);
  if (family === 'archive') return inspectArchive(path, ext, limits, job);
  return {};
}

/**
 * The XML pre-pass (issue 21): the prolog is read from the first MiB (on the event loop:
 * bounded and linear). No internal entities declared: the file goes on as it is
 * (references to undeclared names are the engine's to refuse, as before). Internal entities
 * declared: the whole document is expanded in a worker thread and written, entity-free and
 * in UTF-8, beside the input, and the engines read that copy.
 */
async function inspectXml(path: string, ext: string, limits: InputLimits, job: JobContext): Promise<Inspected> {
  const fh = await open(path, 'r');
  let size: number;
  let head: Buffer;
  try {
    size = (await fh.stat()).size;
    head = Buffer.alloc(Math.min(size, PROLOG_BYTES));
    head = head.subarray(0, (await fh.read(head, 0, head.length, 0)).bytesRead);
  } finally {
    await fh.close();
  }
  const enc = sniffEncoding(head);
  const headText = decodeXml(head, enc, false);
  const parsed = parseProlog(headText, ext);
  if (parsed.kind === 'incomplete' && size > head.length) {
    // Declarations could hide past the head (behind a long comment): none is read unseen.
    throw failed(`The ${ext} file's prolog (its XML declaration, comments and DOCTYPE) runs past its first ${PROLOG_BYTES / 1024 ** 2} MiB; such files are refused.`);
  }
  if (parsed.kind !== 'prolog') {
    // A prolog we cannot read (broken, or cut short): the engine's parser fails on it, but
    // may read declarations before it fails, so entities there stay refused, as before issue 21.
    if (/<!ENTITY/i.test(headText)) {
      throw failed(`The ${ext} file declares XML entities in a DOCTYPE that cannot be read; such files are refused.`);
    }
    return { facts: {}, input: path };
  }
  if (!parsed.prolog.doctype?.entities.size) return { facts: {}, input: path };
  if (size > MAX_REWRITE_BYTES) {
    throw failed(`The ${ext} file declares XML entities and is ${size} bytes; entities are expanded in files of at most ${MAX_REWRITE_BYTES} bytes.`);
  }
  if (!enc.label) throw failed(`The ${ext} file declares XML entities and is written in ${enc.declared}, an encoding the converter cannot rewrite.`);
  const out = join(job.dir, `source-expanded.${ext}`);
  const references = await expandInWorker({ input: path, output: out, ext, encoding: enc, maxExpansion: limits.maxEntityExpansion }, job);
  // Readable by the sandbox user whatever the umask, as prepare()'s copies are.
  await chmod(out, 0o444);
  return { facts: { entity_references: references }, input: out };
}

async function probe(cmd: string, args: string[], job: JobContext, env?: Record<string, string>) {
  return runSandboxed(cmd, args, {
    cwd: job.dir,
    timeoutMs: Math.min(job.timeoutMs, 30_000),
    ...jobLimits(job, 512 * 1024 ** 2),
    maxStdoutBytes: 1024 * 1024,
    ...(env ? { env } : {}),
    ...(env?.MAGICK_CONFIGURE_PATH ? { readOnly: [env.MAGICK_CONFIGURE_PATH] } : {}),
    ...(job.signal ? { signal: job.signal } : {}),
  });
}

async function inspectPdf(path: string, limits: InputLimits, job: JobContext): Promise<InputFacts> {
  // Exit 0: a password is needed to open it; 2: not encrypted; 3: encrypted, opens without one.
  const enc = await probe('/usr/bin/qpdf', ['--requires-password', '--', path], job);
  if (enc.exitCode === 0) {
    throw new ConversionError('password_required', 'The PDF is encrypted and needs a password to open; send it without the password protection.');
  }
  const r = await probe('/usr/bin/qpdf', ['--show-npages', '--', path], job);
  const pages = Number(r.stdout.toString('utf8').trim());
  if ((r.exitCode !== 0 && r.exitCode !== 3) || !Number.isInteger(pages) || pages < 1) {
    throw failed('The PDF could not be read: it is damaged or not a PDF.', `qpdf --show-npages exit ${r.exitCode}: ${r.stderr.slice(-300)}`);
  }
  if (pages > limits.maxPages) {
    throw failed(`The PDF has ${pages} pages, over the ${limits.maxPages} pages a conversion accepts.`);
  }
  return { pages };
}

async function inspectImage(path: string, ext: string, limits: InputLimits, job: JobContext): Promise<InputFacts> {
  if (ext === 'qoi') return inspectQoi(path, limits);
  let width: number | undefined;
  let height: number | undefined;
  let frames = 1;
  try {
    // Header only: sharp's metadata() does not decode pixels (and applies no pixel limit).
    const m = await sharp(path, { limitInputPixels: false }).metadata();
    width = m.width;
    height = m.height;
    frames = m.pages ?? 1;
  } catch {
    // not a libvips format (ico, bmp, ppm, psd): ask ImageMagick, with our policy, ping only
    const policy = dirname(packageFile('imagemagick/policy.xml'));
    // Raw group 3 fax has no header: a ping reports the A4 page ImageMagick assumes (2592×3508),
    // so it is decoded (bilevel, at most that page, under the policy's limits) for its real lines.
    const ping = ext === 'g3' ? [] : ['-ping'];
    const r = await probe('/usr/bin/identify', [...ping, '-format', '%w %h\n', path], job, { MAGICK_CONFIGURE_PATH: policy });
    const lines = r.stdout.toString('utf8').trim().split('\n').filter(Boolean);
    const dims = lines.map((l) => l.split(' ').map(Number));
    if (dims.length) {
      width = Math.max(...dims.map((d) => d[0] ?? 0));
      height = Math.max(...dims.map((d) => d[1] ?? 0));
      frames = dims.length;
    } else if (/width or height exceeds limit|exceeds? (the )?(area|width|height)/i.test(r.stderr)) {
      throw failed(`The image is larger than the ${limits.maxInputPixels / 1e6} megapixels a conversion accepts.`, r.stderr.slice(-300));
    }
  }
  if (width && height) {
    const pixels = width * height * Math.max(1, frames);
    if (width * height > limits.maxInputPixels || pixels > limits.maxInputPixels * 10) {
      throw failed(`The image is ${width}×${height} pixels${frames > 1 ? ` × ${frames} frames` : ''}, over the ${limits.maxInputPixels / 1e6} megapixels a conversion accepts.`);
    }
  }
  return { ...(width ? { width } : {}), ...(height ? { height } : {}), frames };
}

/** QOI: neither libvips nor ImageMagick 6 reads it; its 14-byte header has the sides (issue 21). */
async function inspectQoi(path: string, limits: InputLimits): Promise<InputFacts> {
  const fh = await open(path, 'r');
  try {
    const head = Buffer.alloc(QOI_HEADER_BYTES);
    await fh.read(head, 0, QOI_HEADER_BYTES, 0);
    const h = qoiHeader(head);
    checkQoiBounds(h, (await fh.stat()).size, limits.maxInputPixels);
    return { width: h.width, height: h.height, frames: 1 };
  } catch (e) {
    throw e instanceof QoiError ? failed(e.message) : e;
  } finally {
    await fh.close();
  }
}

async function inspectMedia(path: string, ext: string, limits: InputLimits, job: JobContext): Promise<InputFacts> {
  const demuxer = DEMUXER[ext];
  const r = await probe('/usr/bin/ffprobe', ['-v', 'error', '-protocol_whitelist', 'file', ...(demuxer ? ['-f', demuxer] : []), '-print_format', 'json', '-show_format', path], job);
  let duration = Number.NaN;
  try {
    duration = Number((JSON.parse(r.stdout.toString('utf8') || '{}') as { format?: { duration?: string } }).format?.duration);
  } catch {
    // unreadable: the engine fails on it with its own error
  }
  if (Number.isFinite(duration) && duration > limits.maxMediaSeconds) {
    throw failed(`The media file lasts ${Math.round(duration)} s, over the ${limits.maxMediaSeconds} s a conversion accepts.`);
  }
  return Number.isFinite(duration) ? { duration_s: duration } : {};
}

function inspectZip(path: string, ext: string, limits: InputLimits): Promise<InputFacts> {
  return new Promise<InputFacts>((resolve, reject) => {
    // validateEntrySizes: a stream that inflates past its declared size fails instead of
    // going on (a lying central directory cannot hide a bomb from the head reads below).
    yauzl.open(path, { lazyEntries: true, autoClose: true, strictFileNames: false, validateEntrySizes: true }, (err, zip) => {
      if (err || !zip) return reject(failed(`The ${ext} file is damaged: its zip structure cannot be read.`, err?.message));
      let entries = 0;
      let expanded = 0;
      let xmlRead = 0;
      const fail = (e: ConversionError): void => {
        zip.close();
        reject(e);
      };
      zip.on('error', (e: Error) => reject(failed(`The ${ext} file is damaged: its zip structure cannot be read.`, e.message)));
      zip.on('end', () => {
        if (expanded > 50 * 1024 ** 2 && expanded / zip.fileSize > limits.maxArchiveRatio) {
          return reject(failed(`The ${ext} file expands ${Math.round(expanded / zip.fileSize)} times (${expanded} bytes from ${zip.fileSize}), over the ratio of ${limits.maxArchiveRatio} a conversion accepts.`));
        }
        resolve({ entries, expanded_bytes: expanded });
      });
      zip.on('entry', (entry: yauzl.Entry) => {
        entries += 1;
        expanded += entry.uncompressedSize;
        if (entries > limits.maxArchiveEntries) {
          return fail(failed(`The ${ext} file holds more than ${limits.maxArchiveEntries} entries, over what a conversion accepts.`));
        }
        if (expanded > limits.maxArchiveBytes) {
          return fail(failed(`The ${ext} file expands to more than ${limits.maxArchiveBytes} bytes, over what a conversion accepts.`));
        }
        if (!/\.(xml|rels|xhtml|html|opf|ncx|svg)$/i.test(entry.fileName) || xmlRead >= MAX_XML_PARTS_READ) return zip.readEntry();
        xmlRead += 1;
        zip.openReadStream(entry, (e, stream) => {
          if (e || !stream) return fail(failed(`The ${ext} file is damaged: a part cannot be read.`, e?.message));
          let head = Buffer.alloc(0);
          let settled = false;
          const check = (): void => {
            if (settled) return;
            settled = true;
            stream.destroy();
            const text = head.toString('latin1');
            if (/<!ENTITY/i.test(text)) {
              return fail(failed(`The ${ext} file declares XML entities in a part (entity expansion or external entities); such files are refused.`));
            }
            zip.readEntry();
          };
          stream.on('data', (c: Buffer) => {
            head = Buffer.concat([head, c]);
            if (head.length >= XML_HEAD_BYTES) check();
          });
          stream.on('end', check);
          stream.on('error', (se: Error) => {
            if (settled) return;
            settled = true;
            fail(failed(`The ${ext} file is damaged: a part does not match its declared size.`, se.message));
          });
        });
      });
      zip.readEntry();
    });
  });
}
