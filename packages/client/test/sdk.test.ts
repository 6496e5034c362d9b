import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiError, ChecksumError, ConvertClient, EmailClient, verifyWebhookSignature, signWebhook } from '@mailconv/client';
import { D, WEBHOOK_HOSTS } from '@mailconv/test-rig';
import { createAccount, FIXTURES, startConvertService, startEmailService, type RunningService } from './services.test-support.js';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A loopback server: `handle` answers each request (the n-th, from 1). */
async function loopbackServer(handle: (n: number, req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; server: Server; count: () => number }> {
  let n = 0;
  const server = createServer((req, res) => handle(++n, req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, server, count: () => n };
}

let work: string;
before(async () => {
  work = await mkdtemp(join(tmpdir(), 'client-sdk-'));
});
after(async () => {
  await rm(work, { recursive: true, force: true });
});

describe('EmailClient against the running email service (loopback DNS/SMTP rig)', () => {
  let svc: RunningService;
  let client: EmailClient;
  let freeClient: EmailClient;

  before(async () => {
    svc = await startEmailService();
    client = new EmailClient({ baseUrl: svc.url, apiKey: createAccount('email-api', svc.env, 'scale@example.test', 'scale') });
    freeClient = new EmailClient({ baseUrl: svc.url, apiKey: createAccount('email-api', svc.env, 'free@example.test', 'free') });
  });
  after(async () => svc.close());

  test('verify, verifyBatch, validatePublic and account answer typed results', async () => {
    const one = await client.verify(`alice@${D.valid}`);
    assert.equal(one.status, 'valid');
    assert.equal(one.is_valid, true);
    assert.equal(one.checks.dns, true);
    assert.equal(one.quota.used_this_month, 1);
    const batch = await client.verifyBatch([`alice@${D.valid}`, `x@${D.nxdomain}`]);
    assert.deepEqual(batch.results.map((r) => r.status), ['valid', 'invalid']);
    assert.equal(batch.summary.total, 2);
    const anon = await client.validatePublic(`bob@${D.valid}`);
    assert.equal(anon.status, 'valid');
    const account = await client.account();
    assert.equal(account.account.plan, 'scale');
    assert.equal(account.quota.used, 3);
  });

  test('errors are ApiError with the contract code, the documented extra fields and the request id', async () => {
    const err = await client.verify('').catch((e: unknown) => e);
    assert.ok(err instanceof ApiError);
    assert.equal(err.status, 400);
    assert.equal(err.code, 'invalid_email');
    assert.equal(err.body.field, 'email');
    assert.match(err.requestId ?? '', /^req_/);
    // 402 insufficient_quota: 501 addresses against the free plan's 500.
    const quota = await freeClient.createJob(Array.from({ length: 501 }, (_, i) => `u${i}@${D.valid}`)).catch((e: unknown) => e);
    assert.ok(quota instanceof ApiError);
    assert.equal(quota.code, 'insufficient_quota');
    assert.deepEqual([quota.body.remaining, quota.body.required], [500, 501]);
    const bad = new EmailClient({ baseUrl: svc.url, apiKey: 'ev_live_nope' });
    await assert.rejects(bad.account(), (e: unknown) => e instanceof ApiError && e.status === 401 && e.code === 'unauthorized');
  });

  test('a job: createJob → waitForJob (progress, both counter namings) → pages, iterateResults, CSV file and CSV rows', async () => {
    const emails = [`alice@${D.valid}`, `x@${D.nxdomain}`, ...Array.from({ length: 28 }, (_, i) => `user${i}@${D.valid}`)];
    const submitted = await client.createJob(emails, { idempotencyKey: 'sdk-job-1' });
    assert.equal(submitted.total, 30);
    const again = await client.createJob(emails, { idempotencyKey: 'sdk-job-1' });
    assert.equal(again.job_id, submitted.job_id, 'the idempotent retry returns the first job');
    const seen: number[] = [];
    const done = await client.waitForJob(submitted.job_id, { intervalMs: 50, onProgress: (j) => seen.push(j.progress_pct) });
    assert.equal(done.status, 'completed');
    assert.equal(seen.at(-1), 100);
    assert.ok(seen.every((p, i) => i === 0 || p >= seen[i - 1]!), 'progress never goes back');
    assert.equal(done.valid, done.valid_count);
    assert.equal(done.invalid, done.invalid_count);
    assert.equal(done.valid + done.invalid + done.risky + done.unknown, 30);
    const listed = (await client.listJobs()).jobs.find((j) => j.job_id === submitted.job_id)!;
    assert.equal(listed.valid, done.valid_count, 'the list (which sends only *_count) gets both namings too');

    const page = await client.results(submitted.job_id, { page: 2, perPage: 7 });
    assert.equal(page.results[0]!.email, emails[7]);
    const all: string[] = [];
    for await (const r of client.iterateResults(submitted.job_id, 7)) all.push(r.email);
    assert.deepEqual(all, emails);

    const csvPath = join(work, 'results.csv');
    const saved = await client.downloadResultsCsv(submitted.job_id, csvPath);
    const text = await readFile(csvPath, 'utf8');
    assert.equal(saved.bytes, Buffer.byteLength(text));
    assert.equal(saved.sha256, sha256(Buffer.from(text)));
    const rows: string[][] = [];
    for await (const row of client.resultsCsvRows(submitted.job_id)) rows.push(row);
    assert.equal(rows.length, 31);
    assert.equal(rows[0]![0], 'email');
    assert.deepEqual(rows.slice(1).map((r) => r[0]), emails);
  });

  test('uploadJob sends a CSV file from disk (multipart), column chosen by name', async () => {
    const path = join(work, 'list.csv');
    await writeFile(path, `name,address\r\nAlice,alice@${D.valid}\r\nBob,"bob@${D.valid}"\r\nNobody,x@${D.nxdomain}\r\n`);
    const job = await client.uploadJob({ path, column: 'address' });
    assert.equal(job.total, 3);
    const done = await client.waitForJob(job.job_id, { intervalMs: 50 });
    assert.deepEqual([done.valid, done.invalid], [2, 1]);

    // Issue 23: the file comes back with its own columns; filters and sub-checks; deleting the data.
    const rows: string[][] = [];
    for await (const row of client.resultsCsvRows(job.job_id, { status: ['invalid'], columns: 'all' })) rows.push(row);
    assert.deepEqual(rows[0]!.slice(0, 4), ['name', 'address', 'email', 'is_valid']);
    assert.equal(rows[0]!.at(-1), 'free_provider');
    assert.deepEqual(rows.slice(1).map((r) => [r[0], r[2], r[4]]), [['Nobody', `x@${D.nxdomain}`, 'invalid']]);
    const valid: string[] = [];
    for await (const r of client.iterateResults(job.job_id, 1, { status: ['valid'] })) valid.push(r.email);
    assert.deepEqual(valid, [`alice@${D.valid}`, `bob@${D.valid}`]);
    const deleted = await client.deleteJobResults(job.job_id);
    assert.deepEqual([deleted.job_id, deleted.status, typeof deleted.results_deleted_at], [job.job_id, 'completed', 'string']);
    const gone = await client.results(job.job_id).catch((e: unknown) => e);
    assert.ok(gone instanceof ApiError);
    assert.deepEqual([gone.status, gone.code], [410, 'results_deleted']);
  });

  test('results of a running job: 409 job_not_completed with status and progress_pct; cancelJob refunds', async () => {
    const slow = Array.from({ length: 40 }, (_, i) => `u${i}@sdk${i}.${D.silent}`);
    const job = await client.createJob(slow);
    const err = await client.results(job.job_id).catch((e: unknown) => e);
    assert.ok(err instanceof ApiError);
    assert.equal(err.code, 'job_not_completed');
    assert.ok(['queued', 'processing'].includes(String(err.body.status)));
    assert.equal(typeof err.body.progress_pct, 'number');
    const cancelled = await client.cancelJob(job.job_id);
    assert.equal(cancelled.status, 'cancelled');
    assert.equal(cancelled.refunded, 40 - cancelled.processed);
  });

  test('API keys and webhooks: create, list, deliveries, redeliver (404 for an unknown delivery), revoke and delete', async () => {
    const key = await client.apiKeys.create('sdk test');
    assert.match(key.api_key, /^ev_/);
    assert.ok((await client.apiKeys.list()).keys.some((k) => k.id === key.id));
    const viaNewKey = new EmailClient({ baseUrl: svc.url, apiKey: key.api_key });
    assert.equal((await viaNewKey.account()).account.plan, 'scale');
    await client.apiKeys.revoke(key.id);
    await assert.rejects(viaNewKey.account(), (e: unknown) => e instanceof ApiError && e.status === 401);

    const hook = await client.webhooks.create({ url: `http://${WEBHOOK_HOSTS.receiver}:9/hook`, events: 'job.completed' });
    assert.match(hook.webhook.secret, /\S{16,}/);
    assert.ok((await client.webhooks.list()).webhooks.some((w) => w.webhook_id === hook.webhook.webhook_id));
    assert.deepEqual((await client.webhooks.deliveries(hook.webhook.webhook_id)).deliveries, []);
    await assert.rejects(client.webhooks.redeliver(hook.webhook.webhook_id, 'dlv_unknown'), (e: unknown) => e instanceof ApiError && e.status === 404);
    await client.webhooks.remove(hook.webhook.webhook_id);
    assert.ok(!(await client.webhooks.list()).webhooks.some((w) => w.webhook_id === hook.webhook.webhook_id));
  });

  test('webhook signature verification (kept): signWebhook/verifyWebhookSignature round trip, altered body refused', () => {
    const body = '{"event":"job.completed"}';
    assert.ok(verifyWebhookSignature(body, signWebhook(body, 's3cret'), 's3cret'));
    assert.ok(!verifyWebhookSignature(`${body} `, signWebhook(body, 's3cret'), 's3cret'));
  });

  test('429/503 are retried after Retry-After (through a loopback proxy that answers the first request 503)', async () => {
    const target = new URL(svc.url);
    const proxy = await loopbackServer((n, req, res) => {
      if (n === 1) {
        res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' }).end('{"error":"service_unavailable","message":"busy"}');
        return;
      }
      const up = httpRequest({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode!, r.headers);
        r.pipe(res);
      });
      req.pipe(up);
    });
    try {
      const viaProxy = new EmailClient({ baseUrl: proxy.url, apiKey: client.http.options.apiKey! });
      const started = performance.now();
      const account = await viaProxy.account();
      assert.equal(account.account.plan, 'scale');
      assert.ok(performance.now() - started >= 950, 'waited for Retry-After: 1');
      assert.equal(proxy.count(), 2);
      const noRetry = new EmailClient({ baseUrl: proxy.url, apiKey: client.http.options.apiKey!, retries: 0 });
      await noRetry.account(); // the proxy passes everything after the first
    } finally {
      proxy.server.close();
    }
  });

  test('single verification waits at least 5 s: a shorter time-out is raised to 5 s, then the request fails with code timeout', async () => {
    const silent = await loopbackServer(() => undefined);
    try {
      const impatient = new EmailClient({ baseUrl: silent.url, apiKey: 'ev_x', singleTimeoutMs: 1000, retries: 0 });
      const started = performance.now();
      const err = await impatient.verify(`alice@${D.valid}`).catch((e: unknown) => e);
      const waited = performance.now() - started;
      assert.ok(err instanceof ApiError && err.code === 'timeout', String(err));
      assert.ok(waited >= 4900 && waited < 15_000, `waited ${waited} ms`);
    } finally {
      silent.server.closeAllConnections();
      silent.server.close();
    }
  });
});

describe('ConvertClient against the running conversion service (real engines)', () => {
  let svc: RunningService;
  let client: ConvertClient;
  let tinyKey: string;

  before(async () => {
    svc = await startConvertService();
    client = new ConvertClient({ baseUrl: svc.url, apiKey: createAccount('convert-api', svc.env, 'api@example.test', 'api') });
    tinyKey = createAccount('convert-api', svc.env, 'tiny@example.test', 'tiny');
  });
  after(async () => svc.close());

  test('formats, targets, usage and limits', async () => {
    const formats = await client.formats();
    assert.ok(formats.formats.some((f) => f.ext === 'docx'));
    const targets = await client.targets('docx');
    assert.ok(targets.targets.some((t) => t.format === 'pdf'));
    const limits = await client.limits();
    assert.equal(limits.plan, 'api');
    const usage = await client.usage();
    assert.equal(typeof usage.quota.used, 'number');
  });

  test('API keys (extension): create, list, revoke; the revoked key is refused at once', async () => {
    const key = await client.apiKeys.create('sdk test');
    assert.match(key.api_key, /^cv_live_/);
    assert.ok((await client.apiKeys.list()).keys.some((k) => k.id === key.id));
    const viaNewKey = new ConvertClient({ baseUrl: svc.url, apiKey: key.api_key });
    assert.equal((await viaNewKey.limits()).plan, 'api');
    await client.apiKeys.revoke(key.id);
    await assert.rejects(viaNewKey.limits(), (e: unknown) => e instanceof ApiError && e.status === 401);
  });

  test('convertFile: one-step job, waitForConversion with progress, download streamed with the SHA-256 checked', async () => {
    const out = join(work, 'report.pdf');
    const states: string[] = [];
    let downloaded = 0;
    const { record, saved } = await client.convertFile(join(FIXTURES, 'sample.docx'), 'pdf', out, { onProgress: (r) => states.push(r.status), onDownload: (b) => (downloaded = b) });
    assert.equal(record.status, 'completed');
    assert.equal(states.at(-1), 'completed');
    const bytes = await readFile(out);
    assert.equal(bytes.subarray(0, 5).toString(), '%PDF-');
    assert.equal(saved.sha256, record.output!.sha256);
    assert.equal(sha256(bytes), record.output!.sha256);
    assert.equal(downloaded, bytes.length);
    assert.equal((await client.status(record.id)).id, record.id);
  });

  test('upload then convert (JSON, wait window); a wrong expected checksum removes the file; shred → 410 on download', async () => {
    const upload = await client.upload({ data: await readFile(join(FIXTURES, 'sample.png')), filename: 'sample.png' });
    assert.equal(upload.format, 'png');
    const record = await client.convert({ uploadId: upload.upload_id }, 'webp', { wait: 60, quality: 80 });
    assert.equal(record.status, 'completed');
    const path = join(work, 'bad.webp');
    const forged = { ...record, output: { ...record.output!, sha256: '0'.repeat(64) } };
    await assert.rejects(client.download(forged, path), (e: unknown) => e instanceof ChecksumError);
    await assert.rejects(stat(path), { code: 'ENOENT' });
    // A download URL naming another origin (loopback here, port 9: nothing listens) is not followed with the key: the path on the base URL is used.
    const elsewhere = { ...record, download_url: record.download_url!.replace(/^http:\/\/127\.0\.0\.1:\d+/, 'http://127.0.0.2:9') };
    const viaBase = await client.download(elsewhere, join(work, 'ok.webp'));
    assert.equal(viaBase.sha256, record.output!.sha256);
    const shredded = await client.shred(record.id);
    assert.equal(shredded.status, 'shredded');
    await assert.rejects(client.download(record, path), (e: unknown) => e instanceof ApiError && e.status === 410);
  });

  test('merge (a .docx and a picture into one PDF), then a share link that downloads it without a key, listed and revoked', async () => {
    const docx = await client.upload({ data: await readFile(join(FIXTURES, 'sample.docx')), filename: 'report.docx' });
    const png = await client.upload({ data: await readFile(join(FIXTURES, 'sample.png')), filename: 'photo.png' });
    const merged = await client.merge([docx.upload_id, png.upload_id], { wait: 90 });
    assert.equal(merged.status, 'completed', JSON.stringify(merged.error));
    assert.equal(merged.output!.format, 'pdf');
    assert.ok((merged.output!.pages ?? 0) >= 2);
    const { link } = await client.shareLinks.create(merged.id, { expiresIn: 600 });
    const got = await fetch(link.url);
    assert.equal(got.status, 200);
    assert.equal(sha256(Buffer.from(await got.arrayBuffer())), merged.output!.sha256);
    assert.deepEqual((await client.shareLinks.list(merged.id)).links.map((l) => l.state), ['active']);
    assert.equal((await client.shareLinks.revoke(merged.id, link.link_id)).link.state, 'revoked');
    assert.equal((await fetch(link.url)).status, 410);
  });

  test('rate limit: 429 rate_limited carries Retry-After; a wait longer than maxRetryDelayMs fails at once', async () => {
    const tiny = new ConvertClient({ baseUrl: svc.url, apiKey: tinyKey, maxRetryDelayMs: 100 });
    for (let i = 0; i < 3; i++) await tiny.limits();
    const started = performance.now();
    const err = await tiny.limits().catch((e: unknown) => e);
    assert.ok(err instanceof ApiError && err.status === 429 && err.code === 'rate_limited', String(err));
    assert.ok((err.retryAfter ?? 0) > 0);
    assert.ok(performance.now() - started < 2000);
  });
});
