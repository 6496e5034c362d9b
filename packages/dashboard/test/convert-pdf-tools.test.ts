// The conversion page's PDF tools (issue 25) in Debian's chromium, against the real service
// and its engines: a real form read, filled and flattened; words redacted with the pages
// numbered and PDF/A-2b asked for; a visible signature with the operator's certificate.
// Every result is checked by an independent tool (poppler's pdftotext, pdfinfo and pdfsig, qpdf).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { checkLayout, openBrowser, signIn, type Browser } from './browser.test-support.js';
import { createUser, ROOT, startConvertService, type RunningService } from './services.test-support.js';

const PASSWORD = 'correct horse battery staple';
const CORPUS = join(ROOT, 'packages', 'converter', 'test', 'corpus');
/** A real AcroForm LibreOffice wrote, from pypdf's test resources (the corpus NOTICE names it). */
const FORM_FILE = 'pdf/pypdf-libreoffice-form.pdf';

async function dropPdf(page: Page, name: string, bytes: Buffer): Promise<void> {
  const transfer = await page.evaluateHandle(([data, n]) => {
    const dt = new DataTransfer();
    dt.items.add(new File([new Uint8Array(data)], n, { type: 'application/pdf' }));
    return dt;
  }, [[...bytes], name] as [number[], string]);
  await page.getByTestId('dropzone').dispatchEvent('drop', { dataTransfer: transfer });
  await page.getByTestId('detected').filter({ hasText: 'PDF' }).waitFor();
}

/** Converts with the page's button, waits for the result, answers the downloaded file's path. */
async function convertAndDownload(page: Page, name: RegExp): Promise<string> {
  await page.getByRole('button', { name: 'Convert', exact: true }).click();
  await page.getByText(name).or(page.locator('main .error')).first().waitFor({ timeout: 120_000 });
  assert.equal(await page.locator('main .error').count(), 0, await page.locator('main').innerText());
  const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download', exact: true }).first().click()]);
  return file.path();
}

const text = (path: string): string => execFileSync('/usr/bin/pdftotext', ['-layout', path, '-']).toString();

describe('conversion dashboard: PDF forms, redaction, numbering, PDF/A and signing, in chromium', { timeout: 300_000 }, () => {
  let svc: RunningService;
  let b: Browser;
  let work: string;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'dashboard-pdf-'));
    // The operator's signing certificate: a test CA and a key signed by it, as PKCS#12.
    const pki = join(work, 'pki');
    await mkdir(pki);
    const ssl = (...args: string[]) => execFileSync('/usr/bin/openssl', args, { cwd: pki, stdio: 'pipe' });
    ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '30', '-subj', '/CN=Dashboard Test CA', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
    ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'signer.key', '-out', 'signer.csr', '-subj', '/CN=Dashboard Signer/O=Example Corp');
    await writeFile(join(pki, 'ext.cnf'), 'keyUsage=critical,digitalSignature,nonRepudiation\nextendedKeyUsage=emailProtection\n');
    ssl('x509', '-req', '-in', 'signer.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'signer.pem', '-days', '30', '-extfile', 'ext.cnf');
    ssl('pkcs12', '-export', '-inkey', 'signer.key', '-in', 'signer.pem', '-certfile', 'ca.pem', '-out', 'signer.p12', '-passout', 'pass:p12-secret');
    await writeFile(join(pki, 'p12-password'), 'p12-secret\n');
    svc = await startConvertService({
      CONVERT_DATA_DIR: join(work, 'data'),
      CONVERT_SIGNING_P12: join(pki, 'signer.p12'),
      CONVERT_SIGNING_P12_PASSWORD_FILE: join(pki, 'p12-password'),
    });
    createUser('convert-api', svc.env, 'pdf@example.test', 'pro', PASSWORD);
    b = await openBrowser(svc.url);
    await signIn(b.page, svc.url, 'pdf@example.test', PASSWORD);
  });
  after(async () => {
    await b?.close();
    await svc?.close();
    await rm(work, { recursive: true, force: true });
  });

  test('a real form: its fields listed, filled in and flattened', async () => {
    const { page } = b;
    await page.getByRole('link', { name: 'Convert' }).click();
    await dropPdf(page, 'form.pdf', await readFile(join(CORPUS, FORM_FILE)));
    await page.getByLabel('Convert to').selectOption('pdf');
    await page.getByText('Fill in the PDF’s form').click();
    await page.getByRole('button', { name: 'Read the form’s fields' }).click();
    const fields = page.getByTestId('form-fields');
    await fields.waitFor({ timeout: 120_000 });
    // A text field, a check box and a choice list, as the PDF's facts list them.
    await fields.getByLabel('Last Name', { exact: true }).fill('Lovelace');
    await fields.getByLabel('gdpr', { exact: true }).check();
    await fields.getByLabel('Nationality').selectOption('French');
    await page.getByLabel('Flatten:').check();
    await page.getByTestId('pdf-tools').scrollIntoViewIfNeeded();
    await b.shot('convert-pdf-form');
    await checkLayout(b, 'convert-pdf-form');
    const out = await convertAndDownload(page, /^form\.pdf, /);
    const got = text(out);
    assert.match(got, /Lovelace/, 'the text field’s value is on the page');
    assert.match(got, /French/, 'the choice is on the page');
    assert.match(got, /Alice/, 'the fields left alone keep their values');
    const json = JSON.parse(execFileSync('/usr/bin/qpdf', ['--json', '--json-key=acroform', out]).toString()) as { acroform: { fields: unknown[] } };
    assert.equal(json.acroform.fields.length, 0, 'no field remains after flattening');
  });

  test('words redacted, pages numbered, PDF/A-2b', async () => {
    const { page } = b;
    // Two pages of text made by Ghostscript from PostScript.
    const ps = join(work, 'letter.ps');
    await writeFile(ps, '%!PS\n/Helvetica findfont 14 scalefont setfont\n72 700 moveto (Dear Jane Doe, your case 4711 is closed.) show showpage\n72 700 moveto (Regards, the office of Jane Doe.) show showpage\n');
    const pdf = join(work, 'letter.pdf');
    execFileSync('/usr/bin/gs', ['-q', '-dSAFER', '-dBATCH', '-dNOPAUSE', '-sDEVICE=pdfwrite', `-sOutputFile=${pdf}`, ps]);
    await page.getByRole('link', { name: 'Convert' }).click();
    await dropPdf(page, 'letter.pdf', await readFile(pdf));
    await page.getByLabel('Convert to').selectOption('pdf');
    await page.getByText('Redact words').click();
    await page.getByLabel('Words or phrases to remove, one per line').fill('Jane Doe\n4711');
    await page.getByText('Page numbers and Bates numbers').click();
    await page.getByLabel('Number the pages').check();
    await page.getByLabel('Number format').fill('Page {page} of {pages}');
    await page.getByText('PDF/A and signature').click();
    await page.getByLabel('PDF/A level').selectOption('2b');
    await b.shot('convert-pdf-redact-number');
    await checkLayout(b, 'convert-pdf-redact-number');
    const out = await convertAndDownload(page, /^letter\.pdf, /);
    const got = text(out);
    assert.doesNotMatch(got, /Jane Doe|4711/, 'the redacted words are gone from the text');
    assert.match(got, /Dear/, 'the rest of the text stays');
    assert.match(got, /Page 1 of 2/);
    assert.match(got, /Page 2 of 2/);
    const meta = execFileSync('/usr/bin/pdfinfo', ['-meta', out]).toString();
    assert.match(meta, /pdfaid:part[^0-9]*2/, 'PDF/A-2 identification in the XMP');
  });

  test('a visible signature with the operator’s certificate, valid for pdfsig', async () => {
    const { page } = b;
    const ps = join(work, 'contract.ps');
    await writeFile(ps, '%!PS\n/Helvetica findfont 14 scalefont setfont\n72 700 moveto (The contract.) show showpage\n');
    const pdf = join(work, 'contract.pdf');
    execFileSync('/usr/bin/gs', ['-q', '-dSAFER', '-dBATCH', '-dNOPAUSE', '-sDEVICE=pdfwrite', `-sOutputFile=${pdf}`, ps]);
    await page.getByRole('link', { name: 'Convert' }).click();
    await dropPdf(page, 'contract.pdf', await readFile(pdf));
    await page.getByLabel('Convert to').selectOption('pdf');
    await page.getByText('PDF/A and signature').click();
    await page.getByLabel('Sign with the service’s certificate').check();
    await page.getByLabel('Visible signature').check();
    await page.getByLabel('Reason').fill('Approved');
    await page.getByLabel('Location').fill('Berlin');
    const out = await convertAndDownload(page, /^contract\.pdf, /);
    // -nocert: the test CA is in no trust store here; -no-ocsp: nothing leaves the machine.
    const sig = execFileSync('/usr/bin/pdfsig', ['-nocert', '-no-ocsp', out]).toString();
    assert.match(sig, /Signature is Valid/);
    assert.match(sig, /Total document signed/);
    assert.match(sig, /Dashboard Signer/);
    // The visible box: the signer, the reason and the location, as poppler reads the page.
    const box = text(out);
    assert.match(box, /Digitally signed by Dashboard Signer/);
    assert.match(box, /Approved/);
    assert.match(box, /Berlin/);
    assert.deepEqual(b.foreign, []);
    assert.deepEqual(b.problems, []);
  });
});
