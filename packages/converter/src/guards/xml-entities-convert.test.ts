// Issue 21, "Internal XML entities", through the real converter and its engines: a DocBook
// 4.5 article and Adobe Illustrator SVGs that declare internal entities convert, the entity
// text in every output; entity attacks are refused with a message naming the cause, with a
// canary file and a loopback listener in place that nothing may read or reach.
import assert from 'node:assert/strict';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import { Converter } from '../converter.js';
import { packageFile } from '../engines/engine.js';
import { detectFormat } from '../formats/detect.js';
import { fixture, pdfPages, scratchDir, tool } from '../testing/tools.js';

const CANARY = 'CANARY-xml-entities-5b1f';

let dir: string;
let work: string;
let conv: Converter;
let server: Server;
let port = 0;
const hits: string[] = [];
let n = 0;

before(async () => {
  dir = await scratchDir('xml-entities-convert-');
  work = join(dir, 'work');
  await writeFile(join(dir, 'canary.txt'), `${CANARY}\n`);
  server = createServer((req, res) => {
    hits.push(req.url ?? '');
    res.end(`<!ENTITY leak "${CANARY}">`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
  conv = await Converter.create({ workDir: work, timeoutMs: 120_000, libreoffice: { instances: 1 } });
});
after(async () => {
  await conv.close();
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

/** Converts `input` as the service would (format detected from the bytes); no job folder may stay behind. */
async function convert(input: string, target: string) {
  const detected = await detectFormat(input, input.split('/').pop() ?? input);
  assert.ok(detected, `${input} is not detected`);
  const outputPath = join(dir, `out-${n++}.${target}`);
  const r = await conv.convert({ inputPath: input, sourceFormat: detected.ext, targetFormat: target, outputPath });
  assert.deepEqual((await readdir(work)).filter((f) => f.startsWith('job-')), [], 'a job folder was left behind');
  return r;
}

/** The text of an output: pdftotext for a PDF, the main part of a docx, else the file, tags removed. */
function textOf(path: string): string {
  if (path.endsWith('.pdf')) return tool('/usr/bin/pdftotext', [path, '-']);
  const markup = path.endsWith('.docx') ? tool('/usr/bin/unzip', ['-p', path, 'word/document.xml']) : tool('/bin/cat', [path]);
  return markup.replace(/<[^>]+>/g, '');
}

/** Mean RGB of a `size`-pixel square of a PNG at (`left`, `top`). */
async function colourAt(png: string, left: number, top: number, size = 4): Promise<number[]> {
  // On white, as a viewer shows it: the renderers leave the background transparent.
  // (stats() reads its input, not the pipeline: the flattened square goes through a buffer.)
  const square = await sharp(png).flatten({ background: '#ffffff' }).extract({ left, top, width: size, height: size }).png().toBuffer();
  const stats = await sharp(square).stats();
  return stats.channels.map((c) => Math.round(c.mean));
}

describe('documents with internal entities convert (issue 21)', () => {
  const dbk = fixture('docbook-entities.dbk');

  for (const target of ['html', 'docx', 'pdf']) {
    test(`a DocBook 4.5 article naming its external DTD and declaring entities → ${target}, the entities' text in the output`, { timeout: 180_000 }, async () => {
      const r = await convert(dbk, target);
      assert.ok(r.ok, r.ok ? '' : `${r.error.message} (${r.error.detail ?? ''})`);
      if (!r.ok) return;
      if (target === 'pdf') assert.ok(pdfPages(r.output.path) >= 1);
      const text = textOf(r.output.path).replace(/\s+/g, ' ');
      for (const expected of [/Upgrading to Quillwork 2\.4/, /Quillwork 2\.4 from Harbour (&amp;|&) Finch/, /Back up your notebooks before upgrading Quillwork\./, /What changed in 2\.4/, /quillwork\.example\/notes/]) {
        assert.match(text, expected, `${target}: ${text.slice(0, 400)}`);
      }
      assert.doesNotMatch(text, /&(product|version|full|vendor|warning|site);/);
    });
  }

  test('preflight expands too and says how many references it expanded', async () => {
    const r = await conv.preflight(dbk, 'dbk', 'html');
    assert.ok(r.ok, r.ok ? '' : r.error.message);
    if (r.ok) assert.equal(r.facts.entity_references, 13);
  });

  // LibreOffice 7.4 cannot load a flat ODF file that declares an entity ("source file could not
  // be loaded", tried by hand with soffice --convert-to): this one converting shows the engines
  // read the pre-pass's copy, not the upload (pandoc and librsvg would expand entities themselves).
  test('a flat ODF text declaring an internal entity → pdf through LibreOffice, which only the expanded copy lets it load', { timeout: 180_000 }, async () => {
    const fodt = join(dir, 'entity.fodt');
    await writeFile(fodt, [
      '<?xml version="1.0" encoding="UTF-8"?>',
      '<!DOCTYPE office:document [<!ENTITY product "Quillwork Flat">]>',
      '<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.text">',
      '<office:body><office:text><text:p>Made by &product; today.</text:p></office:text></office:body></office:document>',
      '',
    ].join('\n'));
    const r = await convert(fodt, 'pdf');
    assert.ok(r.ok, r.ok ? '' : `${r.error.message} (${r.error.detail ?? ''})`);
    if (r.ok) assert.match(textOf(r.output.path), /Made by Quillwork Flat today\./);
  });

  // SVGO's test file (test/corpus/NOTICE.md): ns_extend, ns_ai and ns_graphs in attributes, and
  // a Viewport entity holding the only shape, a black 49 × 29 rectangle at the top left.
  const illustrator = packageFile('test/corpus/svg/svgo-entities.svg');
  test('an Illustrator SVG (SVGO\'s test file) → png: the rectangle from the Viewport entity is drawn', { timeout: 120_000 }, async () => {
    const r = await convert(illustrator, 'png');
    assert.ok(r.ok, r.ok ? '' : `${r.error.message} (${r.error.detail ?? ''})`);
    if (!r.ok) return;
    const meta = await sharp(r.output.path).metadata();
    assert.ok(Math.abs((meta.width ?? 0) - 583) <= 1 && meta.height === 45, `${meta.width}×${meta.height}`);
    const inside = await colourAt(r.output.path, 20, 12);
    const outside = await colourAt(r.output.path, 300, 20);
    assert.ok(inside.every((c) => c < 40), `inside the rectangle: ${inside.join(',')}`);
    assert.ok(outside.every((c) => c > 215), `outside it: ${outside.join(',')}`);
  });

  test('an Illustrator SVG (SVGO\'s test file) → pdf', { timeout: 120_000 }, async () => {
    const r = await convert(illustrator, 'pdf');
    assert.ok(r.ok, r.ok ? '' : `${r.error.message} (${r.error.detail ?? ''})`);
    if (r.ok) assert.equal(pdfPages(r.output.path), 1);
  });

  // The form the issue names: the SVG namespace itself comes from an entity (`xmlns="&ns_svg;"`),
  // so an engine that did not get the expanded copy would draw nothing.
  test('an Illustrator-style SVG whose default namespace is an entity → png and pdf', { timeout: 120_000 }, async () => {
    const svg = join(dir, 'ns-entities.svg');
    await writeFile(svg, [
      '<?xml version="1.0" encoding="utf-8"?>',
      '<!-- Generator: Adobe Illustrator 24.0.0, SVG Export Plug-In . SVG Version: 6.00 Build 0)  -->',
      '<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd" [',
      '\t<!ENTITY ns_extend "http://ns.adobe.com/Extensibility/1.0/">',
      '\t<!ENTITY ns_ai "http://ns.adobe.com/AdobeIllustrator/10.0/">',
      '\t<!ENTITY ns_svg "http://www.w3.org/2000/svg">',
      '\t<!ENTITY ns_xlink "http://www.w3.org/1999/xlink">',
      '\t<!ENTITY fill "#e0301e">',
      ']>',
      '<svg version="1.1" xmlns:x="&ns_extend;" xmlns:i="&ns_ai;" xmlns="&ns_svg;" xmlns:xlink="&ns_xlink;" x="0px" y="0px" width="120px" height="80px" viewBox="0 0 120 80" xml:space="preserve">',
      '<rect x="10" y="10" width="100" height="60" fill="&fill;"/>',
      '</svg>',
      '',
    ].join('\n'));
    const png = await convert(svg, 'png');
    assert.ok(png.ok, png.ok ? '' : `${png.error.message} (${png.error.detail ?? ''})`);
    if (png.ok) {
      const [r, g, b] = await colourAt(png.output.path, 58, 38);
      assert.ok((r ?? 0) > 200 && (g ?? 255) < 80 && (b ?? 255) < 60, `the red rectangle: ${r},${g},${b}`);
    }
    const pdf = await convert(svg, 'pdf');
    assert.ok(pdf.ok, pdf.ok ? '' : pdf.error.message);
    if (pdf.ok) assert.equal(pdfPages(pdf.output.path), 1);
  });
});

describe('entity attacks stay refused, with a message naming the cause (issue 21)', () => {
  const svg = (prolog: string, body: string): string => `<?xml version="1.0"?>${prolog}<svg xmlns="http://www.w3.org/2000/svg" width="200" height="40"><text x="5" y="20">${body}</text></svg>`;
  const dbk = (prolog: string, body: string): string => `<?xml version="1.0"?>${prolog}<article><title>T</title><para>${body}</para></article>`;
  const lols = ['<!ENTITY lol "lol">', ...Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i || ''};`.repeat(10)}">`)].join('');
  const cases: { name: string; file: string; content: () => string; targets: string[]; message: RegExp }[] = [
    { name: 'billion laughs', file: 'lol.svg', content: () => svg(`<!DOCTYPE svg [${lols}]>`, '&lol9;'), targets: ['png', 'pdf'], message: /entities expand to more than 10,000,000 characters \(an entity expansion bomb/ },
    { name: 'a quadratic blow-up', file: 'quadratic.dbk', content: () => dbk(`<!DOCTYPE article [<!ENTITY big "${'A'.repeat(40_000)}">]>`, '&big;'.repeat(400)), targets: ['html', 'pdf'], message: /entities expand to more than 10,000,000 characters/ },
    { name: 'an external SYSTEM entity naming the canary file', file: 'xxe.dbk', content: () => dbk(`<!DOCTYPE article [<!ENTITY ok "fine"><!ENTITY xxe SYSTEM "file://${join(dir, 'canary.txt')}">]>`, '&ok; &xxe;'), targets: ['html', 'docx', 'pdf'], message: /declares the external entity "xxe" \(SYSTEM\), which would read another file or URL; external entities are refused/ },
    { name: 'an external SYSTEM entity naming the canary file, in an SVG', file: 'xxe.svg', content: () => svg(`<!DOCTYPE svg [<!ENTITY xxe SYSTEM "${join(dir, 'canary.txt')}">]>`, '&xxe;'), targets: ['png', 'pdf'], message: /declares the external entity "xxe" \(SYSTEM\)/ },
    { name: 'a parameter entity pulling a DTD from the loopback listener', file: 'pe.svg', content: () => svg(`<!DOCTYPE svg [<!ENTITY % remote SYSTEM "http://127.0.0.1:${port}/evil.dtd"> %remote;]>`, '&leak;'), targets: ['png', 'pdf'], message: /declares the parameter entity "%remote": parameter entities pull in other DTDs and are refused/ },
    { name: 'a reference to an undeclared entity', file: 'undeclared.dbk', content: () => dbk('<!DOCTYPE article [<!ENTITY ok "fine">]>', '&ok; &leak;'), targets: ['html', 'pdf'], message: /uses the entity "&leak;" without declaring it in its DOCTYPE/ },
  ];
  for (const c of cases) {
    test(`${c.name} is refused`, { timeout: 120_000 }, async () => {
      const input = join(dir, c.file);
      await writeFile(input, c.content());
      for (const target of c.targets) {
        const started = Date.now();
        const r = await convert(input, target);
        assert.equal(r.ok, false, `${c.file} → ${target} converted`);
        if (r.ok) continue;
        assert.equal(r.error.code, 'conversion_failed');
        assert.match(r.error.message, c.message, `${c.file} → ${target}`);
        assert.ok(Date.now() - started < 30_000, `${c.file} → ${target} took ${Date.now() - started} ms`);
      }
    });
  }

  test('nothing reached the listener and no output holds the canary', async () => {
    assert.deepEqual(hits, []);
    for (const f of (await readdir(dir)).filter((name) => name.startsWith('out-'))) {
      assert.doesNotMatch(await readFile(join(dir, f), 'latin1'), new RegExp(CANARY), f);
      if (f.endsWith('.pdf')) assert.doesNotMatch(tool('/usr/bin/pdftotext', [join(dir, f), '-']), new RegExp(CANARY), f);
    }
  });
});
