// `sign` (issue 25): PAdES B-B signatures checked by tools the converter does not use:
// poppler's pdfsig (signature valid, whole document signed, certificate trusted through an NSS
// database holding the test's own CA), openssl cms (verify the dumped CMS over the byte
// ranges; print its signed attributes), pdftotext and pdftoppm (the visible box), qpdf --check.
import assert from 'node:assert/strict';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import sharp from 'sharp';
import { Converter } from './converter.js';
import { findPlaceholder } from './pdf-sign.js';
import { CredentialError, loadPkcs12, type SigningCredential } from './signing-credential.js';
import { scratchDir, tool } from './testing/tools.js';
import { makeTestPki, pdfsig, signedParts, type TestPki } from './testing/test-pki.js';

let dir: string;
let conv: Converter;
let pki: TestPki;
let rsa: SigningCredential;
let textPdf: string;
const corpus = (name: string): string => new URL(`../test/corpus/pdf/${name}`, import.meta.url).pathname;
let n = 0;

before(async () => {
  dir = await scratchDir('conv-sign-');
  conv = await Converter.create({ workDir: join(dir, 'work'), timeoutMs: 60_000, maxInputPixels: 20_000_000 });
  pki = await makeTestPki(join(dir, 'pki'));
  rsa = loadPkcs12(await readFile(pki.rsaP12), pki.password);
  textPdf = join(dir, 'three.pdf');
  const ps = ['Alpha', 'Bravo', 'Charlie'].map((w) => `/Helvetica findfont 28 scalefont setfont 72 700 moveto (Page ${w}) show showpage`).join(' ');
  tool('/usr/bin/gs', ['-dSAFER', '-dBATCH', '-dNOPAUSE', '-dQUIET', '-sDEVICE=pdfwrite', '-sPAPERSIZE=a4', `-sOutputFile=${textPdf}`, '-c', ps]);
});
after(async () => {
  await conv.close();
  await rm(dir, { recursive: true, force: true });
});

async function sign(input: string, options: Record<string, unknown>, signing: SigningCredential | null = rsa) {
  return conv.convert({ inputPath: input, sourceFormat: 'pdf', targetFormat: 'pdf', options, outputPath: join(dir, 'out', `${n++}.pdf`), ...(signing ? { signing } : {}) });
}
async function signed(input: string, options: Record<string, unknown>, signing?: SigningCredential): Promise<string> {
  const r = await sign(input, options, signing);
  if (!r.ok) assert.fail(`${JSON.stringify(options)}: ${JSON.stringify(r.error)}`);
  tool('/usr/bin/qpdf', ['--check', r.output.path]);
  return r.output.path;
}

/** pdfsig's verdict on every signature, and that the last one covers the whole file and is trusted. */
function assertValid(pdf: string, signatures = 1): string {
  const report = pdfsig(pdf, pki, true);
  const before = report.split('Without network:')[0]!;
  assert.equal([...before.matchAll(/Signature Validation: Signature is Valid\./g)].length, signatures, report);
  assert.match(before, /Signature Type: ETSI\.CAdES\.detached/, report);
  assert.match(before, /Total document signed/, report);
  assert.match(report.split('Without network:')[1]!, /Certificate Validation: Certificate is Trusted\./, report);
  return report;
}

test('sign: true adds an invisible PAdES B-B signature that pdfsig and openssl verify', async () => {
  const out = await signed(textPdf, { sign: true });
  const report = assertValid(out);
  assert.match(report, /Signer Certificate Common Name: Jane Signer/);
  const { cms, content } = await signedParts(out, pki, 0, dir);
  // openssl verifies the signature over exactly the signed ranges and the chain to the test CA.
  tool('/usr/bin/openssl', ['cms', '-verify', '-binary', '-inform', 'DER', '-in', cms, '-content', content, '-CAfile', pki.caPem, '-purpose', 'any', '-out', '/dev/null']);
  const printed = tool('/usr/bin/openssl', ['cms', '-cmsout', '-print', '-inform', 'DER', '-in', cms]);
  assert.match(printed, /id-smime-aa-signingCertificateV2/);
  assert.match(printed, /object: contentType/);
  assert.match(printed, /object: messageDigest/);
  // B-B: the claimed time is /M, not a CMS signing-time attribute.
  assert.doesNotMatch(printed, /signingTime/);
  assert.match(await readFile(out, 'latin1'), /\/SubFilter \/ETSI\.CAdES\.detached/);
  // Invisible: nothing drawn.
  assert.doesNotMatch(tool('/usr/bin/pdftotext', [out, '-']), /Digitally signed/);
});

test('a visible signature draws its box with the signer, reason and location', async () => {
  const out = await signed(textPdf, { sign: { visible: true, page: -1, reason: 'Approved', location: 'Zürich', contact: 'ops@example.test' } });
  assertValid(out);
  const lastPage = tool('/usr/bin/pdftotext', ['-f', '3', '-l', '3', out, '-']);
  assert.match(lastPage, /Digitally signed by Jane Signer/);
  assert.match(lastPage, /Reason: Approved/);
  assert.match(lastPage, /Location: Zürich/);
  assert.doesNotMatch(tool('/usr/bin/pdftotext', ['-f', '1', '-l', '1', out, '-']), /Digitally signed/);
  // The default box: 200×60 pt at the bottom-right, 36 pt from the edges (A4: 595×842 pt).
  const png = join(dir, `render-${n++}`);
  tool('/usr/bin/pdftoppm', ['-f', '3', '-l', '3', '-r', '72', '-png', '-singlefile', out, png]);
  const { data, info } = await sharp(`${png}.png`).greyscale().raw().toBuffer({ resolveWithObject: true });
  const dark = (x0: number, y0: number, x1: number, y1: number): number => {
    let count = 0;
    for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) if (data[y * info.width + x]! < 128) count++;
    return count;
  };
  assert.ok(dark(359 - 2, 746 - 2, 559 + 2, 806 + 2) > 200, 'ink in the signature box');
  assert.equal(dark(300, 300, 500, 500), 0, 'nothing elsewhere');
  const annots = JSON.parse(tool('/usr/bin/qpdf', ['--json', '--json-key=acroform', out])) as { acroform: { fields: { fieldtype: string; fullname: string }[] } };
  assert.deepEqual(annots.acroform.fields.map((f) => [f.fieldtype, f.fullname]), [['/Sig', 'Signature1']]);
});

test('a box at a given place on a rotated page of a real PDF (qpdf test suite)', async () => {
  const out = await signed(corpus('qpdf-annotations-rotated-90.pdf'), { sign: { visible: true, x: 36, y: 36, width: 220, height: 60, reason: 'Checked' } });
  assertValid(out);
  assert.match(tool('/usr/bin/pdftotext', ['-f', '1', '-l', '1', out, '-']), /Digitally signed by Jane Signer/);
});

test('a form saved by Acrobat Reader (pypdf test suite: object and cross-reference streams, an earlier update) is signed by a further update', async () => {
  const source = corpus('pypdf-form_acrobatReader.pdf');
  // Not `signed()`: qpdf --check warns about one of the source's own streams (exit 3), before and after.
  const r = await sign(source, { sign: { visible: true, page: -1, location: 'Test' } });
  if (!r.ok) assert.fail(JSON.stringify(r.error));
  const out = r.output.path;
  assertValid(out);
  assert.deepEqual((await readFile(out)).subarray(0, (await readFile(source)).length), await readFile(source));
  assert.match(tool('/usr/bin/pdftotext', [out, '-']), /Digitally signed by Jane Signer/);
});

test('a real PDF with form fields, signed, then signed again: both signatures stay valid', async () => {
  const once = await signed(corpus('qpdf-appearances-1.pdf'), { sign: { visible: true, reason: 'First' } });
  assertValid(once);
  const ec = loadPkcs12(await readFile(pki.ecP12), pki.password);
  const twice = await signed(once, { sign: { visible: true, x: 36, y: 36, width: 200, height: 60, reason: 'Second' } }, ec);
  const report = assertValid(twice, 2);
  assert.match(report, /Signer Certificate Common Name: Jane Signer[\s\S]*Signer Certificate Common Name: Erin Signer/);
  // The first signature's bytes are untouched: the second is an incremental update.
  assert.deepEqual((await readFile(twice)).subarray(0, (await readFile(once)).length), await readFile(once));
  const { cms, content } = await signedParts(twice, pki, 1, dir);
  tool('/usr/bin/openssl', ['cms', '-verify', '-binary', '-inform', 'DER', '-in', cms, '-content', content, '-CAfile', pki.caPem, '-purpose', 'any', '-out', '/dev/null']);
});

test('one byte changed inside the signed range: pdfsig reports the signature invalid', async () => {
  const out = await signed(textPdf, { sign: true });
  const bytes = await readFile(out);
  // A byte of the binary comment on the PDF's second line: the file still parses the same.
  const at = bytes.indexOf('\n') + 2;
  bytes[at] = bytes[at]! ^ 0x01;
  const tampered = join(dir, 'tampered.pdf');
  await writeFile(tampered, bytes);
  const report = pdfsig(tampered, pki);
  assert.doesNotMatch(report, /Signature is Valid/, report);
  assert.match(report, /Signature Validation: (Digest Mismatch|Signature is Invalid)/, report);
});

test('linearize then sign: the signature is an update after the linearized file', async () => {
  const out = await signed(textPdf, { preset: 'linearize', sign: { visible: true } });
  assertValid(out);
});

test('sign: refusals name the field', async () => {
  const cases: [Record<string, unknown>, RegExp, SigningCredential | null][] = [
    [{ sign: true, set_password: 'secret' }, /encrypted output is not supported/, rsa],
    [{ sign: true }, /signing is not configured on this service/, null],
    [{ sign: { page: 9 } }, /not a page of the document/, rsa],
    [{ sign: { visible: true, x: 500, y: 20, width: 200, height: 60 } }, /does not fit on the page/, rsa],
    [{ sign: { x: 5, y: 5, width: 100, height: 50 } }, /add "visible": true/, rsa],
    [{ sign: { reason: 'a\nb' } }, /without control characters/, rsa],
    [{ sign: { reason: 'x'.repeat(201) } }, /1–200 characters/, rsa],
    [{ sign: { colour: 'red' } }, /unknown field "colour"/, rsa],
    [{ sign: 'maybe' }, /sign must be true or an object/, rsa],
    [{ sign: true, split: true }, /split/, rsa],
  ];
  for (const [options, message, signing] of cases) {
    const r = await sign(textPdf, options, signing);
    assert.equal(r.ok, false, JSON.stringify(options));
    if (r.ok) continue;
    assert.equal(r.error.code, 'invalid_request', JSON.stringify(options));
    assert.equal(r.error.field, 'sign', JSON.stringify(options));
    assert.match(r.error.message, message);
  }
  // A multipart form's JSON text is the same option.
  assertValid(await signed(textPdf, { sign: '{"visible": true, "reason": "Form"}' }));
  const docx = await conv.convert({ inputPath: textPdf, sourceFormat: 'pdf', targetFormat: 'png', options: { sign: true }, outputPath: join(dir, 'x.png'), signing: rsa });
  assert.equal(!docx.ok && docx.error.field, 'sign');
});

test('a hostile PDF: odd /Annots and /Fields, a forged placeholder of its own; still one valid signature, or a clean failure', async () => {
  // Written by hand: /Annots a string, /AcroForm /Fields a number, and the exact placeholder
  // shape (with another nonce) in a stream, which the signer must not take for its own.
  const forged = `%mailconv-sign ${'ab'.repeat(16)}\n/ByteRange [0 0000000000 0000000000 0000000000]\n/Contents <${'0'.repeat(32768)}>`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields 5 0 R >> >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 400 300] /Annots 6 0 R /Contents 4 0 R >>',
    `<< /Length ${forged.length} >>\nstream\n${forged}\nendstream`,
    '42',
    '(not an array)',
  ];
  let body = '%PDF-1.7\n';
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(body.length);
    body += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = body.length;
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f\r\n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n\r\n`).join('')}`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  const hostile = join(dir, 'hostile.pdf');
  await writeFile(hostile, body, 'latin1');
  const out = await signed(hostile, { sign: { visible: true, x: 20, y: 20, width: 200, height: 60 } });
  assertValid(out);
  // The widget is on the page (a new /Annots array), not lost in the string.
  assert.match(tool('/usr/bin/pdftotext', [out, '-']), /Digitally signed by Jane Signer/);
  // A page tree that points at itself: pikepdf gives up, the conversion fails cleanly.
  const loop = join(dir, 'loop.pdf');
  await writeFile(loop, body.replace('/Kids [3 0 R]', '/Kids [2 0 R]'), 'latin1');
  const r = await sign(loop, { sign: true });
  assert.equal(r.ok, false);
  if (!r.ok) assert.ok(['conversion_failed', 'invalid_request'].includes(r.error.code), JSON.stringify(r.error));
});

test('the placeholder is found by the nonce only, exactly once, in its exact shape', () => {
  const slot = (nonce: string): string => `%mailconv-sign ${nonce}\n/ByteRange [0 0000000000 0000000000 0000000000]\n/Contents <${'0'.repeat(32768)}>`;
  const good = Buffer.from(`%PDF-1.7\n${slot('aa')}\n%%EOF\n`, 'latin1');
  assert.equal(findPlaceholder(good, 'aa').contentsStart, good.indexOf('<'));
  // A hostile file that carries a placeholder of its own under another nonce, or the right one twice.
  assert.throws(() => findPlaceholder(good, 'bb'), /prepared for signing/);
  assert.throws(() => findPlaceholder(Buffer.from(`${slot('aa')}\n${slot('aa')}`, 'latin1'), 'aa'), /prepared for signing/);
  // Cut short, or not zero-filled.
  assert.throws(() => findPlaceholder(good.subarray(0, good.length - 100), 'aa'), /prepared for signing/);
  assert.throws(() => findPlaceholder(Buffer.from(slot('aa').replace('<00', '<10'), 'latin1'), 'aa'), /prepared for signing/);
});

test('PKCS#12 files: wrong password, no key, expired, not yet valid', async () => {
  const read = (p: string): Promise<Buffer> => readFile(p);
  assert.throws(() => loadPkcs12(Buffer.from('not a p12'), 'x'), CredentialError);
  const rsaBytes = await read(pki.rsaP12);
  assert.throws(() => loadPkcs12(rsaBytes, 'wrong password'), (e: Error) => e instanceof CredentialError && /wrong password/.test(e.message));
  const noKey = await read(pki.noKeyP12);
  const expired = await read(pki.expiredP12);
  assert.throws(() => loadPkcs12(noKey, pki.password), /no private key/);
  assert.throws(() => loadPkcs12(expired, pki.password), /expired/);
  assert.throws(() => loadPkcs12(rsaBytes, pki.password, new Date('2000-01-01')), /not valid yet/);
  const facts = loadPkcs12(rsaBytes, pki.password).facts;
  assert.equal(facts.commonName, 'Jane Signer');
  assert.equal(facts.issuer, 'CN=Mailconv Test CA');
  assert.equal(facts.sha256, tool('/usr/bin/openssl', ['x509', '-in', join(pki.dir, 'rsa.pem'), '-noout', '-fingerprint', '-sha256']).split('=')[1]!.trim().replace(/:/g, '').toLowerCase());
});
