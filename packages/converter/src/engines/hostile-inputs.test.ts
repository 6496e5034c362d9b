// Inputs that try to make an engine read local files or fetch URLs. The loopback HTTP
// server stands in for "a remote server": the engines must never call it.
import assert from 'node:assert/strict';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runSandboxed } from '../exec/exec.js';
import { tool, scratchDir } from '../testing/tools.js';
import { ConversionError, type ConversionFailure } from '../errors.js';
import { Converter } from '../converter.js';
import { detectFormat } from '../formats/detect.js';
import {
  activeContentKeys, assertSafeMessage, encryptPdf, ENTITY_PROLOG, makePdf, para, PASSWD_MARKER, pcmWav, pixelFloodPng, svgWithEntities,
  writeDocx, writeLinkedDocx, writeManyEntriesDocx, writeZipBombDocx,
} from '../testing/hostile-files.js';
import { packageFile, type JobContext } from './engine.js';
import { FfmpegEngine } from './ffmpeg.engine.js';
import { LibreOfficePool } from './libreoffice-pool.js';
import { PandocEngine } from './pandoc.engine.js';

let dir: string;
let server: Server;
let port = 0;
const hits: string[] = [];

before(async () => {
  dir = await scratchDir('conv-hostile-');
  server = createServer((req, res) => {
    hits.push(req.url ?? '');
    res.end('x');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});
after(async () => {
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

const job = (): JobContext => ({ dir, timeoutMs: 30_000, maxFileBytes: 64 * 1024 * 1024, maxInputPixels: 1e8 });

async function pandoc(from: string, to: string, text: string): Promise<string> {
  const input = join(dir, `in.${from}`);
  const output = join(dir, `out-${Math.random().toString(36).slice(2)}.${to}`);
  await writeFile(input, text);
  await new PandocEngine().convert({ input, output, from, to, options: {}, quality: 90, qualityRequested: false, job: job() });
  return output;
}

test('pandoc runs sandboxed: LaTeX \\input and local images are not read', async () => {
  const secret = join(dir, 'secret.txt');
  await writeFile(secret, 'TOP-SECRET-CONTENT');
  const md = await readFile(await pandoc('tex', 'md', `\\documentclass{article}\\begin{document}Hello \\input{${secret}}\\end{document}`), 'utf8');
  assert.match(md, /Hello/);
  assert.doesNotMatch(md, /TOP-SECRET/);
  // An ODT embeds images it can read: in the sandbox it cannot, so nothing is embedded.
  const odt = await pandoc('md', 'odt', `# Doc\n\n![leak](${secret})\n`);
  const listing = tool('/usr/bin/python3', ['-m', 'zipfile', '-l', odt]);
  assert.doesNotMatch(listing, /Pictures\//);
});

test('pandoc does not fetch remote images, even for a self-contained output', async () => {
  await pandoc('md', 'odt', `# Doc\n\n![remote](http://127.0.0.1:${port}/pixel.png)\n`);
  await pandoc('html', 'odt', `<html><body><img src="http://127.0.0.1:${port}/img.png"></body></html>`);
  assert.deepEqual(hits, []);
});

test('our ImageMagick policy denies script-like and remote coders', async () => {
  const env = { MAGICK_CONFIGURE_PATH: dirname(packageFile('imagemagick/policy.xml')) };
  for (const source of ['text:/etc/hostname', 'msl:/dev/null', `http://127.0.0.1:${port}/x.png`, 'pdf:/dev/null']) {
    const r = await runSandboxed('/usr/bin/convert', [source, join(dir, 'x.png')], { cwd: dir, timeoutMs: 15_000, env, readOnly: [env.MAGICK_CONFIGURE_PATH] });
    assert.notEqual(r.exitCode, 0, source);
    assert.match(r.stderr, /not allowed by the security policy/, source);
  }
  assert.deepEqual(hits, []);
});

/** A minimal ODT whose only image is linked from `url` (LibreOffice loads such images). */
function linkedImageOdt(path: string, url: string): void {
  const content = `<?xml version="1.0" encoding="UTF-8"?><office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" office:version="1.2"><office:body><office:text><text:p>Linked image below</text:p><text:p><draw:frame draw:name="img" text:anchor-type="as-char" svg:width="2cm" svg:height="2cm"><draw:image xlink:href="${url}" xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/></draw:frame></text:p></office:text></office:body></office:document-content>`;
  const manifest = '<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2"><manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.text"/><manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/></manifest:manifest>';
  const script = [
    'import sys, zipfile',
    'with zipfile.ZipFile(sys.argv[1], "w") as z:',
    '    z.writestr(zipfile.ZipInfo("mimetype"), "application/vnd.oasis.opendocument.text")',
    '    z.writestr("META-INF/manifest.xml", sys.argv[2], compress_type=zipfile.ZIP_DEFLATED)',
    '    z.writestr("content.xml", sys.argv[3], compress_type=zipfile.ZIP_DEFLATED)',
  ].join('\n');
  tool('/usr/bin/python3', ['-c', script, path, manifest, content]);
}

test('LibreOffice in the pool does not fetch linked images (a cold soffice with network does)', async () => {
  hits.length = 0;
  const odt = join(dir, 'linked.odt');
  linkedImageOdt(odt, `http://127.0.0.1:${port}/linked.png`);
  // Control: the same file through a plain soffice that may use the network fetches the image,
  // so the document really is hostile.
  const profile = join(dir, 'control-profile');
  const control = await runSandboxed('/usr/bin/soffice', [`-env:UserInstallation=file://${profile}`, '--headless', '--convert-to', 'pdf', '--outdir', join(dir, 'control'), odt], {
    cwd: dir, timeoutMs: 120_000, network: true,
  });
  assert.equal(control.exitCode, 0, control.stderr);
  assert.ok(hits.length > 0, 'control run did not fetch the linked image');
  hits.length = 0;
  const pool = new LibreOfficePool({ workDir: join(dir, 'lo'), instances: 1 });
  try {
    await pool.convert({ input: odt, output: join(dir, 'linked.pdf'), filter: 'writer_pdf_Export' }, 60_000);
    assert.match(tool('/usr/bin/pdftotext', [join(dir, 'linked.pdf'), '-']), /Linked image below/);
  } finally {
    await pool.close();
  }
  assert.deepEqual(hits, []);
});

test('a probe of a missing binary disables the engine with a warning', async () => {
  const { probeBinaries } = await import('./engine.js');
  const p = await probeBinaries('nothing', ['/usr/bin/definitely-not-here'], ['--version'], /(\S+)/);
  assert.equal(p.available, false);
  assert.deepEqual(p.missing, ['/usr/bin/definitely-not-here']);
  assert.match(p.warning ?? '', /disabled/);
});

test('ffmpeg: a playlist posing as a video neither fetches its URLs nor reads local files', async () => {
  hits.length = 0;
  const input = join(dir, 'playlist.mp4');
  await writeFile(input, `#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\nhttp://127.0.0.1:${port}/seg.ts\n#EXTINF:1,\nfile:///etc/passwd\n#EXT-X-ENDLIST\n`);
  const output = join(dir, 'playlist.mp3');
  await assert.rejects(
    new FfmpegEngine().convert({ input, output, from: 'mp4', to: 'mp3', options: {}, quality: 60, qualityRequested: false, job: job() }),
    (e: unknown) => e instanceof ConversionError && e.code === 'conversion_failed',
  );
  assert.deepEqual(hits, []);
});

// ---- Issue #13: bombs, memory caps, file reads and active content through the converter ----
// Every run below is bounded: the converter caps each engine's memory (RLIMIT_DATA) and CPU
// time, its steps time out, and each test has its own time limit.

describe('hostile inputs through the converter (#13)', () => {
  let conv: Converter;
  let work: string;
  let n = 0;
  before(async () => {
    work = join(dir, 'work');
    conv = await Converter.create({
      workDir: work, timeoutMs: 60_000, maxMemoryBytes: 1024 ** 3, maxInputPixels: 50_000_000,
      inputLimits: { maxPages: 500, maxMediaSeconds: 60 }, libreoffice: { instances: 1 },
    });
  });
  after(async () => {
    await conv.close();
  });

  /** Converts a generated file as the service would (detected format), then checks nothing stayed in the work folder. */
  async function convert(input: string, target: string, options: Record<string, unknown> = {}, c = conv) {
    const detected = await detectFormat(input, input);
    if (!detected) return { ok: false as const, error: { code: 'unsupported_format', message: 'not detected' } as ConversionFailure };
    const r = await c.convert({ inputPath: input, sourceFormat: detected.ext, targetFormat: target, options, outputPath: join(dir, 'out', `${n++}.${target}`) });
    const left = (await readdir(work)).filter((f) => f.startsWith('job-'));
    assert.deepEqual(left, [], 'a job folder was left behind');
    if (!r.ok) assertSafeMessage(r.error.message);
    return r;
  }

  function failsWith(r: Awaited<ReturnType<typeof convert>>, code: string, message: RegExp): void {
    assert.equal(r.ok, false, 'expected a failure');
    if (r.ok) return;
    assert.equal(r.error.code, code, r.error.message);
    assert.match(r.error.message, message);
  }

  test('a pixel flood (PNG claiming 100,000 × 100,000) is refused from its header', { timeout: 60_000 }, async () => {
    const png = join(dir, 'flood.png');
    await writeFile(png, pixelFloodPng(100_000, 100_000));
    failsWith(await convert(png, 'jpg'), 'conversion_failed', /100000×100000 pixels, over the 50 megapixels/);
  });

  test('a zip bomb posing as a docx (60 MiB of text in 60 KB) is refused before LibreOffice or pandoc see it', { timeout: 60_000 }, async () => {
    const bomb = join(dir, 'bomb.docx');
    writeZipBombDocx(bomb, 60 * 1024 * 1024);
    failsWith(await convert(bomb, 'pdf'), 'conversion_failed', /expands \d+ times/);
    failsWith(await convert(bomb, 'md'), 'conversion_failed', /expands \d+ times/);
    const many = join(dir, 'many.docx');
    writeManyEntriesDocx(many, 10_050);
    failsWith(await convert(many, 'pdf'), 'conversion_failed', /more than 10000 entries/);
  });

  test('XML entity declarations (billion laughs, an external entity) inside a docx are refused', { timeout: 60_000 }, async () => {
    const docx = join(dir, 'entities.docx');
    writeDocx(docx, para('&lol3; &xxe;'), '', [], ENTITY_PROLOG);
    failsWith(await convert(docx, 'pdf'), 'conversion_failed', /declares XML entities/);
  });

  // Internal entities alone are expanded since issue 21 (guards/xml-entities.test.ts, xml-entities-convert.test.ts);
  // these prologs also declare an external one, which is refused before the expansion bound is even needed.
  test('XML sources read whole (flat ODF, DocBook) declaring an external entity are refused before an engine parses them (issues 12, 21)', { timeout: 60_000 }, async () => {
    const fodt = join(dir, 'entities.fodt');
    await writeFile(fodt, `<?xml version="1.0"?>${ENTITY_PROLOG.replace('w:document', 'office:document')}<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" office:mimetype="application/vnd.oasis.opendocument.text"><office:body><office:text>&lol3; &xxe;</office:text></office:body></office:document>`);
    failsWith(await convert(fodt, 'pdf'), 'conversion_failed', /declares the external entity "xxe" \(SYSTEM\)/);
    const dbk = join(dir, 'entities.dbk');
    await writeFile(dbk, `<?xml version="1.0"?>${ENTITY_PROLOG.replace('w:document', 'article')}<article xmlns="http://docbook.org/ns/docbook" version="5.0"><para>&lol3; &xxe;</para></article>`);
    failsWith(await convert(dbk, 'html'), 'conversion_failed', /declares the external entity "xxe" \(SYSTEM\)/);
  });

  test('pandoc turning a big docx into Markdown is stopped by its memory cap with a clear error', { timeout: 120_000 }, async () => {
    // 30 MiB of text passes the expansion check (under 50 MiB); a 256 MiB cap is far too small for pandoc's document tree.
    const small = await Converter.create({ workDir: work, timeoutMs: 60_000, maxMemoryBytes: 256 * 1024 ** 2 });
    try {
      const docx = join(dir, 'big-text.docx');
      writeZipBombDocx(docx, 30 * 1024 * 1024);
      failsWith(await convert(docx, 'md', {}, small), 'conversion_failed', /more memory to convert than the 256 MiB allowed/);
    } finally {
      await small.close();
    }
  });

  test('qpdf repeating a PDF\'s pages is stopped by its memory cap; more than 10,000 selected pages is a 400', { timeout: 120_000 }, async () => {
    const pdf = join(dir, 'pages.pdf');
    await writeFile(pdf, makePdf(100));
    const tooMany = await convert(pdf, 'pdf', { page_range: Array(101).fill('1-').join(',') });
    assert.equal(tooMany.ok, false);
    if (!tooMany.ok) assert.equal(tooMany.error.field, 'page_range');
    const small = await Converter.create({ workDir: work, timeoutMs: 60_000, maxMemoryBytes: 24 * 1024 ** 2 });
    try {
      failsWith(await convert(pdf, 'pdf', { page_range: Array(100).fill('1-').join(',') }, small), 'conversion_failed', /more memory to convert than the 24 MiB allowed/);
    } finally {
      await small.close();
    }
  });

  test('a PDF over the page limit is refused before any engine; preflight refuses a page past the end (400)', { timeout: 60_000 }, async () => {
    const pdf = join(dir, 'long.pdf');
    await writeFile(pdf, makePdf(600));
    failsWith(await convert(pdf, 'png'), 'conversion_failed', /600 pages, over the 500 pages/);
    const short = join(dir, 'short.pdf');
    await writeFile(short, makePdf(3));
    const pre = await conv.preflight(short, 'pdf', 'pdf', { page_range: '2-9' });
    assert.equal(pre.ok, false);
    if (!pre.ok) {
      assert.equal(pre.error.code, 'invalid_request');
      assert.equal(pre.error.field, 'page_range');
    }
    assert.equal((await conv.preflight(short, 'pdf', 'pdf', { page_range: '2-3' })).ok, true);
  });

  test('media longer than the duration limit is refused from ffprobe\'s reading, before ffmpeg decodes it', { timeout: 60_000 }, async () => {
    // This converter's limit is 60 s; 61.5 s of 8 kHz 8-bit mono PCM. (A WAV header that only
    // claims a long duration does not count: ffprobe measures WAV data by the file's size.)
    const seconds = 61.5;
    const data = Buffer.alloc(Math.round(8000 * seconds), 0x80);
    const wav = join(dir, 'long.wav');
    await writeFile(wav, pcmWav(data, 8000, 8));
    failsWith(await convert(wav, 'mp3'), 'conversion_failed', /lasts 62 s, over the 60 s/);
  });

  test('an encrypted PDF without its password fails with password_required', { timeout: 60_000 }, async () => {
    const plain = join(dir, 'plain.pdf');
    await writeFile(plain, makePdf(2));
    const locked = join(dir, 'locked.pdf');
    encryptPdf(plain, locked);
    failsWith(await convert(locked, 'png'), 'password_required', /encrypted and needs a password/);
  });

  test('a truncated PDF gets a clear error or a repaired conversion, never a crash', { timeout: 60_000 }, async (t) => {
    const whole = makePdf(5);
    const cut = join(dir, 'truncated.pdf');
    await writeFile(cut, whole.subarray(0, Math.floor(whole.length * 0.6)));
    for (const target of ['png', 'txt', 'pdf']) {
      const r = await convert(cut, target);
      t.diagnostic(`truncated.pdf → ${target}: ${r.ok ? 'converted (repaired)' : `${r.error.code}: ${r.error.message}`}`);
      if (!r.ok) assert.match(r.error.code, /^(conversion_failed)$/);
    }
  });

  test('documents referencing a loopback URL and file:///etc/passwd fetch nothing and embed no local file', { timeout: 180_000 }, async (t) => {
    hits.length = 0;
    const url = `http://127.0.0.1:${port}/probe.png`;
    const docx = join(dir, 'linked.docx');
    writeLinkedDocx(docx, [url, 'file:///etc/passwd']);
    const odt = join(dir, 'linked-passwd.odt');
    linkedImageOdt(odt, 'file:///etc/passwd');
    const odtUrl = join(dir, 'linked-url.odt');
    linkedImageOdt(odtUrl, url);
    const html = join(dir, 'refs.html');
    await writeFile(html, `<html><body><p>Refs</p><img src="${url}"><img src="file:///etc/passwd"><iframe src="file:///etc/passwd"></iframe><link rel="stylesheet" href="${url}"><object data="file:///etc/passwd"></object></body></html>`);
    const md = join(dir, 'refs.md');
    await writeFile(md, `# Refs\n\n![remote](${url})\n\n![local](file:///etc/passwd)\n\n![raw](/etc/passwd)\n`);
    const tex = join(dir, 'reads.tex');
    await writeFile(tex, '\\documentclass{article}\\begin{document}Reads \\input{/etc/passwd} \\include{/etc/passwd} \\verbatiminput{/etc/passwd}\\end{document}');
    const jobs: [string, string][] = [[docx, 'pdf'], [docx, 'md'], [odt, 'pdf'], [odtUrl, 'pdf'], [html, 'pdf'], [html, 'odt'], [md, 'html'], [md, 'pdf'], [tex, 'txt'], [tex, 'md']];
    for (const [input, target] of jobs) {
      const r = await convert(input, target);
      t.diagnostic(`${input.split('/').pop()} → ${target}: ${r.ok ? `converted (${r.output.size_bytes} bytes)` : `${r.error.code}: ${r.error.message}`}`);
      if (!r.ok) continue; // a refusal is a safe answer too
      const text = target === 'pdf' ? tool('/usr/bin/pdftotext', [r.output.path, '-']) : target === 'odt' ? tool('/usr/bin/python3', ['-c', 'import sys,zipfile;z=zipfile.ZipFile(sys.argv[1]);print("".join(z.read(n).decode("latin1") for n in z.namelist()))', r.output.path]) : await readFile(r.output.path, 'latin1');
      assert.doesNotMatch(text, PASSWD_MARKER, `${input} → ${target} holds /etc/passwd`);
    }
    assert.deepEqual(hits, [], 'an engine connected to the loopback listener');
  });

  test('an SVG with external entities is refused before any engine reads it (SVG is a format since issue 12)', { timeout: 60_000 }, async () => {
    hits.length = 0;
    const svg = join(dir, 'xxe.svg');
    await writeFile(svg, svgWithEntities(`http://127.0.0.1:${port}/svg.png`));
    assert.equal((await detectFormat(svg, 'xxe.svg'))?.ext, 'svg');
    const r = await convert(svg, 'pdf');
    assert.equal(r.ok, false);
    if (!r.ok) {
      assert.equal(r.error.code, 'conversion_failed');
      assert.match(r.error.message, /declares the external entity "xxe" \(SYSTEM\)/);
    }
    assert.deepEqual(hits, []);
  });

  test('remove_active_content strips JavaScript, launch and URI actions and embedded files from a PDF', { timeout: 60_000 }, async () => {
    const pdf = join(dir, 'active.pdf');
    await writeFile(pdf, makePdf(2, { active: true, uri: `http://127.0.0.1:${port}/uri`, text: 'Active' }));
    const before = activeContentKeys(pdf);
    for (const k of ['/JavaScript', '/Launch', '/URI', '/EmbeddedFiles', '/OpenAction']) assert.ok(before.includes(k), `fixture lacks ${k}`);
    const kept = await convert(pdf, 'pdf');
    assert.ok(kept.ok);
    if (kept.ok) assert.ok(activeContentKeys(kept.output.path).includes('/Launch'), 'plain PDF → PDF keeps actions (control)');
    const r = await convert(pdf, 'pdf', { remove_active_content: true });
    assert.ok(r.ok, r.ok ? '' : r.error.message);
    if (!r.ok) return;
    assert.deepEqual(activeContentKeys(r.output.path), []);
    assert.match(tool('/usr/bin/pdftotext', [r.output.path, '-']), /Active 1/);
    assert.equal(r.output.pages, 2);
    const wrong = await convert(pdf, 'png', { remove_active_content: true });
    assert.equal(wrong.ok, false);
    if (!wrong.ok) assert.equal(wrong.error.field, 'remove_active_content');
    assert.deepEqual(hits, []);
  });
});
