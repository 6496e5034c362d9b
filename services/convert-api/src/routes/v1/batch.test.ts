import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Converter } from '@mailconv/converter';
import { findProjectRoot } from '@mailconv/platform';
import { assertAnswersMatchDocument, recordAnswers, testBackends, type RecordedAnswer } from '@mailconv/platform/testing';
import { useConvertApp } from './api.test-support.js';

/**
 * Batches (option `batch`, issue 24): a zip of files → a zip of each file converted plus
 * manifest.json; one unit per file, failures refunded. The archives are made by Info-ZIP's
 * zip from real files of public projects' test suites (packages/converter/test/corpus,
 * NOTICE.md there) and read back with Info-ZIP's unzip and poppler's pdfinfo.
 */
const CORPUS = join(findProjectRoot(), 'packages', 'converter', 'test', 'corpus');
/** Nineteen real files of as many formats, and one that is no format at all: 20 in all. */
const MIXED: Record<string, string> = {
  'sheets/smallpop.csv': 'csv/rust-csv-smallpop.csv',
  'office/lists.doc': 'doc/apachepoi-Lists.doc',
  'office/report.docx': 'docx/mammoth-comments.docx',
  // Same name, other format: its PDF becomes "report (2).pdf".
  'office/report.odt': 'odt/odfdo-chair.odt',
  'office/message.rtf': 'rtf/textract-raw_text.rtf',
  'slides/example.odp': 'odp/odfdo-example.odp',
  'slides/show.ppt': 'ppt/apachepoi-SampleShow.ppt',
  'slides/notes.pptx': 'pptx/python-pptx-prs-notes.pptx',
  'sheets/table.ods': 'ods/odfdo-simple_table.ods',
  'sheets/raw.xlsx': 'xlsx/textract-raw_text.xlsx',
  'images/alpha.gif': 'gif/image-rs-alpha_gif_a.gif',
  'images/portrait.jpg': 'jpg/image-rs-portrait_2.jpg',
  'images/basi2c08.png': 'png/image-rs-basi2c08.png',
  'images/fax4.tiff': 'tiff/image-rs-fax4.tiff',
  'images/lossless.webp': 'webp/image-rs-lossless-simple.webp',
  'images/chart.svg': 'svg/resvg-chart.svg',
  'web/about.html': 'html/go-org-blorg-about.html',
  'web/list.md': 'md/markdown-it-block-list-nested.md',
  'pdf/annotations.pdf': 'pdf/qpdf-annotations-rotated-90.pdf',
};
const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

let converter: Converter;
let work: string;

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'convert-batch-'));
  converter = await Converter.create({ workDir: join(work, 'engine'), libreoffice: { instances: 1 } });
});
after(async () => {
  await converter.close();
  await rm(work, { recursive: true, force: true });
});

let made = 0;
/** Info-ZIP's zip of a folder built from corpus files (`from`) and literal contents. */
async function zipOf(from: Record<string, string>, literal: Record<string, Buffer | string> = {}, extra: (root: string) => Promise<void> = async () => undefined): Promise<Buffer> {
  const root = join(work, `src-${made++}`);
  for (const [name, corpus] of Object.entries(from)) {
    await mkdir(dirname(join(root, name)), { recursive: true });
    await copyFile(join(CORPUS, corpus), join(root, name));
  }
  for (const [name, content] of Object.entries(literal)) {
    await mkdir(dirname(join(root, name)), { recursive: true });
    await writeFile(join(root, name), content);
  }
  await mkdir(root, { recursive: true });
  await extra(root);
  execFileSync('/usr/bin/zip', ['-q', '-r', '-y', `${root}.zip`, '.'], { cwd: root });
  return readFile(`${root}.zip`);
}

/** C0 controls, DEL, C1 controls and the bidi embeddings, overrides and isolates: none may stand in a name people list. */
// eslint-disable-next-line no-control-regex
const UNSAFE_NAME = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u;

/** A tar made by Python’s own tarfile module, as a person scripting uploads would (issue 45). */
function pythonTar(files: Record<string, string>): Buffer {
  const script = 'import io, json, sys, tarfile\nbuf = io.BytesIO()\nwith tarfile.open(fileobj=buf, mode="w") as t:\n    for n, d in json.load(sys.stdin).items():\n        b = d.encode(); i = tarfile.TarInfo(n); i.size = len(b); i.mode = 0o644; t.addfile(i, io.BytesIO(b))\nsys.stdout.buffer.write(buf.getvalue())';
  return execFileSync('/usr/bin/python3', ['-c', script], { input: JSON.stringify(files) });
}

/** A zip's member names as Python's zipfile reads them, sorted. */
function zipNames(path: string): string[] {
  return (JSON.parse(execFileSync('/usr/bin/python3', ['-c', 'import json, sys, zipfile; print(json.dumps(zipfile.ZipFile(sys.argv[1]).namelist()))', path]).toString()) as string[]).sort();
}

/** An archive's member names as libarchive's bsdtar lists them (raw bytes, one a line). */
function bsdtarNames(path: string): string[] {
  return execFileSync('/usr/bin/bsdtar', ['-tf', path]).toString('utf8').split('\n').filter(Boolean);
}

for (const backend of testBackends()) {
  describe(`batches on ${backend}`, () => {
    const fx = useConvertApp(backend, { storage: () => join(work, `storage-${backend}`), converter: () => converter, email: `batch-${backend}@example.com` });
    let answers: RecordedAnswer[];
    before(() => {
      answers = recordAnswers(fx.app);
    });
    const auth = () => ({ authorization: `Bearer ${fx.key}` });
    const upload = async (zip: Buffer, filename = 'files.zip') => {
      const boundary = 'batch-boundary';
      const body = Buffer.concat([Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="${filename}"\r\ncontent-type: application/zip\r\n\r\n`), zip, Buffer.from(`\r\n--${boundary}--\r\n`)]);
      const res = await fx.app.inject({ method: 'POST', url: '/api/v1/upload', headers: { ...auth(), 'content-type': `multipart/form-data; boundary=${boundary}` }, payload: body });
      assert.equal(res.statusCode, 201, res.body);
      return (res.json() as { upload_id: string }).upload_id;
    };
    /** POST /convert waiting its longest (120 s), then the record polled until the batch is done. */
    const convert = async (payload: Record<string, unknown>) => {
      let res = await fx.app.inject({ method: 'POST', url: '/api/v1/convert?wait=120', headers: { ...auth(), 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
      while (res.statusCode === 200 && ['queued', 'processing'].includes(res.json().status)) {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        res = await fx.app.inject({ method: 'GET', url: new URL(res.json().status_url).pathname, headers: auth() });
      }
      return res;
    };
    const used = async () => ((await fx.app.inject({ method: 'GET', url: '/api/v1/account/usage', headers: auth() })).json() as { quota: { used: number } }).quota.used;

    test('a zip of 20 mixed files → a zip of 19 PDFs and a manifest; 19 units charged, the file that failed refunded', { timeout: 600_000 }, async () => {
      const zip = await zipOf(MIXED, { 'misc/noise.bin': Buffer.from([0, 1, 2, 3, 0xff, 0xfe, 0, 0, 9, 9]), '__MACOSX/office/._report.docx': 'fork' });
      const id = await upload(zip, 'mixed.zip');
      const before = await used();
      const res = await convert({ upload_id: id, target_format: 'pdf', batch: true });
      assert.equal(res.statusCode, 200, res.body);
      const record = res.json() as { id: string; status: string; options: { batch?: boolean }; output: { format: string; sha256: string; files: { total: number; converted: number; failed: number } }; download_url: string };
      assert.equal(record.status, 'completed', res.body);
      assert.equal(record.options.batch, true);
      assert.equal(record.output.format, 'zip');
      assert.deepEqual(record.output.files, { total: 20, converted: 19, failed: 1 });
      assert.equal((await used()) - before, 19);

      const got = await fx.app.inject({ method: 'GET', url: new URL(record.download_url).pathname, headers: auth() });
      assert.equal(got.statusCode, 200);
      assert.equal(sha256(got.rawPayload), record.output.sha256);
      const out = join(work, `out-${backend}.zip`);
      await writeFile(out, got.rawPayload);
      const names = execFileSync('/usr/bin/unzip', ['-Z1', out]).toString().trim().split('\n');
      assert.equal(names.length, 20);
      assert.ok(names.includes('office/report.pdf') && names.includes('office/report (2).pdf'), names.join(', '));
      const manifest = JSON.parse(execFileSync('/usr/bin/unzip', ['-p', out, 'manifest.json']).toString()) as {
        target_format: string; files: number; converted: number; failed: number;
        entries: { source: string; source_format: string | null; source_sha256: string; status: string; output: string | null; sha256: string | null; error: { code: string } | null }[];
      };
      assert.deepEqual([manifest.target_format, manifest.files, manifest.converted, manifest.failed], ['pdf', 20, 19, 1]);
      const failed = manifest.entries.filter((e) => e.status === 'failed');
      assert.deepEqual(failed.map((e) => [e.source, e.error?.code]), [['misc/noise.bin', 'unsupported_format']]);
      for (const entry of manifest.entries) {
        if (entry.source !== 'misc/noise.bin') assert.equal(entry.source_sha256, sha256(await readFile(join(CORPUS, MIXED[entry.source]!))), entry.source);
        if (entry.status !== 'completed') continue;
        const pdf = execFileSync('/usr/bin/unzip', ['-p', out, entry.output!]);
        assert.equal(entry.sha256, sha256(pdf), entry.output!);
        // Each is a PDF poppler reads, with at least one page.
        const info = execFileSync('/usr/bin/pdfinfo', ['-'], { input: pdf }).toString();
        assert.match(info, /^Pages:\s+[1-9]/m, entry.source);
      }
    });

    test('refused before any charge: more files than the month has left (429), a link (422), not an archive (400 naming batch); a batch where nothing converts fails and is refunded', { timeout: 120_000 }, async () => {
      const accountId = (await fx.admin.accounts.findAccountByEmail(`batch-${backend}@example.com`))!.id;
      const start = await used();
      // Leave 3 units of the month's 10,000.
      const taken = 10_000 - start - 3;
      assert.ok((await fx.admin.quota.charge(accountId, taken, 10_000, new Date())).ok);
      try {
        const five = await upload(await zipOf({}, { 'a.md': '# a', 'b.md': '# b', 'c.md': '# c', 'd.md': '# d', 'e.md': '# e' }));
        const res = await convert({ upload_id: five, target_format: 'html', batch: true });
        assert.equal(res.statusCode, 429, res.body);
        assert.equal(res.json().error, 'quota_exceeded');
        assert.match(res.json().message, /needs 5 conversions \(one per file\); 3 of this month’s 10000 are left/);
        assert.equal(await used(), 10_000 - 3);
      } finally {
        await fx.admin.quota.refundCharge(accountId, new Date().toISOString().slice(0, 7), taken);
      }
      assert.equal(await used(), start);

      const linked = await upload(await zipOf({}, { 'a.md': '# a' }, async (root) => symlink('a.md', join(root, 'b.md'))));
      const refused = await convert({ upload_id: linked, target_format: 'html', batch: true });
      assert.equal(refused.statusCode, 422, refused.body);
      assert.match(refused.json().message, /holds links; a batch converts files only/);

      const md = await upload(Buffer.from('# not an archive\n'), 'note.md');
      const notArchive = await convert({ upload_id: md, target_format: 'html', batch: true });
      assert.equal(notArchive.statusCode, 400, notArchive.body);
      assert.equal(notArchive.json().field, 'batch');
      assert.equal(await used(), start);

      const noise = await upload(await zipOf({}, { 'x.bin': Buffer.from([0, 0, 1, 0xfe]), 'y.bin': Buffer.from([0, 0, 2, 0xfd]) }));
      const none = await convert({ upload_id: noise, target_format: 'pdf', batch: true });
      assert.equal(none.statusCode, 200, none.body);
      assert.equal(none.json().status, 'failed');
      assert.match(none.json().error.message, /None of the 2 files could be converted to pdf/);
      assert.equal(await used(), start);
    });

    test('control characters and bidi overrides leave the names of a batch’s zip and of a repacked archive; the manifest keeps the original, escaped (issue 45)', { timeout: 120_000 }, async () => {
      const hostile = {
        'ctl\x1b[31mred.txt': 'red\n',
        'a\r\nX-Injected: 1.txt': 'crlf\n',
        'del\x7fname.txt': 'del\n',
        'evil\u202etxt.exe.txt': 'bidi\n',
        'iso\u2066late.txt': 'isolate\n',
        // The first cleans to this name: both kept.
        'ctl[31mred.txt': 'plain\n',
      };
      const tar = pythonTar(hostile);
      const res = await convert({ upload_id: await upload(tar, 'names.tar'), target_format: 'pdf', batch: true });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().status, 'completed', res.body);
      assert.deepEqual(res.json().output.files, { total: 6, converted: 6, failed: 0 });
      const out = join(work, `names-${backend}.zip`);
      await writeFile(out, (await fx.app.inject({ method: 'GET', url: new URL(res.json().download_url).pathname, headers: auth() })).rawPayload);
      const names = zipNames(out);
      assert.deepEqual(names, ['aX-Injected: 1.pdf', 'ctl[31mred (2).pdf', 'ctl[31mred.pdf', 'delname.pdf', 'eviltxt.exe.pdf', 'isolate.pdf', 'manifest.json']);
      for (const name of [...names, ...bsdtarNames(out)]) assert.doesNotMatch(name, UNSAFE_NAME, JSON.stringify(name));
      const raw = execFileSync('/usr/bin/unzip', ['-p', out, 'manifest.json']);
      // Not one control byte (but the JSON's own line feeds), DEL or bidi mark in the manifest's bytes.
      assert.doesNotMatch(raw.toString('utf8').replace(/\n/g, ''), UNSAFE_NAME, raw.toString('utf8'));
      const manifest = JSON.parse(raw.toString('utf8')) as { entries: { source: string; output: string | null }[] };
      // The original names, exact once the JSON is read.
      assert.deepEqual(manifest.entries.map((e) => e.source).sort(), Object.keys(hostile).sort());
      assert.deepEqual(manifest.entries.map((e) => e.output).sort(), names.filter((n) => n !== 'manifest.json'));
      assert.match(raw.toString('utf8'), /"source": "ctl\\u001b\[31mred\.txt"/);
      assert.match(raw.toString('utf8'), /"source": "evil\\u202etxt\.exe\.txt"/);
      assert.match(raw.toString('utf8'), /"source": "del\\u007fname\.txt"/);

      // Archive → archive (no batch): the repacked zip's names are cleaned too, and no file is lost.
      const repack = await convert({ upload_id: await upload(tar, 'names.tar'), target_format: 'zip' });
      assert.equal(repack.statusCode, 200, repack.body);
      assert.equal(repack.json().status, 'completed', repack.body);
      const zipped = join(work, `repacked-${backend}.zip`);
      await writeFile(zipped, (await fx.app.inject({ method: 'GET', url: new URL(repack.json().download_url).pathname, headers: auth() })).rawPayload);
      const repacked = zipNames(zipped);
      assert.equal(repacked.length, 6, repacked.join(', '));
      for (const name of [...repacked, ...bsdtarNames(zipped)]) assert.doesNotMatch(name, UNSAFE_NAME, JSON.stringify(name));
      const contents = repacked.map((n) => execFileSync('/usr/bin/python3', ['-c', 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))', zipped, n]).toString()).sort();
      assert.deepEqual(contents, Object.values(hostile).sort());
    });

    test('every answer matches the OpenAPI document', async () => {
      await assertAnswersMatchDocument(fx.app, answers);
    });
  });
}
