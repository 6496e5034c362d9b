// Perl POD through Perl's own formatters (issue 12): the sample is valid POD to podchecker, and
// each output is judged by another program (libmagic, xmllint's HTML parser, groff for man).
import assert from 'node:assert/strict';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Converter } from '../converter.js';
import { scratchDir, tool, toolStatus } from '../testing/tools.js';

const POD = '=pod\n\n=encoding utf8\n\n=head1 NAME\n\nQuarterly - a small POD document\n\n=head1 DESCRIPTION\n\nThis is a B<small> I<Quarterly> report, café.\n\n'
  + '=over 4\n\n=item * apples\n\n=item * oranges\n\n=back\n\n=cut\n';

let dir: string;
let conv: Converter;
let input: string;

before(async () => {
  dir = await scratchDir('conv-pod-');
  conv = await Converter.create({ workDir: join(dir, 'work'), timeoutMs: 60_000 });
  input = join(dir, 'doc.pod');
  await writeFile(input, POD);
});
after(async () => {
  await conv.close();
  await rm(dir, { recursive: true, force: true });
});

async function convert(to: string): Promise<{ path: string; engines: readonly string[] }> {
  const path = join(dir, `out.${to}`);
  const r = await conv.convert({ inputPath: input, sourceFormat: 'pod', targetFormat: to, outputPath: path });
  if (!r.ok) assert.fail(`pod → ${to}: ${JSON.stringify(r.error)}`);
  return { path, engines: r.engines };
}

test('the sample is valid POD to podchecker', () => {
  assert.equal(toolStatus('/usr/bin/podchecker', [input]), 0);
});

test('POD becomes HTML (no XML declaration), a man page and UTF-8 text; other targets go through the HTML', { timeout: 120_000 }, async () => {
  const html = await convert('html');
  assert.deepEqual(html.engines, ['pod']);
  assert.equal(tool('/usr/bin/file', ['-b', '--mime-type', html.path]).trim(), 'text/html');
  const body = await readFile(html.path, 'utf8');
  assert.doesNotMatch(body, /^<\?xml/);
  assert.match(tool('/usr/bin/xmllint', ['--html', '--xpath', 'string(//h1[1])', html.path]), /NAME/);
  assert.match(body, /café/);

  const man = await convert('man');
  assert.match(await readFile(man.path, 'utf8'), /^\.TH DOCUMENT 1 /m);
  assert.match(tool('/usr/bin/groff', ['-man', '-Tutf8', man.path]), /Quarterly - a small POD document/);

  const txt = await readFile((await convert('txt')).path, 'utf8');
  assert.match(txt, /This is a small \*Quarterly\* report, café\./);

  const rst = await convert('rst');
  assert.deepEqual(rst.engines, ['pod', 'pandoc']);
  assert.match(await readFile(rst.path, 'utf8'), /Quarterly/);
});
