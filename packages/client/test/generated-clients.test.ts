import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { D } from '@mailconv/test-rig';
import { convertExamples, emailExamples } from './openapi-fetch-examples.js';
import { createAccount, FIXTURES, startConvertService, startEmailService, type RunningService } from './services.test-support.js';

// Issue #29: clients generated from the served documents (openapi-typescript types,
// openapi-fetch calls) run the README's examples against both running services: verify,
// batch, a job and its CSV; upload, convert, download with the SHA-256 checked, merge.
// Every answer is also checked against the document by the suite's answer guard.

describe('a client generated from the email service’s document', () => {
  let svc: RunningService;
  let key: string;
  before(async () => {
    svc = await startEmailService();
    key = createAccount('email-api', svc.env, 'generated@example.test', 'scale');
  });
  after(async () => svc?.close());

  test('verify, batch, a job and its results as CSV', async () => {
    const list = [`alice@${D.valid}`, `nobody@${D.valid}`, `x@${D.nxdomain}`, 'not-an-address'];
    const { single, batch, job, csv } = await emailExamples(svc.url, key, { single: `alice@${D.valid}`, list });
    assert.equal(single.email, `alice@${D.valid}`);
    assert.equal(typeof single.is_valid, 'boolean');
    assert.equal(batch.results.length, list.length);
    assert.deepEqual(batch.results.map((r) => r.email), list);
    assert.equal(job.status, 'completed');
    const lines = csv.trim().split('\r\n');
    assert.equal(lines[0], 'email,is_valid,status,reason,score,suggestion');
    assert.deepEqual(lines.slice(1).map((l) => l.split(',')[0]), list);
    assert.equal(lines[3]!.split(',')[2], batch.results[2]!.status, 'the job and the batch agree');
  });
});

describe('a client generated from the conversion service’s document', () => {
  let svc: RunningService;
  let key: string;
  let work: string;
  before(async () => {
    svc = await startConvertService();
    key = createAccount('convert-api', svc.env, 'generated@example.test', 'api');
    work = await mkdtemp(join(tmpdir(), 'generated-client-'));
  });
  after(async () => {
    await svc?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  test('upload, convert, download with the SHA-256 checked, merge', async () => {
    const { converted, bytes, merged, pdf } = await convertExamples(svc.url, key, { image: join(FIXTURES, 'sample.png'), documents: [join(FIXTURES, 'sample.docx'), join(FIXTURES, 'sample.png')] });
    assert.equal(converted.status, 'completed');
    assert.equal(converted.output?.format, 'webp');
    assert.equal(bytes.subarray(8, 12).toString('latin1'), 'WEBP');
    assert.equal(createHash('sha256').update(bytes).digest('hex'), converted.output?.sha256);
    assert.equal(merged.status, 'completed');
    assert.equal(pdf.subarray(0, 5).toString('latin1'), '%PDF-');
    // An independent reader: two pages, the document's then the picture's.
    const file = join(work, 'merged.pdf');
    await writeFile(file, pdf);
    assert.match(execFileSync('pdfinfo', [file], { encoding: 'utf8' }), /^Pages:\s+2$/m);
  });
});
