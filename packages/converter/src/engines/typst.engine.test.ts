// Typst (issue 21): a real document with a heading, a table and math to PDF (text read back by
// pdftotext), PNG (through the PDF, read by identify) and SVG (rendered by librsvg); hostile
// documents — files outside the job folder, this repository's own files, a package import —
// fail cleanly without leaking anything, and the compiler never runs in the service's process.
import assert from 'node:assert/strict';
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { Converter } from '../converter.js';
import { identify, scratchDir, tool, toolBytes } from '../testing/tools.js';
import { typstMessage } from './typst.engine.js';

const DOC = `#set page(width: 14cm, height: auto, margin: 1cm)
#set text(font: "DejaVu Sans")
= Quarterly Report

#table(
  columns: 3,
  [*Fruit*], [*Crates*], [*Price*],
  [Apples], [12], [1.20],
  [Oranges], [7], [0.95],
)

The area of a circle is $A = pi r^2$, and $sum_(i=1)^n i = (n(n+1)) / 2$.
`;
const SECRET = 'canary-7f3a9c-do-not-leak';
/** This repository's own package.json: a host file the service can read and a document must not. */
const REPO_FILE = fileURLToPath(new URL('../../package.json', import.meta.url));

let dir: string;
let conv: Converter;
let canary: string;

before(async () => {
  dir = await scratchDir('conv-typst-');
  conv = await Converter.create({ workDir: join(dir, 'work'), timeoutMs: 60_000 });
  canary = join(dir, 'canary.txt');
  await writeFile(canary, `${SECRET}\n`);
});
after(async () => {
  await conv.close();
  await rm(dir, { recursive: true, force: true });
});

async function convert(source: string, to: string, name = 'doc') {
  const input = join(dir, `${name}.typ`);
  await writeFile(input, source);
  const output = join(dir, `${name}-out.${to}`);
  const r = await conv.convert({ inputPath: input, sourceFormat: 'typ', targetFormat: to, outputPath: output });
  return { r, output };
}

test('a Typst document with a heading, a table and math becomes a PDF whose text pdftotext finds', { timeout: 60_000 }, async () => {
  const { r, output } = await convert(DOC, 'pdf');
  if (!r.ok) assert.fail(JSON.stringify(r.error));
  assert.deepEqual(r.engines, ['typst']);
  assert.equal(r.output.pages, 1);
  const text = tool('/usr/bin/pdftotext', ['-q', output, '-']);
  for (const word of ['Quarterly Report', 'Apples', 'Oranges', '1.20', 'circle']) assert.match(text, new RegExp(word), word);
  // The math is typeset with its own glyphs (mathematical italic pi, U+1D70B, and a summation sign).
  assert.match(text, /[\u{1D70B}π]/u);
  assert.match(text, /∑/);
  // Fonts come from Debian (DejaVu Sans, asked for) and the compiler's own math font.
  const fonts = tool('/usr/bin/pdffonts', [output]);
  assert.match(fonts, /DejaVuSans/);
});

test('… a PNG (the first page, through the PDF by poppler) and an SVG librsvg renders', { timeout: 60_000 }, async () => {
  const png = await convert(DOC, 'png');
  if (!png.r.ok) assert.fail(JSON.stringify(png.r.error));
  assert.deepEqual(png.r.engines, ['typst', 'poppler']);
  const img = identify(png.output);
  assert.equal(img.format, 'PNG');
  assert.ok(img.width > 500 && img.height > 100, `${img.width}×${img.height}`);

  const svg = await convert(DOC, 'svg');
  if (!svg.r.ok) assert.fail(JSON.stringify(svg.r.error));
  assert.deepEqual(svg.r.engines, ['typst']);
  assert.match(await readFile(svg.output, 'utf8'), /^<svg[^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  const rendered = toolBytes('/usr/bin/rsvg-convert', ['-f', 'png', svg.output]);
  assert.equal(rendered.subarray(1, 4).toString('latin1'), 'PNG');
});

test('reading files outside the job folder fails cleanly and leaks nothing: /etc/passwd, this repository, a canary, a path climbing out', { timeout: 120_000 }, async () => {
  const attempts = {
    passwd: '#read("/etc/passwd")',
    repo: `#read("${REPO_FILE}")`,
    canary: `#read("${canary}")`,
    climb: `#read("../../../../../../../..${canary}")`,
    image: `#image("${canary}")`,
    include: `#include "${canary}"`,
  };
  for (const [name, source] of Object.entries(attempts)) {
    const { r, output } = await convert(`= Leak\n${source}\n`, 'pdf', `leak-${name}`);
    assert.equal(r.ok, false, `${name}: converted`);
    if (r.ok) continue;
    assert.equal(r.error.code, 'conversion_failed', name);
    assert.match(r.error.message, /^The Typst document could not be compiled: /, name);
    const said = `${r.error.message}\n${r.error.detail ?? ''}`;
    for (const secret of [SECRET, 'root:x:0:0', '"name": "@mailconv/converter"']) assert.ok(!said.includes(secret), `${name}: ${said}`);
    // No job path in what the client reads.
    assert.doesNotMatch(r.error.message, /job-/, name);
    await assert.rejects(stat(output), `${name}: an output was written`);
  }
});

test('a package import fails at once with a clear message (no network in the sandbox), not a hang', { timeout: 60_000 }, async () => {
  const started = Date.now();
  const { r } = await convert('#import "@preview/cetz:0.2.2": canvas\n= Hello\n', 'pdf', 'package');
  assert.equal(r.ok, false);
  if (r.ok) return;
  assert.equal(r.error.code, 'conversion_failed');
  assert.match(r.error.message, /imports a package.*no network access/);
  assert.ok(Date.now() - started < 30_000, `${Date.now() - started} ms`);
});

test('the compiler runs in a child process: the service never loads its native binary', async () => {
  const maps = await readFile('/proc/self/maps', 'utf8');
  assert.doesNotMatch(maps, /typst-ts-node-compiler/);
});

test('a broken document says what Typst said, without the job folder; package errors name the cause', () => {
  assert.equal(typstMessage(['unclosed delimiter'], '/w/job-1'), 'The Typst document could not be compiled: unclosed delimiter');
  assert.equal(typstMessage(['file not found (searched at /w/job-1/etc/passwd)'], '/w/job-1'), 'The Typst document could not be compiled: file not found (searched at /etc/passwd)');
  assert.match(typstMessage(['failed to download package (error sending request)'], '/w/job-1'), /imports a package/);
});
