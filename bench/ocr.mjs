// OCR of a real scan (issues 12 and 21): our converter against OCRmyPDF (Debian's package)
// on the same multi-page scans, in the same run.
//   The scans are made reproducibly: the GNU GPL v3 text Debian ships on every system
//   (/usr/share/common-licenses/GPL-3, a public document) is made into a PDF by our own
//   engines (txt → pdf, LibreOffice); pages 2–5 are printed to 200 dpi grey images,
//   each turned by a fixed small angle, given seeded Gaussian noise and a slight blur
//   (ImageMagick), and combined into one image-only PDF (img2pdf). The known text is
//   pdftotext's reading of those four pages of the clean PDF.
//   The same pixels are made into one scan per declared resolution (--declared, default
//   200,96,72): the 200 dpi one is true to its pages; at 96 and 72 dpi the images say what
//   many scanners and phones write, so img2pdf makes pages of 17.5 × 24.6 in and
//   23.4 × 32.8 in (issue 21: such a scan was rendered at 200 dpi, four times its pixels).
//   Then, per scan, alternating which goes first: our converter (in-process, the real
//   sandboxed engines: pdf → pdf with ocr_language=eng) and `ocrmypdf -l eng` with its
//   defaults and the same number of parallel jobs. Each output must have 4 pages, each the
//   size of the scan's page, and a text layer; its words (pdftotext -raw) are scored
//   against the known text:
//     words_right = known words found in the output (as a multiset, order-free) / known words
//     sequence    = 1 − word error rate (word-level edit distance in reading order)
//   Targets (medians): our words_right ≥ OCRmyPDF's on every scan; our time ≤ 1.5 ×
//   OCRmyPDF's on the 200 dpi scan, ≤ 1.0 × on the low-resolution ones.
// Usage: npm run bench:ocr [-- --runs N] [--jobs N] [--noise F] [--declared 200,96,72]
// Build first (npm run build). Ends with one `RESULT key=value …` line: the 200 dpi scan's
// figures unprefixed (as before), the others prefixed `dpi96_`, `dpi72_`. Loopback only: no network.

// First: on a Node older than 22.12 this exits with one line before any native addon loads (issue 44).
import '@mailconv/platform/node-guard';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Converter, ownForSandbox } from '@mailconv/converter';
import { ensureSystemPackages } from '../scripts/lib/ensure.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const RUNS = arg('runs', 2);
const JOBS = arg('jobs', Math.min(4, availableParallelism()));
const NOISE = arg('noise', 1);
const declaredAt = process.argv.indexOf('--declared');
const DECLARED = (declaredAt > 0 ? process.argv[declaredAt + 1] : '200,96,72').split(',').map(Number);
if (!DECLARED.length || DECLARED.some((d) => !(d >= 10))) throw new Error('--declared takes resolutions such as 200,96,72');
// The scans are printed at 200 px/in; at this declared resolution they are true to their pages.
const TRUE_DPI = 200;
const SOURCE = '/usr/share/common-licenses/GPL-3';
const FIRST_PAGE = 2;
const ANGLES = [0.7, -0.9, 1.2, -0.5];

// ocrmypdf is the baseline's own package (listed with the test packages).
ensureSystemPackages({ includeTest: true });

const tool = (cmd, args) => {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 1024 ** 2, timeout: 600_000 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: exit ${r.status} ${r.stderr}`);
  return r.stdout;
};
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const words = (t) => t.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim().split(/\s+/).filter(Boolean);
function editDistance(a, b) {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length];
}
/** Word scores of an OCRed PDF against the known text. */
function score(truth, pdf) {
  const got = words(tool('/usr/bin/pdftotext', ['-raw', pdf, '-']));
  const bag = new Map();
  for (const w of truth) bag.set(w, (bag.get(w) ?? 0) + 1);
  let hit = 0;
  for (const w of got) {
    const n = bag.get(w) ?? 0;
    if (n > 0) {
      hit++;
      bag.set(w, n - 1);
    }
  }
  return { right: hit, wordsRight: hit / truth.length, sequence: Math.max(0, 1 - editDistance(truth, got) / truth.length), found: got.length };
}
/** Every page's size in pt, as pdfinfo prints it. */
const pageSizes = (pdf) => {
  const count = Number(/^Pages:\s+(\d+)/m.exec(tool('/usr/bin/pdfinfo', [pdf]))?.[1] ?? 0);
  return [...tool('/usr/bin/pdfinfo', ['-f', '1', '-l', String(count), pdf]).matchAll(/^Page\s+\d+ size:\s+(.*?) pts/gm)].map((m) => m[1]);
};
const pct = (x) => (100 * x).toFixed(1);

const dir = await mkdtemp(join(tmpdir(), 'bench-ocr-'));
await ownForSandbox(dir);
const conv = await Converter.create({ workDir: join(dir, 'work'), timeoutMs: 600_000, ocrConcurrency: JOBS });
try {
  // 1. The clean PDF, by our engines; the known text of the four pages.
  const clean = join(dir, 'gpl-3.pdf');
  const made = await conv.convert({ inputPath: SOURCE, sourceFormat: 'txt', targetFormat: 'pdf', outputPath: clean });
  if (!made.ok) throw new Error(`making the source PDF: ${JSON.stringify(made.error)}`);
  const last = FIRST_PAGE + ANGLES.length - 1;
  const truth = words(tool('/usr/bin/pdftotext', ['-raw', '-f', String(FIRST_PAGE), '-l', String(last), clean, '-']));

  // 2. The scans: 200 dpi grey, skewed, noisy, slightly blurred, seeded; the same pixels
  // declared at each resolution.
  const scans = [];
  for (const declared of DECLARED) {
    const images = [];
    for (const [i, angle] of ANGLES.entries()) {
      const n = String(FIRST_PAGE + i);
      const page = join(dir, `page-${n}`);
      if (declared === DECLARED[0]) tool('/usr/bin/pdftoppm', ['-f', n, '-l', n, '-r', String(TRUE_DPI), '-gray', '-png', '-singlefile', clean, page]);
      const out = join(dir, `scan-${declared}-${i + 1}.png`);
      tool('/usr/bin/convert', [`${page}.png`, '-background', 'white', '-rotate', String(angle), '-seed', String(42 + i), '-attenuate', String(NOISE), '+noise', 'Gaussian',
        '-blur', '0x0.5', '-colorspace', 'Gray', '-depth', '8', '-units', 'PixelsPerInch', '-density', String(declared), out]);
      images.push(out);
    }
    const scan = join(dir, `scan-${declared}.pdf`);
    tool('/usr/bin/img2pdf', ['--output', scan, ...images]);
    if (tool('/usr/bin/pdftotext', [scan, '-']).trim() !== '') throw new Error('the scan has a text layer already');
    const [w, h] = tool('/usr/bin/identify', ['-format', '%w %h\n', images[0]]).split('\n')[0].split(' ').map(Number);
    scans.push({ declared, path: scan, pages: images.length, pixels: `${w} × ${h}`, inches: `${(w / declared).toFixed(1)} × ${(h / declared).toFixed(1)}`, sizes: pageSizes(scan) });
  }
  console.log(`scans: ${ANGLES.length} pages printed at ${TRUE_DPI} dpi, declared ${DECLARED.join(', ')} dpi; ${truth.length} known words; ${RUNS} run(s) each, ${JOBS} page(s) at a time; `
    + `load ${tool('/bin/cat', ['/proc/loadavg']).split(' ').slice(0, 3).join(' ')}`);

  // 3. Per scan, alternating runs.
  const results = [];
  for (const s of scans) {
    console.log(`\nscan declared at ${s.declared} dpi: ${s.pixels} px per page = ${s.inches} in`);
    const ours = [];
    const theirs = [];
    const runOurs = async (n) => {
      const out = join(dir, `ours-${s.declared}-${n}.pdf`);
      const t = performance.now();
      const r = await conv.convert({ inputPath: s.path, sourceFormat: 'pdf', targetFormat: 'pdf', options: { ocr_language: 'eng' }, outputPath: out });
      const ms = performance.now() - t;
      if (!r.ok) throw new Error(`our OCR failed: ${JSON.stringify(r.error)}`);
      ours.push({ ms, out, size: r.output.size_bytes });
    };
    const runTheirs = (n) => {
      const out = join(dir, `ocrmypdf-${s.declared}-${n}.pdf`);
      const t = performance.now();
      tool('/usr/bin/ocrmypdf', ['-q', '-l', 'eng', '--jobs', String(JOBS), s.path, out]);
      theirs.push({ ms: performance.now() - t, out, size: Number(tool('/usr/bin/stat', ['-c', '%s', out])) });
    };
    for (let n = 0; n < RUNS; n++) {
      if (n % 2 === 0) {
        await runOurs(n);
        runTheirs(n);
      } else {
        runTheirs(n);
        await runOurs(n);
      }
      console.log(`run ${n + 1}: ours ${(ours[n].ms / 1000).toFixed(1)} s, ocrmypdf ${(theirs[n].ms / 1000).toFixed(1)} s`);
    }
    // Same pages, same sizes: a text layer on a page of another size would be misplaced.
    for (const r of [...ours, ...theirs]) {
      const sizes = pageSizes(r.out);
      if (sizes.length !== s.pages) throw new Error(`${r.out}: not ${s.pages} pages`);
      if (sizes.join() !== s.sizes.join()) throw new Error(`${r.out}: pages ${sizes.join(', ')}, the scan's are ${s.sizes.join(', ')}`);
    }
    const a = score(truth, ours[0].out);
    const b = score(truth, theirs[0].out);
    const oursMs = median(ours.map((r) => r.ms));
    const theirsMs = median(theirs.map((r) => r.ms));
    const ratio = oursMs / theirsMs;
    const maxRatio = s.declared === TRUE_DPI ? 1.5 : 1.0;
    console.log(`ours:     ${(oursMs / 1000).toFixed(1)} s, words right ${a.right}/${truth.length} = ${pct(a.wordsRight)} %, sequence ${pct(a.sequence)} %, ${(ours[0].size / 1e6).toFixed(1)} MB (scan ${(Number(tool('/usr/bin/stat', ['-c', '%s', s.path])) / 1e6).toFixed(1)} MB)`);
    console.log(`ocrmypdf: ${(theirsMs / 1000).toFixed(1)} s, words right ${b.right}/${truth.length} = ${pct(b.wordsRight)} %, sequence ${pct(b.sequence)} %, ${(theirs[0].size / 1e6).toFixed(1)} MB`);
    console.log(`time ratio ${ratio.toFixed(2)} (target ≤ ${maxRatio.toFixed(1)})`);
    const prefix = s.declared === TRUE_DPI ? '' : `dpi${s.declared}_`;
    results.push(`${prefix}ours_s=${(oursMs / 1000).toFixed(1)} ${prefix}ocrmypdf_s=${(theirsMs / 1000).toFixed(1)} ${prefix}time_ratio=${ratio.toFixed(2)} `
      + `${prefix}ours_words_right=${a.right} ${prefix}ocrmypdf_words_right=${b.right} ${prefix}ours_words_pct=${pct(a.wordsRight)} ${prefix}ocrmypdf_words_pct=${pct(b.wordsRight)} `
      + `${prefix}ours_sequence=${pct(a.sequence)} ${prefix}ocrmypdf_sequence=${pct(b.sequence)} `
      + `${prefix}target_time=${ratio <= maxRatio ? 'met' : 'missed'} ${prefix}target_accuracy=${a.right >= b.right ? 'met' : 'missed'}`);
  }
  console.log(`RESULT pages=${ANGLES.length} words=${truth.length} runs=${RUNS} jobs=${JOBS} declared=${DECLARED.join(',')} ${results.join(' ')}`);
} finally {
  await conv.close();
  await rm(dir, { recursive: true, force: true });
}
