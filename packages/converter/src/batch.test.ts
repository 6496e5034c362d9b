// Batches (option `batch`, issue 24): an archive's files converted one by one, delivered as
// a zip with a manifest. Archives are made by independent tools (Info-ZIP's zip, bsdtar) and
// the results read back with Info-ZIP's unzip, never with the code that wrote them.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { OutputNames } from './batch.js';
import { Converter } from './converter.js';
import { isArchiverJunk } from './guards/archive-guard.js';
import { sha256sum, scratchDir, tool, toolBytes } from './testing/tools.js';

let dir: string;
let conv: Converter;
let n = 0;

before(async () => {
  dir = await scratchDir('conv-batch-');
  conv = await Converter.create({ workDir: join(dir, 'work'), timeoutMs: 60_000, libreoffice: { instances: 1 } });
});
after(async () => {
  await conv.close();
  await rm(dir, { recursive: true, force: true });
});

/** A folder of files (name → content; `null` makes a sub-folder) zipped by Info-ZIP (`-y` stores links as links). */
async function zipOf(files: Record<string, string | Buffer>, extra: (root: string) => Promise<void> = async () => undefined): Promise<string> {
  const root = join(dir, `src-${n++}`);
  await mkdir(root);
  for (const [name, content] of Object.entries(files)) {
    await mkdir(join(root, name, '..'), { recursive: true });
    await writeFile(join(root, name), content);
  }
  await extra(root);
  const zip = `${root}.zip`;
  execFileSync('/usr/bin/zip', ['-q', '-r', '-y', zip, '.'], { cwd: root });
  return zip;
}

const batch = (input: string, target = 'html', options: Record<string, unknown> = {}, format = 'zip') =>
  conv.convert({ inputPath: input, sourceFormat: format, targetFormat: target, options: { ...options, batch: true }, outputPath: join(dir, 'out', `${n++}.zip`) });

interface Manifest {
  files: number;
  converted: number;
  failed: number;
  entries: { source: string; status: string; output: string | null; sha256: string | null; source_sha256: string; error: { code: string } | null }[];
}
const manifestOf = (zip: string) => JSON.parse(tool('/usr/bin/unzip', ['-p', zip, 'manifest.json'])) as Manifest;

describe('batch: each file of an archive converted', () => {
  test('names keep their folders and the target extension; a taken name gets (2); junk is skipped; a file that fails is listed and the rest go on', async () => {
    const zip = await zipOf({
      'a.md': '# Alpha\n',
      'notes/b.md': '# Beta\n',
      'notes/b.markdown': '# Beta again\n',
      'broken.bin': Buffer.from([0, 1, 2, 3, 0xff, 0xfe, 0, 0, 7]),
      '__MACOSX/._a.md': 'resource fork',
      '.DS_Store': 'finder',
    });
    const r = await batch(zip);
    if (!r.ok) assert.fail(JSON.stringify(r.error));
    assert.equal(r.output.format, 'zip');
    assert.deepEqual(r.output.files, { total: 4, converted: 3, failed: 1 });
    assert.equal(r.output.sha256, sha256sum(r.output.path));
    const names = tool('/usr/bin/unzip', ['-Z1', r.output.path]).trim().split('\n').sort();
    assert.deepEqual(names, ['a.html', 'manifest.json', 'notes/b (2).html', 'notes/b.html']);
    const m = manifestOf(r.output.path);
    assert.deepEqual([m.files, m.converted, m.failed], [4, 3, 1]);
    assert.deepEqual(m.entries.map((e) => [e.source, e.status, e.output]), [
      ['a.md', 'completed', 'a.html'],
      ['broken.bin', 'failed', null],
      ['notes/b.markdown', 'completed', 'notes/b.html'],
      ['notes/b.md', 'completed', 'notes/b (2).html'],
    ]);
    assert.equal(m.entries[1]?.error?.code, 'unsupported_format');
    for (const e of m.entries.filter((x) => x.output)) {
      // The digest in the manifest is the file's in the zip, as unzip reads it.
      const bytes = toolBytes('/usr/bin/unzip', ['-p', r.output.path, e.output!]);
      assert.equal(e.sha256, createHashHex(bytes), e.output!);
    }
    assert.match(toolBytes('/usr/bin/unzip', ['-p', r.output.path, 'notes/b (2).html']).toString(), /Beta<\/h1>/);
  });

  test('refused before anything runs: a link, no file, more files than the cap, a non-archive; none converting fails the batch', async () => {
    const linked = await zipOf({ 'a.md': '# A\n' }, async (root) => symlink('a.md', join(root, 'b.md')));
    const checked = await conv.preflight(linked, 'zip', 'html', { batch: true });
    assert.equal(checked.ok, false);
    assert.match(checked.ok ? '' : checked.error.message, /holds links; a batch converts files only/);
    const r1 = await batch(linked);
    assert.match(r1.ok ? '' : r1.error.message, /holds links/);

    const onlyJunk = await zipOf({ '__MACOSX/._x': 'x', '.DS_Store': 'y' });
    assert.equal((await batch(onlyJunk)).ok, false);
    const pre = await conv.preflight(onlyJunk, 'zip', 'html', { batch: true });
    assert.match(pre.ok ? '' : pre.error.message, /holds no file to convert/);

    const many: Record<string, string> = {};
    for (let i = 0; i < 101; i++) many[`f${i}.md`] = `# ${i}\n`;
    const tooMany = await conv.preflight(await zipOf(many), 'zip', 'html', { batch: true });
    assert.match(tooMany.ok ? '' : tooMany.error.message, /more than 100 files; a batch converts at most 100/);

    const plan = conv.plan('pdf', 'html', { batch: true });
    assert.equal(plan.ok, false);
    assert.equal(plan.ok ? '' : plan.error.field, 'batch');

    const none = await batch(await zipOf({ 'x.bin': Buffer.from([0, 0, 0, 1, 2, 0xfe]) }));
    assert.equal(none.ok, false);
    assert.match(none.ok ? '' : none.error.message, /None of the 1 files could be converted to html/);
  });

  test('a tar with a FIFO is refused by the archive guard; a tgz of files converts', async () => {
    const root = join(dir, 'fifo');
    await mkdir(root);
    await writeFile(join(root, 'a.md'), '# A\n');
    execFileSync('/usr/bin/mkfifo', [join(root, 'pipe')]);
    const tar = join(dir, 'fifo.tar');
    execFileSync('/usr/bin/bsdtar', ['-cf', tar, '-C', root, 'a.md', 'pipe']);
    const r = await batch(tar, 'html', {}, 'tar');
    assert.match(r.ok ? '' : r.error.message, /special file/);
    const tgz = join(dir, 'files.tgz');
    execFileSync('/usr/bin/bsdtar', ['-czf', tgz, '-C', root, 'a.md']);
    const ok = await batch(tgz, 'txt', {}, 'tgz');
    if (!ok.ok) assert.fail(JSON.stringify(ok.error));
    assert.equal(toolBytes('/usr/bin/unzip', ['-p', ok.output.path, 'a.txt']).toString().trim(), 'A');
  });

  test('archiver metadata and output names', () => {
    assert.equal(isArchiverJunk('__MACOSX/docs/._a.docx'), true);
    assert.equal(isArchiverJunk('docs/.DS_Store'), true);
    assert.equal(isArchiverJunk('docs/report.docx'), false);
    const names = new OutputNames();
    assert.equal(names.name('manifest.xml', 'json'), 'manifest (2).json');
    assert.equal(names.name('Report.DOCX', 'pdf'), 'Report.pdf');
    assert.equal(names.name('report.odt', 'pdf'), 'report (2).pdf');
    assert.equal(names.name('README', 'pdf'), 'README.pdf');
  });
});

function createHashHex(bytes: Buffer): string {
  return execFileSync('/usr/bin/sha256sum', { input: bytes }).toString().split(' ')[0] as string;
}
