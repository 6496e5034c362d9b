import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type RequestListener } from 'node:http';
import { createRequire } from 'node:module';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { D } from '@mailconv/test-rig';
import { createAccount, FIXTURES, ROOT, startConvertService, startEmailService, type RunningService } from './services.test-support.js';

const CLI = join(ROOT, 'packages', 'client', 'bin', 'mailconv.mjs');

/** Runs the CLI as its own process (asynchronously: the services answer from this process), killed after 60 s. */
function run(args: string[], env: Record<string, string>, cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('the mailconv CLI, run as a process against both running services', () => {
  let email: RunningService;
  let conv: RunningService;
  let env: Record<string, string>;
  let work: string;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'client-cli-'));
    // Exports may go to the test's S3 server on loopback over plain HTTP (every connection stays fenced to loopback).
    [email, conv] = await Promise.all([startEmailService(), startConvertService({ CONVERT_EXPORT_ALLOW_INSECURE: 'true' })]);
    env = {
      MAILCONV_EMAIL_URL: email.url,
      MAILCONV_EMAIL_KEY: createAccount('email-api', email.env, 'cli@example.test', 'scale'),
      MAILCONV_CONVERT_URL: conv.url,
      MAILCONV_CONVERT_KEY: createAccount('convert-api', conv.env, 'cli@example.test', 'api'),
    };
  });
  after(async () => {
    await Promise.all([email.close(), conv.close()]);
    await rm(work, { recursive: true, force: true });
  });

  test('verify addresses: text lines, --json, exit 0 when all valid and 6 when one is not', async () => {
    const ok = await run(['verify', `alice@${D.valid}`], env, work);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, new RegExp(`^alice@${D.valid.replace('.', '\\.')}\\tvalid\\t`));
    const mixed = await run(['verify', '--json', `alice@${D.valid}`, `x@${D.nxdomain}`], env, work);
    assert.equal(mixed.code, 6, mixed.stderr);
    const results = JSON.parse(mixed.stdout) as Array<{ email: string; status: string }>;
    assert.deepEqual(results.map((r) => r.status), ['valid', 'invalid']);
  });

  test('verify --file: a CSV through a job with a progress bar, the results written to a file', async () => {
    const list = join(work, 'list.csv');
    const emails = Array.from({ length: 25 }, (_, i) => `user${i}@${D.valid}`);
    await writeFile(list, `email\r\n${emails.join('\r\n')}\r\nx@${D.nxdomain}\r\n`);
    const res = await run(['verify', '--file', 'list.csv', '--json'], env, work);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, /verifying 100% 26\/26/);
    const summary = JSON.parse(res.stdout) as { total: number; valid: number; invalid: number; results_file: string };
    assert.deepEqual([summary.total, summary.valid, summary.invalid, summary.results_file], [26, 25, 1, 'list.results.csv']);
    const csv = (await readFile(join(work, 'list.results.csv'), 'utf8')).trim().split('\r\n');
    assert.equal(csv.length, 27);
    assert.match(csv[0]!, /^email,/);

    // Issue 23: --status and --columns; a wrong status is a usage error before anything is uploaded.
    const sendable = await run(['verify', '--file', 'list.csv', '--status', 'valid,risky', '--columns', 'all', '--out', 'sendable.csv'], env, work);
    assert.equal(sendable.code, 0, sendable.stderr);
    const kept = (await readFile(join(work, 'sendable.csv'), 'utf8')).trim().split('\r\n');
    assert.equal(kept.length, 26, 'the header and the 25 valid rows');
    assert.match(kept[0]!, /^email,result_email,is_valid,status,.*,free_provider$/);
    const bad = await run(['verify', '--file', 'list.csv', '--status', 'valid,good'], env, work);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /"good" is not one/);

    // Issue 45: the list's own formula-looking cells come back with a leading ' unless --keep-formulas.
    await writeFile(join(work, 'formulas.csv'), `email,note\r\nann@${D.valid},=1+2\r\n`);
    for (const [flags, out, row] of [[[], 'escaped.csv', `ann@${D.valid},'=1+2,`], [['--keep-formulas'], 'kept.csv', `ann@${D.valid},=1+2,`]] as const) {
      const res = await run(['verify', '--file', 'formulas.csv', ...flags, '--out', out], env, work);
      assert.equal(res.code, 0, res.stderr);
      const line = (await readFile(join(work, out), 'utf8')).split('\r\n')[1]!;
      assert.ok(line.startsWith(row), `${flags.join(' ') || 'default'}: ${line}`);
    }
  });

  test('convert report.docx --to pdf: progress, checksum verified on download, output written', async () => {
    await copyFile(join(FIXTURES, 'sample.docx'), join(work, 'report.docx'));
    const res = await run(['convert', 'report.docx', '--to', 'pdf', '--json'], env, work);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, /converting/);
    assert.match(res.stderr, /downloading 100%/);
    const out = JSON.parse(res.stdout) as { output: string; sha256: string; checksum_verified: boolean };
    assert.equal(out.output, 'report.pdf');
    assert.equal(out.checksum_verified, true);
    const pdf = await readFile(join(work, 'report.pdf'));
    assert.equal(pdf.subarray(0, 5).toString(), '%PDF-');
    assert.equal(createHash('sha256').update(pdf).digest('hex'), out.sha256);
  });

  test('convert --share-for: the printed share link downloads the same bytes without a key', async () => {
    await copyFile(join(FIXTURES, 'sample.docx'), join(work, 'shared.docx'));
    const res = await run(['convert', 'shared.docx', '--to', 'pdf', '--json', '--share-for', '600'], env, work);
    assert.equal(res.code, 0, res.stderr);
    const out = JSON.parse(res.stdout) as { sha256: string; share_url: string; share_expires_at: string };
    assert.match(out.share_url, /\/api\/v1\/shared\/sh_/);
    assert.ok(Date.parse(out.share_expires_at) - Date.now() <= 600_000);
    const got = await fetch(out.share_url);
    assert.equal(got.status, 200);
    assert.equal(createHash('sha256').update(Buffer.from(await got.arrayBuffer())).digest('hex'), out.sha256);
  });

  test('convert --batch: each file of a zip converted, a zip with manifest.json written and its counts printed', async () => {
    const src = join(work, 'batch-src');
    await mkdir(src);
    await copyFile(join(FIXTURES, 'sample.docx'), join(src, 'report.docx'));
    await copyFile(join(FIXTURES, 'sample.md'), join(src, 'notes.md'));
    await writeFile(join(src, 'noise.bin'), Buffer.from([0, 1, 2, 0xfe]));
    execFileSync('/usr/bin/zip', ['-q', '-r', join(work, 'papers.zip'), '.'], { cwd: src });
    const res = await run(['convert', 'papers.zip', '--to', 'pdf', '--batch'], env, work);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /Converted papers\.zip → papers-pdf\.zip .*\n2 of 3 files converted, 1 failed \(see manifest\.json; not charged\)\./);
    const names = execFileSync('/usr/bin/unzip', ['-Z1', join(work, 'papers-pdf.zip')]).toString().trim().split('\n').sort();
    assert.deepEqual(names, ['manifest.json', 'notes.pdf', 'report.pdf']);
  });

  test('convert --from-url: the service fetches the file (a page server on loopback the test admits) and the result is written', async () => {
    const pages = createServer((_req, res) => void res.writeHead(200, { 'content-type': 'text/markdown' }).end('# Fetched by the service\n'));
    await new Promise<void>((resolve) => pages.listen(0, '127.0.0.2', resolve));
    try {
      const url = `http://127.0.0.2:${(pages.address() as AddressInfo).port}/notes.md`;
      const res = await run(['convert', '--from-url', url, '--to', 'html', '--json'], env, work);
      assert.equal(res.code, 0, res.stderr);
      const out = JSON.parse(res.stdout) as { output: string; sha256: string };
      assert.equal(out.output, 'notes.html');
      assert.match(await readFile(join(work, 'notes.html'), 'utf8'), /Fetched by the service/);
      const usage = await run(['convert', 'x.md', '--from-url', url, '--to', 'html'], env, work);
      assert.equal(usage.code, 2);
    } finally {
      pages.closeAllConnections();
      await new Promise((resolve) => pages.close(resolve));
    }
  });

  test('convert --export: the result lands in S3-compatible storage (s3rver on loopback), credentials from the environment only and never printed; a failed export exits 7', async () => {
    const S3rver = createRequire(import.meta.url)('s3rver') as new (o: Record<string, unknown>) => { configureBuckets(): Promise<void>; callback(): RequestListener };
    const store = new S3rver({ silent: true, directory: join(work, 's3'), configureBuckets: [{ name: 'reports' }] });
    await store.configureBuckets();
    const s3 = createServer(store.callback());
    await new Promise<void>((resolve) => s3.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(s3.address() as AddressInfo).port}`;
    // s3rver knows the key id S3RVER and does not check signatures: the secret only has to stay unprinted.
    const secret = 'never-printed-secret-7f3a';
    const aws = { ...env, AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: secret };
    const reader = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
    try {
      await copyFile(join(FIXTURES, 'sample.docx'), join(work, 'quarterly.docx'));
      const res = await run(['convert', 'quarterly.docx', '--to', 'pdf', '--json', '--export', 's3://reports/cli/{stem}.{ext}', '--export-endpoint', endpoint], aws, work);
      assert.equal(res.code, 0, res.stderr);
      const out = JSON.parse(res.stdout) as { sha256: string; export: { status: string; bucket: string; key: string; etag: string; error: unknown } };
      assert.deepEqual([out.export.status, out.export.bucket, out.export.key, out.export.error], ['completed', 'reports', 'cli/quarterly.pdf', null]);
      const got = await reader.send(new GetObjectCommand({ Bucket: 'reports', Key: 'cli/quarterly.pdf' }));
      assert.equal(createHash('sha256').update(Buffer.from(await got.Body!.transformToByteArray())).digest('hex'), out.sha256, 'the stored object is the downloaded output');
      assert.equal((got.ETag ?? '').replace(/"/g, ''), out.export.etag);
      assert.ok(!res.stdout.includes(secret) && !res.stderr.includes(secret));

      // The text form says where it went.
      const text = await run(['convert', 'quarterly.docx', '--to', 'pdf', '--out', 'q2.pdf', '--export', 's3://reports', '--export-endpoint', endpoint], aws, work);
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, /\nExported to s3:\/\/reports\/cnv_[0-9A-Za-z]+\/quarterly\.pdf \(ETag [0-9a-f]{32}\)\.\n$/);

      // A bucket that does not exist: converted and downloaded, the export failed in the store's words, exit 7.
      const missing = await run(['convert', 'quarterly.docx', '--to', 'pdf', '--out', 'q3.pdf', '--export', 's3://no-such-bucket', '--export-endpoint', endpoint], aws, work);
      assert.equal(missing.code, 7, missing.stdout + missing.stderr);
      assert.match(missing.stdout, /Export to s3:\/\/no-such-bucket failed: .*NoSuchBucket/);
      assert.ok(!missing.stdout.includes(secret) && !missing.stderr.includes(secret));

      // No credentials in the environment: a usage error naming the variables, nothing sent.
      const bare = await run(['convert', 'quarterly.docx', '--to', 'pdf', '--export', 's3://reports'], env, work);
      assert.equal(bare.code, 2);
      assert.match(bare.stderr, /AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/);
      const malformed = await run(['convert', 'quarterly.docx', '--to', 'pdf', '--export', 'reports'], aws, work);
      assert.equal(malformed.code, 2);
      assert.match(malformed.stderr, /s3:\/\/bucket/);
    } finally {
      reader.destroy();
      s3.closeAllConnections();
      await new Promise((resolve) => s3.close(resolve));
    }
  });

  test('formats, formats <ext> and account (both services) in text and --json', async () => {
    const formats = await run(['formats'], env, work);
    assert.equal(formats.code, 0, formats.stderr);
    assert.match(formats.stdout, /^docx\t/m);
    const targets = await run(['formats', 'docx', '--json'], env, work);
    assert.ok((JSON.parse(targets.stdout) as { targets: Array<{ format: string }> }).targets.some((t) => t.format === 'pdf'));
    const account = await run(['account', '--json'], env, work);
    assert.equal(account.code, 0, account.stderr);
    const a = JSON.parse(account.stdout) as { email: { account: { plan: string } }; convert: { limits: { plan: string } } };
    assert.deepEqual([a.email.account.plan, a.convert.limits.plan], ['scale', 'api']);
    const text = await run(['account'], env, work);
    assert.match(text.stdout, /Email verification: cli@example\.test, plan Scale/);
    // Both quotas reset on a date, written alike (issue #30).
    const resets = [...text.stdout.matchAll(/left until (\S+) \(UTC\)/g)].map((m) => m[1]);
    assert.equal(resets.length, 2, text.stdout);
    for (const date of resets) assert.match(date!, /^\d{4}-\d{2}-01$/);
    assert.match(text.stdout, /File conversion: plan api/);
  });

  test('exit codes: 2 usage (no key, unknown command, bad flag), 3 API error (with --json body), 4 no answer; flags win over env', async () => {
    const noKey = await run(['verify', 'a@b.test'], {}, work);
    assert.equal(noKey.code, 2);
    assert.match(noKey.stderr, /--email-url and --email-key/);
    assert.equal((await run(['frobnicate'], env, work)).code, 2);
    assert.equal((await run(['convert', 'x.docx', '--to', 'pdf', '--quality', 'high'], env, work)).code, 2);
    const badKey = await run(['account', '--json', '--email-key', 'ev_live_wrong', '--convert-url', '', '--convert-key', ''], env, work);
    assert.equal(badKey.code, 3, badKey.stderr);
    assert.equal((JSON.parse(badKey.stdout) as { error: { code: string; status: number } }).error.code, 'unauthorized');
    const unknownFormat = await run(['convert', 'report.docx', '--to', 'nope'], env, work);
    assert.equal(unknownFormat.code, 3, unknownFormat.stderr);
    const nobody = await run(['account', '--email-url', 'http://127.0.0.1:9', '--timeout', '2'], { MAILCONV_EMAIL_KEY: 'k' }, work);
    assert.equal(nobody.code, 4, nobody.stderr);
  });
});
