/**
 * One real sample per source format for the matrix: the fixtures and a few files made by
 * independent tools (ffmpeg, ImageMagick's `convert`, pandoc's CLI) are the roots; every other
 * format is converted from its family's root by the engines themselves (a conversion that
 * fails leaves the format without a sample: its pairs are not tried, hence not listed).
 * Real files from `test/corpus/<ext>/` are a second sample where they exist.
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Converter } from '../../converter.js';
import { formatInfo, type FormatFamily } from '../../formats/catalogue.js';
import { makeExtraSamples } from '../extra-samples.js';
import { fixture, runTool as run } from '../tools.js';
import { validate } from './validate.js';

/** A sample: the file and, for documents, a word of it that must survive conversions. */
export interface Sample {
  readonly path: string;
  readonly marker?: string;
  /** `generated` or `corpus/<file>`. */
  readonly origin: string;
}

/** The marker words of the roots (the words are in the fixtures). */
const MARKERS: Readonly<Record<string, string>> = {
  docx: 'Quarterly', md: 'Quarterly', xlsx: 'widget', pptx: 'Slides', epub: 'Quarterly', t2t: 'Quarterly', creole: 'Quarterly',
  bib: 'Quarterly', pod: 'Quarterly', tikiwiki: 'Quarterly', twiki: 'Quarterly', vimwiki: 'Quarterly', typ: 'Quarterly',
};

/** Which root each family's samples are converted from. */
const FAMILY_ROOT: Readonly<Partial<Record<FormatFamily, string>>> = {
  document: 'docx', spreadsheet: 'xlsx', presentation: 'pptx', image: 'png', audio: 'wav', video: 'mp4', markup: 'md', ebook: 'epub', text: 'docx', pdf: 'docx',
};
/** Exceptions to the family root. */
const PARENT: Readonly<Record<string, string>> = { fodt: 'docx', fods: 'xlsx', fodp: 'pptx' };

/**
 * The corpus file used as a second sample, where the first by name is not a fair one: the
 * comment documents crash the warm LibreOffice instance and take the one-off fallback (~10 s
 * each; `corpus.test.ts` proves them to PDF); a document with pictures is a better test.
 */
const CORPUS_SAMPLE: Readonly<Record<string, string>> = {
  docx: 'python-docx-having-images.docx',
  // The first by name is an edge case of its format's test suite, not a typical file: an
  // animated PNG/WebP, a 5-pixel JPEG, a 180 KB slide background, a 1-bit fax TIFF; a text
  // file is a better PDF or RTF sample than a form or an e-mail body, a table with a header
  // row a better workbook than a sheet holding one number.
  png: 'image-rs-iptc.png', jpg: 'image-rs-progressive-cat.jpg', webp: 'image-rs-lossy-simple-rgb.webp', tiff: 'image-rs-hpredict.tiff',
  odp: 'odfdo-example.odp', ods: 'odfdo-simple_table.ods', pptx: 'python-pptx-test.pptx', xls: 'xlrd-profiles.xls',
  pdf: 'textract-raw_text.pdf', rtf: 'textract-raw_text.rtf',
  // epub.js's fixture is a title page whose pictures are missing; the DocBook HTML page and
  // LaTeXML's blog post reference pictures not in the corpus; the first notebook is a picture.
  epub: 'textract-raw_text.epub', html: 'go-org-tables.html', tex: 'latexml-article.tex', ipynb: 'nbformat-test4.ipynb',
};

/** `packages/converter/test/corpus`. */
export const CORPUS_DIR = fileURLToPath(new URL('../../../test/corpus', import.meta.url));

/**
 * Makes samples for `wanted` source formats in `dir`, with `conv` (a converter over every
 * candidate pair). Returns ext → samples (generated first, then the first corpus file).
 */
export async function makeSamples(conv: Converter, wanted: readonly string[], dir: string, log: (line: string) => void = () => {}): Promise<Map<string, Sample[]>> {
  await mkdir(dir, { recursive: true });
  const made = new Map<string, Sample>();
  const roots = await makeRoots(dir);
  for (const [ext, path] of roots) if (!ext.includes('>')) made.set(ext, { path, origin: 'generated', ...(MARKERS[ext] ? { marker: MARKERS[ext] } : {}) });
  // A cursor is made from an icon (below), not converted.
  const order = [...new Set([...wanted, ...(wanted.includes('cur') ? ['ico'] : [])])].filter((ext) => !made.has(ext) && ext !== 'cur');
  for (const ext of order) {
    const parent = PARENT[ext] ?? FAMILY_ROOT[formatInfo(ext)?.family as FormatFamily];
    const from = parent ? made.get(parent) : undefined;
    if (!parent || !from) continue;
    const out = join(dir, `sample.${ext}`);
    const r = await conv.convert({ inputPath: from.path, sourceFormat: parent, targetFormat: ext, outputPath: out });
    if (!r.ok) {
      log(`no ${ext} sample: ${parent} → ${ext} failed: ${r.error.detail ?? r.error.message}`);
      continue;
    }
    // A sample its own referee rejects (calibre's SNB reads back empty) would prove nothing.
    const v = await validate(out, ext, formatInfo(ext)?.family ?? '', from.marker);
    if (!v.ok) {
      log(`no ${ext} sample: ${parent} → ${ext} fails its check: ${v.reason}`);
      continue;
    }
    made.set(ext, { path: out, origin: 'generated', ...(from.marker ? { marker: from.marker } : {}) });
  }
  // A cursor: ImageMagick writes .cur files as icons (type 1); the directory type 2 makes one.
  if (wanted.includes('cur') && made.has('ico')) {
    const ico = Buffer.from(await readFile((made.get('ico') as Sample).path));
    ico.writeUInt16LE(2, 2);
    const cur = join(dir, 'sample.cur');
    await writeFile(cur, ico);
    made.set('cur', { path: cur, origin: 'generated' });
  }
  const out = new Map<string, Sample[]>();
  // Pairs whose source must be shaped for the target (a contact table for vCard) have their own sample (`csv>vcf`).
  for (const [key, path] of roots) if (key.includes('>') && wanted.includes(key.split('>')[0] as string)) out.set(key, [{ path, origin: 'generated' }]);
  for (const ext of wanted) {
    const list: Sample[] = [];
    const gen = made.get(ext);
    if (gen) list.push(gen);
    // A second, real file where the corpus has one (deterministic: named, or the first by name).
    const corpus = join(CORPUS_DIR, ext);
    if (existsSync(corpus)) {
      const first = CORPUS_SAMPLE[ext] ?? (await readdir(corpus)).filter((f) => f.endsWith(`.${ext}`)).sort()[0];
      if (first) list.push({ path: join(corpus, first), origin: `corpus/${ext}/${first}` });
    }
    if (list.length) out.set(ext, list);
  }
  return out;
}

/** Markup that is read but not written here (bibliographies, POD, three wiki dialects, Typst), written by hand. */
const READ_ONLY_MARKUP: Readonly<Record<string, string>> = {
  bib: '@article{lovelace1843,\n  author = {Lovelace, Ada},\n  title = {Notes on the Analytical Engine: a Quarterly report},\n  journal = {Scientific Memoirs},\n'
    + '  year = {1843},\n  volume = {3},\n  pages = {666--731}\n}\n\n@book{hopper1952,\n  author = {Hopper, Grace},\n  title = {The Education of a Computer},\n'
    + '  publisher = {ACM},\n  year = {1952}\n}\n',
  pod: '=pod\n\n=encoding utf8\n\n=head1 NAME\n\nQuarterly - a small POD document\n\n=head1 DESCRIPTION\n\nThis is a B<small> I<Quarterly> report with C<code>.\n\n'
    + '=over 4\n\n=item * apples\n\n=item * oranges\n\n=back\n\n=head2 Verbatim\n\n  print "hello\\n";\n\n=cut\n',
  tikiwiki: '! Quarterly report\n\nThis is a __small__ TikiWiki document.\n\n* apples\n* oranges\n',
  twiki: '---+ Quarterly report\n\nThis is a *small* TWiki document.\n\n   * apples\n   * oranges\n',
  vimwiki: '= Quarterly report =\n\nThis is a *small* Vimwiki document.\n\n- apples\n- oranges\n',
  // Typst (issue 21): a heading, a table and an equation, in a Debian font.
  typ: '#set text(font: "DejaVu Sans")\n= Quarterly report\n\nThis is a *small* Typst document.\n\n'
    + '#table(columns: 2, [Fruit], [Crates], [apples], [12], [oranges], [7])\n\n$ A = pi r^2 $\n',
};

/** The roots: fixtures, plus files made by independent tools for formats no fixture has. */
async function makeRoots(dir: string): Promise<Map<string, string>> {
  const roots = new Map<string, string>([
    ['docx', fixture('sample.docx')], ['xlsx', fixture('sample.xlsx')], ['pptx', fixture('sample.pptx')],
    ['png', fixture('sample.png')], ['wav', fixture('sample.wav')], ['md', fixture('sample.md')],
  ]);
  const must = async (cmd: string, args: string[]): Promise<void> => {
    const r = await run(cmd, args, 120_000);
    if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr}`);
  };
  // A half-second 64×48 clip with sound.
  const mp4 = join(dir, 'root.mp4');
  await must('/usr/bin/ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=duration=0.5:size=64x48:rate=5', '-f', 'lavfi', '-i', 'sine=duration=0.5:sample_rate=8000',
    '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', mp4]);
  roots.set('mp4', mp4);
  // An animated PNG of three frames (ffmpeg's APNG muxer), played forever.
  const apng = join(dir, 'root.apng');
  await must('/usr/bin/ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=duration=0.6:size=64x48:rate=5', '-plays', '0', '-f', 'apng', apng]);
  roots.set('apng', apng);
  const psd = join(dir, 'root.psd');
  await must('/usr/bin/convert', [fixture('sample.png'), psd]);
  roots.set('psd', psd);
  const epub = join(dir, 'root.epub');
  await must('/usr/bin/pandoc', [fixture('sample.md'), '--metadata', 'title=Quarterly report', '-o', epub]);
  roots.set('epub', epub);
  // Markup pandoc reads but does not write.
  const t2t = join(dir, 'root.t2t');
  await writeFile(t2t, 'Quarterly report\n\n\n= Quarterly report =\n\nThis is a **small** txt2tags document.\n\n- apples\n- oranges\n');
  roots.set('t2t', t2t);
  const creole = join(dir, 'root.creole');
  await writeFile(creole, '= Quarterly report =\n\nThis is a **small** Creole document.\n\n* apples\n* oranges\n');
  roots.set('creole', creole);
  for (const [ext, body] of Object.entries(READ_ONLY_MARKUP)) {
    const path = join(dir, `root.${ext}`);
    await writeFile(path, body);
    roots.set(ext, path);
  }
  // Issue 12's formats: one sample each from independent tools (or the engine's own binary
  // where nothing else writes the format), and the pair-shaped ones (`csv>vcf`).
  for (const [key, path] of await makeExtraSamples(join(dir, 'extra'))) if (!roots.has(key)) roots.set(key, path);
  return roots;
}
