// The conversion dashboard's batch and export controls (issue 24) in Debian's chromium,
// against the real service and engines, and an S3 server (s3rver from npm) on 127.0.0.1.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type RequestListener, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { checkLayout, openBrowser, signIn, type Browser } from './browser.test-support.js';
import { FIXTURES, createUser, startConvertService, type RunningService } from './services.test-support.js';

const PASSWORD = 'correct horse battery staple';
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const S3rver = createRequire(import.meta.url)('s3rver') as new (o: Record<string, unknown>) => { configureBuckets(): Promise<void>; callback(): RequestListener };

describe('conversion dashboard: an archive converted file by file and sent to a bucket, in chromium', { timeout: 180_000 }, () => {
  let svc: RunningService;
  let b: Browser;
  let work: string;
  let s3: Server;
  let endpoint: string;
  let reader: S3Client;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'dashboard-transfer-'));
    const store = new S3rver({ silent: true, directory: join(work, 's3'), configureBuckets: [{ name: 'reports' }] });
    await store.configureBuckets();
    s3 = createServer(store.callback());
    await new Promise<void>((resolve) => s3.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(s3.address() as AddressInfo).port}`;
    reader = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
    // Exports may go to the loopback S3 server over plain HTTP; every connection stays fenced to loopback.
    svc = await startConvertService({ CONVERT_EXPORT_ALLOW_INSECURE: 'true', CONVERT_DATA_DIR: join(work, 'data') });
    createUser('convert-api', svc.env, 'lin@example.test', 'pro', PASSWORD);
    b = await openBrowser(svc.url);
    await signIn(b.page, svc.url, 'lin@example.test', PASSWORD);
  });
  after(async () => {
    await b?.close();
    await svc?.close();
    reader?.destroy();
    s3?.closeAllConnections();
    await new Promise((resolve) => s3?.close(resolve));
    await rm(work, { recursive: true, force: true });
  });

  test('a zip dropped: "convert each file" offered, every file to PDF, the counts shown, the zip exported to the bucket under the key template and downloaded with the same bytes', async () => {
    const { page } = b;
    // A zip of two documents and one file nothing can read (Info-ZIP, as people make them).
    const src = join(work, 'papers');
    await mkdir(src);
    await copyFile(join(FIXTURES, 'sample.docx'), join(src, 'report.docx'));
    await copyFile(join(FIXTURES, 'sample.md'), join(src, 'notes.md'));
    await writeFile(join(src, 'noise.bin'), Buffer.from([0, 1, 2, 0xfe]));
    execFileSync('/usr/bin/zip', ['-q', '-r', join(work, 'papers.zip'), '.'], { cwd: src });
    const zip = await readFile(join(work, 'papers.zip'));

    await page.getByRole('link', { name: 'Convert' }).click();
    const transfer = await page.evaluateHandle(([data]) => {
      const dt = new DataTransfer();
      dt.items.add(new File([new Uint8Array(data)], 'papers.zip', { type: 'application/zip' }));
      return dt;
    }, [[...zip]] as [number[]]);
    await page.getByTestId('dropzone').dispatchEvent('drop', { dataTransfer: transfer });
    await page.getByTestId('detected').filter({ hasText: 'ZIP' }).waitFor();
    const each = page.getByLabel(/Convert each file inside the archive/);
    await each.waitFor();
    if (!(await each.isChecked())) await each.check();
    await page.getByLabel('Convert each file to').selectOption('pdf');
    assert.equal(await page.getByLabel(/One PDF per page/).count(), 0, 'no page split inside a batch');

    await page.getByTestId('export-options').locator('summary').click();
    await page.getByLabel('Endpoint').fill(endpoint);
    await page.getByLabel('Bucket').fill('reports');
    await page.getByLabel('Object key').fill('dash/{stem}-{date}.{ext}');
    await page.getByLabel('Access key ID').fill('S3RVER');
    await page.getByLabel('Secret access key').fill('a-secret-the-page-never-shows-again');
    await b.shot('convert-batch-export-options');
    await checkLayout(b, 'convert-batch-export-options');
    await page.getByRole('button', { name: 'Convert', exact: true }).click();

    await page.getByTestId('batch-files').filter({ hasText: '2 of 3 files converted, 1 failed' }).waitFor({ timeout: 120_000 });
    const exported = (await page.getByTestId('export-status').innerText()).trim();
    const m = /^Exported to s3:\/\/reports\/(dash\/papers-\d{4}-\d{2}-\d{2}\.zip) \(ETag ([0-9a-f]{32})\)\.$/.exec(exported);
    assert.ok(m, exported);
    const download = page.getByRole('link', { name: 'Download', exact: true }).first();
    const [file] = await Promise.all([page.waitForEvent('download'), download.click()]);
    const bytes = await readFile(await file.path());
    assert.deepEqual(execFileSync('/usr/bin/unzip', ['-Z1', await file.path()]).toString().trim().split('\n').sort(), ['manifest.json', 'notes.pdf', 'report.pdf']);
    const object = await reader.send(new GetObjectCommand({ Bucket: 'reports', Key: m[1] }));
    assert.equal(sha256(Buffer.from(await object.Body!.transformToByteArray())), sha256(bytes), 'the bucket holds the downloaded zip');
    assert.equal((object.ETag ?? '').replace(/"/g, ''), m[2]);
    assert.doesNotMatch(await page.locator('main').innerText(), /a-secret-the-page-never-shows-again/, 'the secret is in no text the page shows');
    await b.shot('convert-batch-exported');
    await checkLayout(b, 'convert-batch-exported', ['Download']);
  });

  test('an export that fails says so in the store’s words; the conversion is still downloadable', async () => {
    const { page } = b;
    await page.getByRole('link', { name: 'Convert' }).click();
    await page.getByTestId('dropzone').dispatchEvent('drop', {
      dataTransfer: await page.evaluateHandle(([data]) => {
        const dt = new DataTransfer();
        dt.items.add(new File([new Uint8Array(data)], 'figure.png', { type: 'image/png' }));
        return dt;
      }, [[...(await readFile(join(FIXTURES, 'sample.png')))]] as [number[]]),
    });
    await page.getByTestId('detected').filter({ hasText: 'PNG' }).waitFor();
    assert.equal(await page.getByLabel(/Convert each file inside the archive/).count(), 0, 'no batch choice for a single picture');
    await page.getByLabel('Convert to').selectOption('webp');
    await page.getByTestId('export-options').locator('summary').click();
    await page.getByLabel('Endpoint').fill(endpoint);
    await page.getByLabel('Bucket').fill('no-such-bucket');
    await page.getByLabel('Access key ID').fill('S3RVER');
    await page.getByLabel('Secret access key').fill('S3RVER');
    await page.getByRole('button', { name: 'Convert', exact: true }).click();
    await page.getByTestId('export-status').filter({ hasText: /^Export to s3:\/\/no-such-bucket failed: .*NoSuchBucket/ }).waitFor({ timeout: 90_000 });
    assert.equal(await page.getByRole('link', { name: 'Download', exact: true }).first().isVisible(), true);
    assert.deepEqual(b.foreign, []);
    assert.deepEqual(b.problems, []);
  });
});
