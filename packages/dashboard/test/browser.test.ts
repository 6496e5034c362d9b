// The dashboards in a real browser (Debian's chromium driven by playwright-core) against the
// real services on loopback: what a new user does, page by page, with a screenshot of each.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SELF_CHECK, WEBHOOK_HOSTS, D } from '@mailconv/test-rig';
import type { Page } from 'playwright-core';
import { checkLayout, openBrowser, signIn, type Browser } from './browser.test-support.js';
import { FIXTURES, ROOT, createUser, startConvertService, startConvertWorker, startEmailService, startReceiver, type RunningService } from './services.test-support.js';

const PASSWORD = 'correct horse battery staple';
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** 1,000 distinct addresses: mostly on the rig's valid domain, some malformed, some on a missing domain. */
/** Drops the sample .docx on the drop zone under `name`, as a user would drag it: a DataTransfer holding the file. */
async function dropFile(page: Page, name: string, bytes: Buffer, type: string): Promise<void> {
  const transfer = await page.evaluateHandle(([data, file, mime]) => {
    const dt = new DataTransfer();
    dt.items.add(new File([new Uint8Array(data)], file, { type: mime }));
    return dt;
  }, [[...bytes], name, type] as [number[], string, string]);
  await page.getByTestId('dropzone').dispatchEvent('drop', { dataTransfer: transfer });
}

async function dropDocx(page: Page, name: string): Promise<void> {
  await dropFile(page, name, await readFile(join(FIXTURES, 'sample.docx')), 'application/vnd.openxmlformats-officedocument.wordprocessingml.document');
}

function thousandAddresses(): string {
  const rows = ['email'];
  for (let i = 0; i < 1000; i++) rows.push(i % 10 === 0 ? `broken${i}.example` : i % 10 === 1 ? `user${i}@no-such-domain.invalid` : `user${i}@${D.valid}`);
  return `${rows.join('\n')}\n`;
}

describe('email dashboard in chromium', { timeout: 120_000 }, () => {
  let svc: RunningService & Awaited<ReturnType<typeof startEmailService>>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let b: Browser;

  before(async () => {
    [svc, receiver] = await Promise.all([startEmailService(), startReceiver()]);
    createUser('email-api', svc.env, 'ada@example.test', 'starter', PASSWORD);
    b = await openBrowser(svc.url);
  });
  after(async () => {
    await b?.close();
    await receiver?.close();
    await svc?.close();
  });

  test('sign-in: a wrong password is refused in words, the right one opens the overview with plan and quota', async () => {
    const { page } = b;
    // The bare host leads to the dashboard (issue 30).
    await page.goto(`${svc.url}/`);
    assert.equal(page.url(), `${svc.url}/dashboard/`);
    await page.getByLabel('E-mail address').waitFor();
    // Signed out is not an error: the session probe answers 200, and the page links its own icon (no /favicon.ico 404).
    assert.equal(await page.locator('link[rel=icon]').getAttribute('href'), '/dashboard/favicon.svg');
    const icon = await page.request.get(`${svc.url}/dashboard/favicon.svg`);
    assert.deepEqual([icon.status(), icon.headers()['content-type']], [200, 'image/svg+xml']);
    await b.shot('email-sign-in');
    await checkLayout(b, 'email-sign-in');
    assert.deepEqual(b.problems, [], 'no console error on a signed-out page load');
    await page.getByLabel('E-mail address').fill('ada@example.test');
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'wrong' }).waitFor();
    // The refused sign-in is the one error this test provokes: the browser logs its 401.
    assert.equal(b.problems.length, 1, b.problems.join('\n'));
    assert.match(b.problems[0]!, /status of 401 .*\/api\/dashboard\/session$/);
    b.problems.length = 0;
    await signIn(page, svc.url, 'ada@example.test', PASSWORD);
    await page.getByRole('meter', { name: 'Verifications this month' }).waitFor();
    assert.match(await page.locator('main').innerText(), /Starter/);
    assert.match(await page.locator('main').innerText(), /Quota resets/);
    // The CSRF token lives in memory only; the session cookie is HttpOnly.
    assert.equal(await page.evaluate(() => JSON.stringify(localStorage) + JSON.stringify(sessionStorage) + document.cookie), '{}{}');
  });

  test('playground: one address verified, every sub-check shown and explained', async () => {
    const { page } = b;
    await page.getByRole('link', { name: 'Verify' }).click();
    await page.getByLabel('E-mail address').fill(`alice@${D.valid}`);
    await page.getByRole('button', { name: 'Verify' }).click();
    const checks = page.locator('table.checks tbody tr');
    await checks.first().waitFor();
    // Most important first, each with what it found and why that matters.
    assert.deepEqual(await checks.evaluateAll((rows) => rows.map((r) => r.getAttribute('data-check'))), ['Syntax', 'Domain and mail server', 'SMTP mailbox check', 'Catch-all domain', 'Disposable domain', 'Role address', 'Free provider']);
    assert.equal(await checks.locator('td:nth-child(4)').count(), 7, 'a "why it matters" for each');
    const text = await page.locator('main').innerText();
    assert.match(text, /valid/);
    await b.shot('email-verify');
    await checkLayout(b, 'email-verify');
  });

  test('playground: a missing domain and a mistyped one — the checks agree with each other and come in order of importance', async () => {
    const { page } = b;
    const names = () => page.locator('table.checks tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-check')));
    const row = async (name: string) => (await page.locator(`tr[data-check="${name}"]`).innerText()).replace(/\s+/g, ' ');
    const card = async () => (await page.locator('section[aria-label="Result"]').innerText()).replace(/\s+/g, ' ');
    // A domain that does not exist (NXDOMAIN from the rig): it decides; the checks that need a mail server say they could not run.
    await page.getByLabel('E-mail address').fill(`jane@${D.nxdomain}`);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.locator('tr[data-check="Domain and mail server"]').filter({ hasText: 'does not exist' }).waitFor();
    assert.deepEqual(await names(), ['Syntax', 'Domain and mail server', 'SMTP mailbox check', 'Catch-all domain', 'Disposable domain', 'Role address', 'Free provider']);
    assert.match(await row('Domain and mail server'), new RegExp(`does not exist ${D.nxdomain.replace(/\./g, '\\.')} does not exist in DNS\\. Mail to it bounces at once`));
    assert.match(await row('SMTP mailbox check'), /not possible There is no mail server to ask\. .*the domain already decides/);
    assert.match(await row('Catch-all domain'), /not possible/);
    assert.equal(await page.locator('table.checks .mark-fail').count(), 1, 'one failing check: the domain');
    assert.ok((await card()).indexOf('The domain does not exist in DNS.') < (await card()).indexOf('Syntax'), 'the verdict and its reason come first');
    await b.shot('email-verify-missing-domain');

    // gmial.com (issue 30): a slip of gmail.com, on the disposable list; the rig's DNS answers nothing outside its zone.
    await page.getByLabel('E-mail address').fill('jane@gmial.com');
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.locator('tr[data-check="Typo"]').waitFor();
    assert.deepEqual(await names(), ['Syntax', 'Domain and mail server', 'Typo', 'SMTP mailbox check', 'Catch-all domain', 'Disposable domain', 'Role address', 'Free provider']);
    assert.match(await row('Domain and mail server'), /unknown DNS gave no answer about gmial\.com\./);
    assert.doesNotMatch(await card(), /does not exist|publishes no mail server/, 'nothing claims what DNS did not say');
    assert.match(await row('Typo'), /gmail\.com\? .*did the person mean jane@gmail\.com\?/);
    assert.match(await row('Disposable domain'), /yes gmial\.com is on the list of throw-away and look-alike domains\./);
    const text = await card();
    assert.ok(text.indexOf('disposable') < text.indexOf('Did you mean jane@gmail.com?') && text.indexOf('Did you mean') < text.indexOf('Syntax'), text);
    await b.shot('email-verify-typo');
    await checkLayout(b, 'email-verify-typo');
  });

  test('API keys: created and shown once with a copy button, listed masked, revoked', async () => {
    const { page } = b;
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByLabel('Key name').fill('ci server');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.getByTestId('secret').innerText()).trim();
    assert.match(secret, /^ev_live_/);
    await page.getByRole('button', { name: 'Copy' }).waitFor();
    await b.shot('email-keys');
    await checkLayout(b, 'email-keys', ['Revoke key ci server', 'Copy']);
    // The key works for the API, and the list shows only its preview.
    assert.equal((await fetch(`${svc.url}/api/v1/account`, { headers: { authorization: `Bearer ${secret}` } })).status, 200);
    const row = page.getByRole('row', { name: /ci server/ });
    assert.ok(!(await row.innerText()).includes(secret));
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('button', { name: 'Revoke key ci server' }).click();
    await row.waitFor({ state: 'detached' });
    assert.equal((await fetch(`${svc.url}/api/v1/account`, { headers: { authorization: `Bearer ${secret}` } })).status, 401);
  });

  let webhookSecret = '';
  test('webhooks: created with the secret shown once', async () => {
    const { page } = b;
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByLabel('Endpoint URL (HTTPS)').fill(`http://${WEBHOOK_HOSTS.receiver}:${receiver.port}/hooks/email`);
    await page.getByRole('button', { name: 'Add webhook' }).click();
    webhookSecret = (await page.getByTestId('secret').innerText()).trim();
    assert.match(webhookSecret, /^whsec_/);
  });

  test('bulk job: a 1,000-address CSV uploaded, progress followed to completion, results downloaded as CSV', async () => {
    const { page } = b;
    await page.getByRole('link', { name: 'Bulk jobs' }).click();
    await page.locator('input[type=file]').setInputFiles({ name: 'list.csv', mimeType: 'text/csv', buffer: Buffer.from(thousandAddresses()) });
    await page.getByRole('button', { name: 'Start job' }).click();
    const bar = page.getByRole('progressbar', { name: 'Verified' });
    await bar.waitFor();
    await page.getByRole('link', { name: 'Download results (CSV)' }).waitFor({ timeout: 60_000 });
    assert.equal(await bar.getAttribute('aria-valuenow'), '100');
    assert.match(await page.locator('main').innerText(), /1,000 of 1,000 addresses/);
    await b.shot('email-jobs');
    await checkLayout(b, 'email-jobs', ['Download results (CSV)', /^CSV$/]);
    // The started list is let go of: the picker is empty again, and choosing a file enables "Start job" (issue 30).
    assert.equal(await page.locator('input[type=file]').evaluate((i: HTMLInputElement) => i.files?.length ?? 0), 0);
    assert.equal(await page.getByRole('button', { name: 'Start job' }).isDisabled(), true);
    await page.locator('input[type=file]').setInputFiles({ name: 'next.csv', mimeType: 'text/csv', buffer: Buffer.from(`email\nuser1@${D.valid}\n`) });
    assert.equal(await page.getByRole('button', { name: 'Start job' }).isEnabled(), true);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download results (CSV)' }).click()]);
    const csv = await readFile(await download.path());
    const lines = csv.toString('utf8').trim().split(/\r?\n/);
    assert.equal(lines.length, 1001, 'a header and one row per address');
    assert.match(lines.find((l) => l.includes(`user2@${D.valid}`)) ?? '', /valid/);
  });

  test('bulk job: downloads per filter (valid and risky, with every sub-check), then the data deleted (issue 23)', async () => {
    const { page } = b;
    await page.getByRole('checkbox', { name: /Add every sub-check/ }).check();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download valid and risky (CSV)' }).click()]);
    assert.match(download.suggestedFilename(), /^job_[0-9a-z]+-valid-risky\.csv$/);
    const lines = (await readFile(await download.path())).toString('utf8').trim().split('\r\n');
    assert.match(lines[0]!, /^email,result_email,is_valid,status,reason,score,suggestion,normalized,syntax,dns,mx_count,mx_provider,smtp,catch_all,disposable,role_based,free_provider$/);
    assert.equal(lines.length, 801, 'the header and the 800 addresses on the valid domain');
    assert.ok(lines.slice(1).every((l) => /,(valid|risky),/.test(l) && !l.includes('broken')), 'only valid and risky rows');
    await checkLayout(b, 'email-jobs-downloads', ['Download valid only (CSV)', 'Delete addresses and results']);

    await page.getByRole('button', { name: 'Delete addresses and results' }).click();
    await page.getByText(/Addresses and results deleted/).waitFor();
    assert.equal(await page.getByRole('link', { name: 'Download results (CSV)' }).count(), 0, 'no download is offered any more');
    assert.match(await page.locator('main').innerText(), /1,000 of 1,000 addresses/, 'the counts stay');
    await page.getByText('data deleted').waitFor();
    assert.equal(await page.getByRole('link', { name: /^CSV$/ }).count(), 0, 'the list offers no download of it either');
  });

  test('webhooks: the job.completed delivery reached the receiver, signed, and is listed with its attempt', async () => {
    const { page } = b;
    const [hit] = await receiver.waitFor(1);
    assert.equal(hit!.headers['x-service-event'], 'job.completed');
    assert.equal(hit!.headers['x-service-signature'], `sha256=${createHmac('sha256', webhookSecret).update(hit!.body).digest('hex')}`);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('button', { name: 'Deliveries' }).click();
    await page.locator('.deliveries').getByText('delivered').waitFor({ timeout: 15_000 });
    assert.match(await page.locator('.deliveries').innerText(), /#1 .*HTTP 204/);
    await b.shot('email-webhooks');
    await checkLayout(b, 'email-webhooks', ['Deliveries']);
  });

  test('overview at phone width; sign-out returns to the form; nothing loaded from elsewhere, no console errors', async () => {
    const { page } = b;
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('meter', { name: 'Verifications this month' }).waitFor();
    await b.shot('email-overview');
    await checkLayout(b, 'email-overview');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    assert.equal((await page.request.get(`${svc.url}/api/v1/account`)).status(), 401);
    assert.deepEqual(b.foreign, []);
    assert.deepEqual(b.problems, []);
  });
});

// Issue 23: a server whose port 25 is closed (its probe host a loopback address where nothing
// listens) says so on the overview, with why, and per egress what its self-check found.
describe('email dashboard: the SMTP self-check on the overview', { timeout: 120_000 }, () => {
  let svc: Awaited<ReturnType<typeof startEmailService>>;
  let b: Browser;

  before(async () => {
    svc = await startEmailService((rig) => ({
      EMAIL_SMTP_PROBE_HOST: `${rig.hosts.dead}:${rig.smtpPort}`,
      EMAIL_SMTP_SOURCE_ADDRESSES: `${rig.subnet}.${SELF_CHECK.listed.octet}=${SELF_CHECK.listed.helo}`,
      EMAIL_SMTP_BLOCKLISTS: SELF_CHECK.blocklists.join(','),
    }));
    createUser('email-api', svc.env, 'owner@example.test', 'starter', PASSWORD);
    b = await openBrowser(svc.url);
  });
  after(async () => {
    await b?.close();
    await svc?.close();
  });

  test('port 25 closed: unavailable, the reason, and per egress port 25, FCrDNS and the listing', async () => {
    const { page } = b;
    await signIn(page, svc.url, 'owner@example.test', PASSWORD);
    const card = page.getByRole('region', { name: 'SMTP probing' });
    await card.getByText(/^Unavailable/).waitFor();
    const text = await card.innerText();
    assert.match(text, /Why: no egress reaches port \d+ of the probe host/);
    const egress = card.getByRole('region', { name: `Egress source:${svc.rig.subnet}.${SELF_CHECK.listed.octet}` });
    const lines = await egress.innerText();
    assert.match(lines, /Port 25: closed \(connection refused\)/);
    assert.match(lines, /FCrDNS: pass/);
    assert.match(lines, /zen\.blocklist\.test: listed/);
    assert.match(lines, /bl\.blocklist\.test: not listed/);
    await b.shot('email-overview-smtp-unavailable');
    await checkLayout(b, 'email-overview-smtp-unavailable');
    assert.deepEqual(b.foreign, []);
    assert.deepEqual(b.problems, []);
  });

  test('playground with SMTP on that server: the mailbox check says unavailable and why', async () => {
    const { page } = b;
    await page.getByRole('link', { name: 'Verify' }).click();
    await page.getByLabel('E-mail address').fill(`alice@${D.valid}`);
    await page.getByLabel('Probe the mailbox over SMTP').check();
    await page.getByRole('button', { name: 'Verify' }).click();
    const row = page.locator('table.checks tbody tr[data-check="SMTP mailbox check"]');
    await row.waitFor();
    assert.match(await row.innerText(), /unavailable[\s\S]*cannot reach port 25/);
    assert.match(await page.locator('main').innerText(), /outbound port 25 is closed/);
    assert.deepEqual(b.problems, []);
  });
});

describe('conversion dashboard in chromium', { timeout: 120_000 }, () => {
  let svc: RunningService;
  let b: Browser;

  before(async () => {
    svc = await startConvertService();
    createUser('convert-api', svc.env, 'grace@example.test', 'pro', PASSWORD);
    b = await openBrowser(svc.url);
    await signIn(b.page, svc.url, 'grace@example.test', PASSWORD);
  });
  after(async () => {
    await b?.close();
    await svc?.close();
  });

  test('overview: usage and plan limits', async () => {
    const { page } = b;
    await page.getByRole('meter', { name: 'Conversions this month' }).waitFor();
    assert.match(await page.locator('main').innerText(), /Largest file/);
  });

  let conversionRow = '';
  test('convert: a dropped .docx is uploaded, detected, offered its tested targets, converted to PDF and downloaded with the shown SHA-256', async () => {
    const { page } = b;
    await page.getByRole('link', { name: 'Convert' }).click();
    await dropDocx(page, 'report.docx');
    await page.getByTestId('detected').filter({ hasText: 'DOCX' }).waitFor();
    // The targets of the detected format arrive right after the upload's answer.
    await page.getByLabel('Convert to').waitFor();
    // Grouped by kind with people's names, the common ones first, PDF chosen (issue 30: 46 targets as "EXT — mime/type" in one list).
    const groups = await page.getByLabel('Convert to').evaluate((select: HTMLSelectElement) =>
      Array.from(select.querySelectorAll('optgroup')).map((g) => ({ label: g.label, options: Array.from(g.querySelectorAll('option')).map((o) => o.textContent ?? '') })),
    );
    const offered = JSON.stringify(groups);
    assert.equal(groups[0]?.label, 'Common', offered);
    assert.deepEqual(groups[0]?.options, ['PDF document (.pdf)', 'Word document (.docx)', 'OpenDocument text (.odt)', 'Plain text (.txt)', 'Web page (HTML)'].filter((o) => groups[0]!.options.includes(o)), 'in this order');
    for (const o of ['PDF document (.pdf)', 'OpenDocument text (.odt)', 'Plain text (.txt)', 'Web page (HTML)']) assert.ok(groups[0]!.options.includes(o), `${o} among the common targets: ${offered}`);
    for (const g of ['Documents', 'Images', 'E-books']) assert.ok(groups.some((x) => x.label === g), `a group ${g}: ${offered}`);
    assert.ok(groups.flatMap((g) => g.options).every((o) => !/\w\/\w/.test(o)), `no MIME types: ${offered}`);
    assert.equal(await page.getByLabel('Convert to').inputValue(), 'pdf');
    await page.getByLabel('Convert to').selectOption('pdf');
    await b.shot('convert-options');
    await checkLayout(b, 'convert-options');
    await page.getByRole('button', { name: 'Convert', exact: true }).click();
    const download = page.getByRole('link', { name: 'Download', exact: true }).first();
    await download.waitFor({ timeout: 90_000 });
    const shown = (await page.locator('code.hash').innerText()).trim();
    const [file] = await Promise.all([page.waitForEvent('download'), download.click()]);
    const bytes = await readFile(await file.path());
    assert.equal(bytes.subarray(0, 5).toString(), '%PDF-');
    assert.equal(sha256(bytes), shown);
    assert.equal(file.suggestedFilename().endsWith('.pdf'), true);
    conversionRow = (await page.locator('table tbody tr').first().innerText()).split('\t')[0]!.trim();
    await b.shot('convert-done');
    await checkLayout(b, 'convert-done', ['Download', 'Share link', /^Shred conversion /]);
  });

  let sharedUrl = '';
  test('share link: made from the finished conversion, it downloads the same bytes without a key or session', async () => {
    const { page } = b;
    await page.getByRole('button', { name: 'Share link' }).click();
    const url = (await page.getByTestId('secret').innerText()).trim();
    assert.match(url, /\/api\/v1\/shared\/sh_[0-9A-Za-z]{32}$/);
    const shown = (await page.locator('code.hash').innerText()).trim();
    const res = await fetch(url);
    assert.equal(res.status, 200);
    assert.equal(sha256(Buffer.from(await res.arrayBuffer())), shown);
    await b.shot('convert-share');
    sharedUrl = url;
  });

  test('shred: the conversion is shredded and its download is gone', async () => {
    const { page } = b;
    const href = await page.getByRole('link', { name: 'Download', exact: true }).first().getAttribute('href');
    await page.getByRole('button', { name: 'Shred', exact: true }).click();
    await page.locator('.card-head').getByText('shredded').waitFor();
    // The recent list shows it shredded too, with no download link left.
    const row = page.getByRole('row', { name: new RegExp(conversionRow) });
    await row.filter({ hasText: 'shredded' }).waitFor();
    assert.equal(await row.getByRole('link', { name: 'Download' }).count(), 0);
    assert.equal((await page.request.get(`${svc.url}${href}`)).status(), 410);
    assert.equal((await fetch(sharedUrl)).status, 410, 'and so is its share link');
    await b.shot('convert-shredded');
  });

  test('API keys on the conversion service; the overview counts the conversion; nothing loaded from elsewhere, no console errors', async () => {
    const { page } = b;
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByLabel('Key name').fill('batch');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.getByTestId('secret').innerText()).trim();
    assert.match(secret, /^cv_live_/);
    assert.equal((await fetch(`${svc.url}/api/v1/account/limits`, { headers: { authorization: `Bearer ${secret}` } })).status, 200);
    await b.shot('convert-keys');
    await checkLayout(b, 'convert-keys', ['Revoke key batch']);
    await page.getByRole('button', { name: 'Revoke key batch' }).click();
    await page.getByRole('row', { name: /batch/ }).waitFor({ state: 'detached' });
    assert.equal((await fetch(`${svc.url}/api/v1/account/limits`, { headers: { authorization: `Bearer ${secret}` } })).status, 401);
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('meter', { name: 'Conversions this month' }).waitFor();
    assert.equal(await page.getByRole('meter', { name: 'Conversions this month' }).getAttribute('aria-valuenow'), '1', 'the conversion was charged (shredded after it finished)');
    await b.shot('convert-overview');
    await checkLayout(b, 'convert-overview');
    assert.deepEqual(b.foreign, []);
    assert.deepEqual(b.problems, []);
  });

  test('split: the pages of a dropped .docx as PNG pictures, downloaded as one zip', async () => {
    const { page } = b;
    await page.getByRole('link', { name: 'Convert' }).click();
    await dropDocx(page, 'pages.docx');
    await page.getByTestId('detected').filter({ hasText: 'DOCX' }).waitFor();
    await page.getByLabel('Convert to').selectOption('png');
    await page.getByLabel(/One PNG per page/).check();
    await page.getByRole('button', { name: 'Convert', exact: true }).click();
    const download = page.getByRole('link', { name: 'Download', exact: true }).first();
    await download.waitFor({ timeout: 90_000 });
    const [file] = await Promise.all([page.waitForEvent('download'), download.click()]);
    const bytes = await readFile(await file.path());
    assert.equal(bytes.subarray(0, 4).toString('latin1'), 'PK\x03\x04');
    assert.equal(file.suggestedFilename(), 'pages.zip');
    assert.match(bytes.toString('latin1'), /page-1\.png/);
    assert.deepEqual(b.foreign, []);
    assert.deepEqual(b.problems, []);
  });

  test('HTML printed by the browser: the page options (Letter, landscape, page numbers, title, author, a header template) offered for html → pdf and kept in the PDF', async () => {
    const { page } = b;
    await page.getByRole('link', { name: 'Convert' }).click();
    const invoice = await readFile(join(ROOT, 'docs', 'examples', 'invoice.html'));
    await dropFile(page, 'invoice.html', invoice, 'text/html');
    await page.getByTestId('detected').filter({ hasText: 'HTML' }).waitFor();
    await page.getByLabel('Convert to').selectOption('pdf');
    await page.getByTestId('page-options').waitFor();
    await page.getByLabel('Paper').selectOption('Letter');
    await page.getByLabel('Landscape').check();
    await page.getByLabel('Page numbers in the footer').check();
    await page.getByLabel('Title').fill('ACME invoice 42');
    await page.getByLabel('Author').fill('ACME Ltd');
    await page.getByText('More page options').click();
    await page.getByLabel('Header (HTML)').fill('<div style="font-size:9px;width:100%;text-align:right">Header of <span class="title"></span></div>');
    // The form keeps its choices between files: the previous test asked for one file per page.
    await page.getByLabel(/One PDF per page/).uncheck();
    await b.shot('convert-html-options');
    await page.getByRole('button', { name: 'Convert', exact: true }).click();
    // This conversion's card: completed with its file (the list below holds earlier downloads).
    await page.getByText(/^invoice\.pdf, /).waitFor({ timeout: 90_000 });
    const download = page.getByRole('link', { name: 'Download', exact: true }).first();
    const [file] = await Promise.all([page.waitForEvent('download'), download.click()]);
    const bytes = await readFile(await file.path());
    assert.equal(bytes.subarray(0, 5).toString('latin1'), '%PDF-');
    // Letter landscape, as poppler reads it: 792 × 612 points; the footer's page number on the page.
    const info = spawnSync('/usr/bin/pdfinfo', [await file.path()], { encoding: 'utf8' }).stdout;
    assert.match(info, /Page size:\s+792 x 612 pts/, info);
    const text = spawnSync('/usr/bin/pdftotext', [await file.path(), '-'], { encoding: 'utf8' }).stdout;
    assert.match(text, /Page 1 of 1/);
    assert.match(text, /Header of ACME invoice 42/, 'the header template, its title span filled with the title asked for');
    assert.match(info, /Title:\s+ACME invoice 42/);
    assert.match(info, /Author:\s+ACME Ltd/);
    assert.deepEqual(b.foreign, []);
    assert.deepEqual(b.problems, []);
  });

  test('a web page by its URL: fetched by the service, printed to PDF, downloaded', async () => {
    const { page } = b;
    const site = createServer((req, res) => {
      if (req.url === '/statement') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Statement</title><link rel="stylesheet" href="/s.css"><h1>Statement 7</h1>');
      if (req.url === '/s.css') return void res.writeHead(200, { 'content-type': 'text/css' }).end("h1::after { content: ' FROM-THE-URL'; }");
      return void res.writeHead(404).end();
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.2', r));
    try {
      const { port } = site.address() as AddressInfo;
      await page.getByRole('link', { name: 'Convert' }).click();
      await page.getByLabel('Or a web page (URL)').fill(`http://127.0.0.2:${port}/statement`);
      await page.getByRole('button', { name: 'Convert page' }).click();
      await page.getByText(/^statement\.pdf, /).waitFor({ timeout: 90_000 });
      const download = page.getByRole('link', { name: 'Download', exact: true }).first();
      const [file] = await Promise.all([page.waitForEvent('download'), download.click()]);
      const text = spawnSync('/usr/bin/pdftotext', [await file.path(), '-'], { encoding: 'utf8' }).stdout;
      assert.match(text, /Statement 7 FROM-THE-URL/, 'the page and its stylesheet, fetched by the service');
      assert.deepEqual(b.foreign, [], 'the dashboard itself loaded nothing from elsewhere');
      assert.deepEqual(b.problems, []);
    } finally {
      await new Promise((r) => site.close(r));
    }
  });

  test('webhooks: an endpoint added on the Webhooks page is told of the next conversion, signed, and lists the delivery; the request secret is shown once', async () => {
    const { page } = b;
    const receiver = await startReceiver();
    try {
      // A user of its own: the earlier tests spent most of Grace's 60 requests this minute.
      await page.getByRole('button', { name: 'Sign out' }).click();
      createUser('convert-api', svc.env, 'lin@example.test', 'business', PASSWORD);
      await signIn(page, svc.url, 'lin@example.test', PASSWORD);
      await page.getByRole('link', { name: 'Webhooks' }).click();
      await page.getByLabel('Endpoint URL (HTTPS)').fill(`http://127.0.0.1:${receiver.port}/hooks/conversions`);
      await page.getByRole('button', { name: 'Add webhook' }).click();
      const secret = (await page.getByTestId('secret').innerText()).trim();
      assert.match(secret, /^whsec_/);
      await page.getByRole('button', { name: 'Make signing secret' }).click();
      await page.getByText('Request signing secret').waitFor();
      const requestSecret = (await page.getByTestId('secret').nth(1).innerText()).trim();
      assert.match(requestSecret, /^whsec_/);
      assert.notEqual(requestSecret, secret);
      await page.getByRole('link', { name: 'Convert' }).click();
      await dropDocx(page, 'hooked.docx');
      await page.getByTestId('detected').filter({ hasText: 'DOCX' }).waitFor();
      await page.getByLabel('Convert to').selectOption('pdf');
      await page.getByRole('button', { name: 'Convert', exact: true }).click();
      await page.getByRole('link', { name: 'Download', exact: true }).first().waitFor({ timeout: 90_000 });
      const [hit] = await receiver.waitFor(1);
      assert.equal(hit!.headers['x-service-event'], 'conversion.completed');
      assert.equal(hit!.headers['x-service-signature'], `sha256=${createHmac('sha256', secret).update(hit!.body).digest('hex')}`);
      const event = JSON.parse(hit!.body.toString('utf8')) as { status: string; output: { format: string; sha256: string } };
      assert.deepEqual([event.status, event.output.format], ['completed', 'pdf']);
      await page.getByRole('link', { name: 'Webhooks' }).click();
      // The endpoint's own button: the request-secret card has one too, and either may render first.
      await page.locator('.hook').getByRole('button', { name: 'Deliveries' }).click();
      await page.locator('.deliveries').getByText('delivered').waitFor({ timeout: 15_000 });
      assert.match(await page.locator('.deliveries').innerText(), /conversion\.completed[\s\S]*#1 .*HTTP 204/);
      await b.shot('convert-webhooks');
      await checkLayout(b, 'convert-webhooks', ['Deliveries']);
      assert.deepEqual(b.foreign, []);
      assert.deepEqual(b.problems, []);
    } finally {
      await receiver.close();
    }
  });

  test('merge: a .docx and a picture dropped together become one PDF, in order, downloaded', async () => {
    const { page } = b;
    await page.getByRole('link', { name: 'Convert' }).click();
    const transfer = await page.evaluateHandle(([docx, png]) => {
      const dt = new DataTransfer();
      dt.items.add(new File([new Uint8Array(docx)], 'chapter.docx', { type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' }));
      dt.items.add(new File([new Uint8Array(png)], 'figure.png', { type: 'image/png' }));
      return dt;
    }, [[...(await readFile(join(FIXTURES, 'sample.docx')))], [...(await readFile(join(FIXTURES, 'sample.png')))]] as [number[], number[]]);
    await page.getByTestId('merge-dropzone').dispatchEvent('drop', { dataTransfer: transfer });
    const order = page.getByRole('list', { name: 'Files to merge, in order' });
    assert.deepEqual((await order.locator('li').allInnerTexts()).map((t) => t.split(/\s/)[0]), ['chapter.docx', 'figure.png']);
    await b.shot('convert-merge');
    await page.getByRole('button', { name: 'Merge to PDF' }).click();
    // The merge's record, shown above the recent list (whose rows have Download links of their own).
    await page.getByText(/^merged\.pdf, /).waitFor({ timeout: 90_000 });
    const download = page.getByRole('link', { name: 'Download', exact: true }).first();
    const [file] = await Promise.all([page.waitForEvent('download'), download.click()]);
    const info = spawnSync('/usr/bin/pdfinfo', [await file.path()], { encoding: 'utf8' }).stdout;
    const pages = Number(/Pages:\s+(\d+)/.exec(info)?.[1]);
    assert.ok(pages >= 2, info);
    const lastPageText = spawnSync('/usr/bin/pdftotext', ['-f', String(pages), '-l', String(pages), await file.path(), '-'], { encoding: 'utf8' }).stdout;
    assert.equal(lastPageText.trim(), '', 'the picture comes last, after the document');
    assert.deepEqual(b.foreign, []);
    assert.deepEqual(b.problems, []);
  });
});

describe('a queued conversion in chromium', { timeout: 180_000 }, () => {
  test('with no converter free it says it is waiting (no moving bar), then converts when a worker takes it', async () => {
    // An API-only service runs no converter: what it accepts stays queued until a worker comes (issue 30).
    const svc = await startConvertService({ CONVERT_ROLE: 'api' });
    const b = await openBrowser(svc.url);
    let worker: { close(): Promise<void> } | undefined;
    try {
      createUser('convert-api', svc.env, 'queue@example.test', 'pro', PASSWORD);
      const { page } = b;
      await signIn(page, svc.url, 'queue@example.test', PASSWORD);
      await page.getByRole('link', { name: 'Convert' }).click();
      await dropDocx(page, 'queued.docx');
      await page.getByTestId('detected').filter({ hasText: 'DOCX' }).waitFor();
      await page.getByRole('button', { name: 'Convert', exact: true }).click();
      const status = page.getByTestId('conversion-status');
      await status.filter({ hasText: 'waiting for a free converter' }).waitFor();
      assert.match(await page.locator('main').innerText(), /starts as soon as one finishes/);
      assert.equal(await page.locator('.spinner-bar').count(), 0, 'nothing moves yet, so no moving bar');
      await b.shot('convert-queued');
      worker = await startConvertWorker(svc.env);
      await page.getByText(/^queued\.pdf, /).waitFor({ timeout: 90_000 });
      assert.doesNotMatch(await status.innerText(), /waiting|converting/);
      assert.deepEqual(b.foreign, []);
      assert.deepEqual(b.problems, []);
    } finally {
      await b.close();
      await worker?.close();
      await svc.close();
    }
  });
});
