// Inputs that try to make an engine read local files or fetch URLs. The loopback HTTP
// server stands in for "a remote server": the engines must never call it.
import assert from 'node:assert/strict';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { runSandboxed } from '../exec/exec.js';
import { tool, scratchDir } from '../testing/tools.js';
import { ConversionError } from '../errors.js';
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
