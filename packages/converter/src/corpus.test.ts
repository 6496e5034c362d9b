import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { chmod, chown, copyFile, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Converter } from './converter.js';
import { packageFile } from './engines/engine.js';
import { formatInfo, type FormatFamily } from './formats/catalogue.js';
import { detectFormat } from './formats/detect.js';
import { validate } from './testing/matrix/validate.js';
import { atMostTwo, pdfPages, runTool, tool } from './testing/tools.js';

// Real .docx files from other projects' test suites (test/corpus/NOTICE.md), each to PDF
// through the warm pool, as the service runs them: every one must convert and give a PDF
// that poppler reads. Documents with Word comments crash the warm instance (LibreOffice 7.4)
// and must still convert, through the one-off fallback, which the engine chain names. Two
// files at a time, one per warm instance, as the service runs two jobs (issue 44).
const CORPUS_ROOT = packageFile('test/corpus');
const CORPUS = join(CORPUS_ROOT, 'docx');
const CRASHING = ['mammoth-comments.docx', 'python-docx-comments-rich-para.docx'];

let converter: Converter;
let work: string;
before(async () => {
  work = await mkdtemp(join(tmpdir(), 'corpus-'));
  await mkdir(join(work, 'table'));
  // Two warm instances: the tests below convert two files at a time.
  converter = await Converter.create({ workDir: join(work, 'jobs'), libreoffice: { instances: 2 } });
});
after(async () => {
  await converter.close();
  await rm(work, { recursive: true, force: true });
});

test('every real .docx of the corpus converts to a PDF poppler reads; comment documents through the one-off fallback', { timeout: 600_000 }, async () => {
  const files = (await readdir(CORPUS)).filter((f) => f.endsWith('.docx')).sort();
  assert.ok(files.length >= 40, `${files.length} documents`);
  const failures: string[] = [];
  await atMostTwo(files, async (file) => {
    const out = join(work, `${file}.pdf`);
    const r = await converter.convert({ inputPath: join(CORPUS, file), sourceFormat: 'docx', targetFormat: 'pdf', outputPath: out });
    if (!r.ok) {
      failures.push(`${file}: ${r.error.message} (${r.error.detail ?? ''})`);
      return;
    }
    assert.ok(pdfPages(out) >= 1, file);
    assert.deepEqual(r.engines, [CRASHING.includes(file) ? 'libreoffice-cold' : 'libreoffice'], file);
  });
  assert.deepEqual(failures, []);
  // The fallback keeps the text: the comment document's body survives.
  const text = tool('/usr/bin/pdftotext', [join(work, 'mammoth-comments.docx.pdf'), '-']);
  assert.match(text, /Ouch/);
});

/**
 * Each comment document's body text, which its PDF keeps, and a comment's, which it does
 * not: the engine exports PDFs with ExportNotes false, as plain `soffice --convert-to` does.
 */
const COMMENT_TEXTS: Readonly<Record<string, { body: RegExp; comment: RegExp }>> = {
  'mammoth-comments.docx': { body: /Ouch/, comment: /tachyon/ },
  'python-docx-comments-rich-para.docx': { body: /Some text worthy of note\.[\s\S]*Paragraph 7/, comment: /Text with hyperlink/ },
};

/**
 * Converts corpus .docx files to PDF in a Node process of `user`'s (groups included), with
 * the engines as `engineUser`, as `npm start` runs the service. Answers each conversion's
 * result, keyed by file name; the PDFs are left in `dir`.
 */
async function convertAsUser(user: string, engineUser: string, dir: string, files: readonly string[]): Promise<Record<string, { ok: boolean; engines?: string[]; error?: unknown }>> {
  const script = `
    const { Converter } = await import(process.argv[1]);
    const [dir, ...files] = process.argv.slice(2);
    const converter = await Converter.create({ workDir: dir + '/jobs', engineUser: ${JSON.stringify(engineUser)}, libreoffice: { instances: files.length } });
    const results = {};
    await Promise.all(files.map(async (f) => {
      const r = await converter.convert({ inputPath: dir + '/' + f, sourceFormat: 'docx', targetFormat: 'pdf', outputPath: dir + '/' + f + '.pdf' });
      results[f] = r.ok ? { ok: true, engines: r.engines } : { ok: false, error: r.error };
    }));
    await converter.close();
    process.stdout.write(JSON.stringify(results));`;
  const converterUrl = pathToFileURL(packageFile('dist/converter.js')).href;
  const r = await runTool('/usr/bin/setpriv', ['--reuid', user, '--regid', user, '--init-groups', '--', process.execPath, '--input-type=module', '-e', script, converterUrl, dir, ...files], 100_000, dir);
  assert.equal(r.code, 0, `the conversion process as ${user} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout.toString('utf8')) as Record<string, { ok: boolean; engines?: string[]; error?: unknown }>;
}

// Issue 44: `npm start` runs the service as the unprivileged user mailconv and its engines as
// mailconv-engine through sudo. The one-off fallback then failed every comment document
// ("cold soffice exited 0"): the folder soffice made for its PDF was the engine user's and the
// service could not move the PDF out. The test above runs as root, where it always could.
test('the comment documents convert through the one-off fallback when the service runs as mailconv and its engines as mailconv-engine (issue 44)', { timeout: 120_000 }, async () => {
  assert.equal(process.getuid?.(), 0, 'this test runs a conversion as the service users, which needs root (CI runs as root)');
  // The users and the sudo rule, as npm start makes them (a no-op when they exist).
  const serviceUsers = (await import(pathToFileURL(packageFile('../../scripts/lib/service-user.mjs')).href)) as {
    ensureServiceUsers: (env: Record<string, string>) => { user: string; engineUser: string; uid: number; gid: number } | null;
  };
  const dir = join(work, 'as-service-user');
  await mkdir(dir);
  const users = serviceUsers.ensureServiceUsers({ EMAIL_DATA_DIR: join(dir, 'data', 'email'), CONVERT_DATA_DIR: join(dir, 'data', 'convert') });
  assert.ok(users);
  // The work folder is the service's, as its data folder is; mkdtemp's parent is 0700.
  await chmod(work, 0o711);
  // The documents as uploads are: the service user's own files.
  for (const file of CRASHING) {
    await copyFile(join(CORPUS, file), join(dir, file));
    await chown(join(dir, file), users.uid, users.gid);
  }
  await chown(dir, users.uid, users.gid);
  const results = await convertAsUser(users.user, users.engineUser, dir, CRASHING);
  for (const file of CRASHING) {
    assert.deepEqual(results[file], { ok: true, engines: ['libreoffice-cold'] }, file);
    const text = tool('/usr/bin/pdftotext', [join(dir, `${file}.pdf`), '-']);
    const expected = COMMENT_TEXTS[file];
    assert.ok(expected, file);
    assert.match(text, expected.body, file);
    assert.doesNotMatch(text, expected.comment, file);
  }
});

// Every real file of the corpus (test/corpus/<ext>/, NOTICE.md) to each usual target of its
// family (issue 12: documents → pdf/txt/docx, sheets → pdf/csv/xlsx, slides → pdf/png,
// PDFs → txt/png, e-books → pdf/epub/docx, markup → html/docx/pdf, images → png/jpg/webp/pdf),
// as the service runs it: the format detected from the bytes, then the Converter's route.
// Each output is judged by the matrix's independent checks (pdfinfo, file + identify,
// unzip -t and the main part, Python's csv module, xmllint…); where a word of the file is
// known, it must survive into text-bearing outputs. The .docx files go to PDF above; here
// to text. Two conversions at a time (two LibreOffice instances), as the matrix runs.
const USUAL_TARGETS: Readonly<Partial<Record<FormatFamily, readonly string[]>>> = {
  document: ['pdf', 'txt', 'docx'], spreadsheet: ['pdf', 'csv', 'xlsx'], presentation: ['pdf', 'png'], pdf: ['txt', 'png'],
  ebook: ['pdf', 'epub', 'docx'], markup: ['html', 'docx', 'pdf'], image: ['png', 'jpg', 'webp', 'pdf'], vector: ['png', 'jpg', 'webp', 'pdf'],
};
/** Targets already proven above for a whole directory. */
const DONE_ABOVE: Readonly<Record<string, readonly string[]>> = { docx: ['pdf'] };
/** A word of the file that every text-bearing output must keep (read from the source). */
const MARKERS: Readonly<Record<string, string>> = {
  'doc/apachepoi-HeaderFooterUnicode.doc': 'headers',
  'doc/apachepoi-Lists.doc': 'Unordered',
  'doc/apachepoi-Word95.doc': 'brown',
  'doc/apachepoi-simple-table.doc': 'columns',
  'doc/textract-raw_text.doc': 'lovely',
  'doc/textract-standardized_text.doc': 'quick',
  'rtf/apachepoi-hmef-message.rtf': 'Outlook',
  'rtf/textract-raw_text.rtf': 'lovely',
  'rtf/textract-standardized_text.rtf': 'quick',
  'odt/odfdo-chair.odt': 'chair',
  'odt/odfdo-dormeur_notes.odt': 'verdure',
  'odt/odfdo-example.odt': 'paragraph',
  'odt/odfdo-list.odt': 'accentuée',
  'odt/odfdo-table.odt': 'Second table',
  'odt/textract-raw_text.odt': 'OppenOffice',
  'ods/odfdo-spanned_cells.ods': 'horiz',
  'ods/odfdo-styled_table.ods': 'foo1',
  'ods/textract-raw_text.ods': 'IFERROR',
  'xls/xlrd-Formate.xls': 'Huber',
  'xls/xlrd-profiles.xls': 'PROFIL',
  'xls/textract-raw_text.xls': 'IFERROR',
  'xlsx/textract-raw_text.xlsx': 'IFERROR',
  'xlsx/textract-standardized_text.xlsx': 'quick',
  'csv/rust-csv-smallpop.csv': 'Southborough',
  'csv/rust-csv-uspop.csv': 'Davidsons',
  'csv/rust-csv-uspop-latin1.csv': 'Davidsons',
  'csv/rust-csv-strange.csv': 'Hacksaw',
  'pptx/python-pptx-test.pptx': 'Presentation',
  'pptx/python-pptx-tbl-cell.pptx': 'swallows',
  'pptx/python-pptx-shp-shapes.pptx': 'Qtr',
  'pptx/python-pptx-cht-charts.pptx': 'Category',
  'pptx/textract-raw_text.pptx': 'PowerPoint',
  'odp/odfdo-example.odp': 'odfdo',
  'odp/odfdo-background.odp': 'odfdo',
  'odp/odfdo-frame_image.odp': 'Zoé',
  'ppt/apachepoi-SampleShow.ppt': 'italic',
  'ppt/apachepoi-basic_test_ppt_file.ppt': 'subtitle',
  'ppt/apachepoi-bullets.ppt': 'placeholder',
  'ppt/apachepoi-WithLinks.ppt': 'links',
  'ppt/apachepoi-Single_Coloured_Page_With_Fonts_and_Alignments.ppt': 'subtitle',
  'ppt/apachepoi-54880_chinese.ppt': 'カタカナ',
  'pdf/qpdf-annotations-rotated-90.pdf': 'radio',
  'pdf/qpdf-appearances-1.pdf': 'form',
  'pdf/qpdf-boxes-flattened.pdf': 'rectangle',
  'pdf/qpdf-c-no-options.pdf': 'Potato',
  'pdf/pdf-lib-fancy_fields.pdf': 'fancy',
  'pdf/pdf-lib-sample_form.pdf': 'Interactive',
  'pdf/pypdf-libreoffice-form.pdf': 'Example',
  'pdf/textract-raw_text.pdf': 'lovely',
  'pdf/textract-standardized_text.pdf': 'quick',
  'epub/epubjs-alice_without_cover.epub': 'Alice',
  'epub/kepubify-test1.epub': 'kepubify',
  'epub/textract-raw_text.epub': 'Samuel',
  'epub/textract-standardized_text.epub': 'quick',
  'fb2/fb2rs-many_bodies.fb2': 'Черчилля',
  'fb2/fb2rs-minimal.fb2': 'Черчилля',
  'fb2/fb2rs-non_standard_genres.fb2': 'Черчилля',
  'md/markdown-it-block-tables.md': 'Heading',
  'md/markdown-it-block-list-nested.md': 'deeply',
  'md/markdown-it-demo-sample.md': 'Advertisement',
  'md/markdown-it-readme.md': 'markdown-it',
  'md/markdown-it-inline-entity.md': 'entities',
  'rst/sphinx-basic-index.rst': 'Sphinx',
  'rst/sphinx-images-index.rst': 'caption',
  'rst/sphinx-latex-table-complex.rst': 'header1',
  'rst/sphinx-latex-table-longtable.rst': 'cell1-1',
  'html/go-org-misc.html': 'goorgeous',
  'html/go-org-tables.html': 'separator',
  'html/go-org-footnotes.html': 'footnote',
  'html/docbook-tabular-toc-a1s1.html': 'First Section',
  'ipynb/nbformat-test4.ipynb': 'nbconvert',
  'ipynb/nbformat-test4.5.ipynb': 'nbconvert',
  'ipynb/nbformat-test4docinfo.ipynb': 'nbconvert',
  'ipynb/nbconvert-notebook4_jpeg.ipynb': 'DevOps',
  'dbk/docbook-article.004.dbk': 'article.004',
  'dbk/docbook-bibliography.001.dbk': 'Compilers',
  'dbk/docbook-glossary.001.dbk': 'glossary.001',
  'dbk/docbook-table.015.dbk': 'table.015',
  'opml/opml-rs-construction_2.opml': 'Mozilla',
  'opml/opml-rs-valid_opml_with_everything.opml': 'Outline Text',
  'org/go-org-blocks.org': 'bash',
  'org/go-org-footnotes.org': 'footnotes',
  'org/go-org-lists.org': 'unordered',
  'org/go-org-misc.org': 'goorgeous',
  'org/go-org-tables.org': 'separator',
  'tex/latexml-article.tex': 'Article',
  'tex/latexml-book.tex': 'Pretend',
  'tex/tectonic-hello.tex': 'Hello',
  'tex/latexml-aliceblog.tex': 'Alice',
  'docx/mammoth-comments.docx': 'Ouch',
};

interface Job {
  readonly ext: string;
  readonly file: string;
  readonly to: string;
}

function corpusJobs(): Job[] {
  const root = packageFile('test/corpus');
  const jobs: Job[] = [];
  for (const ext of readdirSync(root).sort()) {
    const family = formatInfo(ext)?.family;
    const targets = family ? USUAL_TARGETS[family] : undefined;
    if (!targets) continue;
    for (const file of readdirSync(join(root, ext)).sort()) {
      for (const to of targets) if (to !== ext && !DONE_ABOVE[ext]?.includes(to)) jobs.push({ ext, file, to });
    }
  }
  return jobs;
}

test('every real file of the corpus is detected and converts to its family\'s usual targets, each output accepted by an independent tool', { timeout: 900_000 }, async () => {
  const jobs = corpusJobs();
  const families = new Set(jobs.map((j) => formatInfo(j.ext)?.family));
  assert.ok(families.size >= 7, [...families].join(','));
  const failures: string[] = [];
  const started = Date.now();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < jobs.length) {
      const { ext, file, to } = jobs[next++] as Job;
      const input = join(CORPUS_ROOT, ext, file);
      const detected = await detectFormat(input, file);
      if (detected?.ext !== ext) {
        failures.push(`${ext}/${file}: detected as ${detected?.ext ?? 'nothing'}`);
        continue;
      }
      const out = join(work, 'table', `${ext}-${file}.${to}`);
      const r = await converter.convert({ inputPath: input, sourceFormat: detected.ext, targetFormat: to, outputPath: out });
      if (!r.ok) {
        failures.push(`${ext}/${file} → ${to}: ${r.error.message} (${r.error.detail ?? ''})`);
        continue;
      }
      const v = await validate(out, to, formatInfo(to)?.family ?? '', MARKERS[`${ext}/${file}`]);
      if (!v.ok) failures.push(`${ext}/${file} → ${to} (${r.engines.join('+')}): ${v.reason}`);
    }
  };
  await Promise.all([worker(), worker()]);
  assert.deepEqual(failures, []);
  // The figure for the record (issue 12 asks the whole corpus test to stay under 4 minutes).
  process.stdout.write(`# corpus: ${jobs.length} conversions in ${Math.round((Date.now() - started) / 1000)} s\n`);
});
