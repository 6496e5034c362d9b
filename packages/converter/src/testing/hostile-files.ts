/**
 * Hostile inputs, generated in the test that uses them (issue #13): nothing here is a
 * committed file. Zips are written by Debian's python3 `zipfile`, PDFs by hand (a valid
 * cross-reference table) and encrypted by qpdf. Used by the engine suite and by the API's
 * hostile-input suite (`@mailconv/converter/testing`).
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';

function python(script: string, args: string[]): void {
  const r = spawnSync('/usr/bin/python3', ['-I', '-c', script, ...args], { encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`python3 failed: ${r.stderr}`);
}

/** A mono PCM WAV file around `samples` (8-bit unsigned or 16-bit little-endian, as `bits` says). */
export function pcmWav(samples: Buffer, rate: number, bits: 8 | 16): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + samples.length, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE((rate * bits) / 8, 28);
  header.writeUInt16LE(bits / 8, 32);
  header.writeUInt16LE(bits, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(samples.length, 40);
  return Buffer.concat([header, samples]);
}

/** Writes a zip whose entries are `[name, text]` (deflated; `mimetype` stored first when present). */
export function writeZip(path: string, entries: readonly (readonly [string, string])[]): void {
  const script = [
    'import sys, json, zipfile',
    'entries = json.load(open(sys.argv[2]))',
    'with zipfile.ZipFile(sys.argv[1], "w") as z:',
    '    for name, text in entries:',
    '        if name == "mimetype": z.writestr(zipfile.ZipInfo("mimetype"), text)',
    '        else: z.writestr(name, text, compress_type=zipfile.ZIP_DEFLATED)',
  ].join('\n');
  const list = `${path}.entries.json`;
  writeFileSync(list, JSON.stringify(entries));
  python(script, [path, list]);
  spawnSync('/bin/rm', ['-f', list]);
}

const CONTENT_TYPES_DOCX =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
  '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>' +
  '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>';
const ROOT_RELS =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
  '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>';
const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"';

/** A minimal .docx with `body` (WordprocessingML inside `<w:body>`) and document relationships. */
export function writeDocx(path: string, body: string, docRels = '', extra: readonly (readonly [string, string])[] = [], prolog = ''): void {
  const rels = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${docRels}</Relationships>`;
  writeZip(path, [
    ['[Content_Types].xml', CONTENT_TYPES_DOCX],
    ['_rels/.rels', ROOT_RELS],
    ['word/_rels/document.xml.rels', rels],
    ['word/document.xml', `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>${prolog}<w:document ${W}><w:body>${body}</w:body></w:document>`],
    ...extra,
  ]);
}

/** A paragraph of text. */
export const para = (text: string): string => `<w:p><w:r><w:t xml:space="preserve">${text}</w:t></w:r></w:p>`;

/** A .docx whose one picture is linked (not embedded) from `url`, plus a hyperlink to it. */
export function writeLinkedDocx(path: string, urls: readonly string[]): void {
  const rels = urls.map((u, i) => `<Relationship Id="rL${i}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="${u}" TargetMode="External"/>`).join('');
  const pics = urls
    .map(
      (_u, i) =>
        `<w:p><w:r><w:drawing><wp:inline><wp:extent cx="914400" cy="914400"/><wp:docPr id="${i + 1}" name="p${i}"/><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic><pic:nvPicPr><pic:cNvPr id="${i + 1}" name="p${i}"/><pic:cNvPicPr/></pic:nvPicPr><pic:blipFill><a:blip r:link="rL${i}"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill><pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="914400" cy="914400"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></pic:spPr></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>`,
    )
    .join('');
  // An INCLUDETEXT field asks Word to pull a local file's text into the document.
  const field = `<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText xml:space="preserve"> INCLUDETEXT "file:///etc/passwd" </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>included</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>`;
  writeDocx(path, para('Linked resources below') + pics + field, rels);
}

/** A "docx" whose document part inflates to `bytes` of text (a zip bomb posing as a document). */
export function writeZipBombDocx(path: string, bytes: number): void {
  const script = [
    'import sys, zipfile',
    'n = int(sys.argv[2])',
    'with zipfile.ZipFile(sys.argv[1], "w", compression=zipfile.ZIP_DEFLATED) as z:',
    `    z.writestr("[Content_Types].xml", ${JSON.stringify(CONTENT_TYPES_DOCX)})`,
    `    z.writestr("_rels/.rels", ${JSON.stringify(ROOT_RELS)})`,
    `    head = '<?xml version="1.0" encoding="UTF-8"?><w:document ${W.replace(/"/g, '\\"')}><w:body><w:p><w:r><w:t>'`,
    '    tail = "</w:t></w:r></w:p></w:body></w:document>"',
    '    with z.open("word/document.xml", "w", force_zip64=True) as f:',
    '        f.write(head.encode())',
    '        chunk = b"A" * (1 << 20)',
    '        for _ in range(n >> 20): f.write(chunk)',
    '        f.write(tail.encode())',
  ].join('\n');
  python(script, [path, String(bytes)]);
}

/** A zip with `count` tiny entries posing as a .docx. */
export function writeManyEntriesDocx(path: string, count: number): void {
  const script = [
    'import sys, zipfile',
    'with zipfile.ZipFile(sys.argv[1], "w") as z:',
    `    z.writestr("[Content_Types].xml", ${JSON.stringify(CONTENT_TYPES_DOCX)})`,
    `    z.writestr("_rels/.rels", ${JSON.stringify(ROOT_RELS)})`,
    `    z.writestr("word/document.xml", '<w:document ${W.replace(/"/g, '\\"')}><w:body/></w:document>')`,
    '    for i in range(int(sys.argv[2])): z.writestr(f"x/{i}.txt", "")',
  ].join('\n');
  python(script, [path, String(count)]);
}

/** A billion-laughs DTD (entity expansion) plus an external entity naming a local file. */
export const ENTITY_PROLOG =
  '<!DOCTYPE w:document [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">' +
  '<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;"><!ENTITY xxe SYSTEM "file:///etc/passwd">]>';

/** An SVG with an external entity and remote/local references. */
export function svgWithEntities(url: string): string {
  return `<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY xxe SYSTEM "file:///etc/passwd"><!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;">]>` +
    `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="100" height="100"><text y="20">&xxe;&lol2;</text>` +
    `<image xlink:href="${url}" width="10" height="10"/><image xlink:href="file:///etc/passwd" width="10" height="10"/></svg>`;
}

/** A PNG header claiming `width` × `height` pixels, with a short compressed body (a pixel flood). */
export function pixelFloodPng(width: number, height: number): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (b: Buffer): number => {
    let c = 0xffffffff;
    for (const x of b) c = (crcTable[(c ^ x) & 0xff] as number) ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer): Buffer => {
    const head = Buffer.alloc(4);
    head.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const tail = Buffer.alloc(4);
    tail.writeUInt32BE(crc(body));
    return Buffer.concat([head, body, tail]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 1; // bit depth
  ihdr[9] = 0; // greyscale
  // The first rows of zeros, compressed: a few KB that claim billions of pixels.
  const rows = deflateSync(Buffer.alloc((Math.ceil(width / 8) + 1) * 64));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', rows), chunk('IEND', Buffer.alloc(0))]);
}

/**
 * A PDF of `pages` pages of text, written with a correct cross-reference table. With
 * `active`, it also carries document JavaScript (an open action and a name tree), a link
 * annotation with a launch action, one with a URI action (to `uri`) and an embedded file.
 */
export function makePdf(pages: number, opts: { active?: boolean; uri?: string; text?: string } = {}): Buffer {
  const objs: (string | Buffer)[] = [];
  const add = (o: string | Buffer): number => objs.push(o);
  const catalog = add('');
  const pagesObj = add('');
  const font = add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  const content = (i: number): Buffer => {
    const s = Buffer.from(`BT /F1 12 Tf 20 100 Td (${opts.text ?? 'Page'} ${i + 1}) Tj ET`);
    return Buffer.concat([Buffer.from(`<< /Length ${s.length} >>\nstream\n`), s, Buffer.from('\nendstream')]);
  };
  let annots = '';
  let names = '';
  let open = '';
  if (opts.active) {
    const js = add("<< /S /JavaScript /JS (app.alert\\('active'\\);) >>");
    const launch = add('<< /Type /Annot /Subtype /Link /Rect [0 0 50 50] /Border [0 0 0] /A << /S /Launch /F (cmd.exe) >> >>');
    const uri = add(`<< /Type /Annot /Subtype /Link /Rect [60 60 120 120] /Border [0 0 0] /A << /S /URI /URI (${opts.uri ?? 'http://127.0.0.1:9/'}) >> >>`);
    const data = Buffer.from('MZ-embedded-payload');
    const ef = add(Buffer.concat([Buffer.from(`<< /Type /EmbeddedFile /Length ${data.length} >>\nstream\n`), data, Buffer.from('\nendstream')]));
    const spec = add(`<< /Type /Filespec /F (payload.exe) /EF << /F ${ef} 0 R >> >>`);
    annots = `/Annots [${launch} 0 R ${uri} 0 R]`;
    names = `/Names << /JavaScript << /Names [(a) ${js} 0 R] >> /EmbeddedFiles << /Names [(payload.exe) ${spec} 0 R] >> >>`;
    open = `/OpenAction ${js} 0 R /AA << /WC ${js} 0 R >>`;
  }
  const kids: number[] = [];
  for (let i = 0; i < pages; i++) {
    const c = add(content(i));
    kids.push(add(`<< /Type /Page /Parent ${pagesObj} 0 R /MediaBox [0 0 200 200] /Contents ${c} 0 R /Resources << /Font << /F1 ${font} 0 R >> >> ${i === 0 ? annots : ''} >>`));
  }
  objs[catalog - 1] = `<< /Type /Catalog /Pages ${pagesObj} 0 R ${names} ${open} >>`;
  objs[pagesObj - 1] = `<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${pages} >>`;
  const parts: Buffer[] = [Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let size = parts[0]!.length;
  const offsets: number[] = [];
  objs.forEach((o, i) => {
    offsets.push(size);
    const b = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), Buffer.isBuffer(o) ? o : Buffer.from(o), Buffer.from('\nendobj\n')]);
    parts.push(b);
    size += b.length;
  });
  const xref = [`xref\n0 ${objs.length + 1}\n0000000000 65535 f \n`, ...offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`)].join('');
  parts.push(Buffer.from(`${xref}trailer\n<< /Size ${objs.length + 1} /Root ${catalog} 0 R >>\nstartxref\n${size}\n%%EOF\n`));
  return Buffer.concat(parts);
}

/** Encrypts a PDF with a user password (qpdf, AES-256): it cannot be opened without it. */
export function encryptPdf(input: string, output: string, password = 'secret'): void {
  const r = spawnSync('/usr/bin/qpdf', ['--encrypt', password, `${password}-owner`, '256', '--', input, output], { encoding: 'utf8', timeout: 30_000 });
  if (r.status !== 0) throw new Error(`qpdf --encrypt failed: ${r.stderr}`);
}

/** The keys of a PDF's objects that carry active content, as qpdf's uncompressed QDF form shows them. */
export function activeContentKeys(pdf: string): string[] {
  const r = spawnSync('/usr/bin/qpdf', ['--qdf', '--object-streams=disable', '--', pdf, '-'], { timeout: 30_000, maxBuffer: 256 * 1024 * 1024 });
  const text = r.stdout.toString('latin1');
  return [...new Set(text.match(/\/(JavaScript|JS|Launch|URI|EmbeddedFiles?|OpenAction|AA)\b/g) ?? [])];
}

/** A line of /etc/passwd that would show a local file was read. */
export const PASSWD_MARKER = /root:x?:0:0:/;

/** Messages must name no path and no version (issue #13). */
export function assertSafeMessage(message: string): void {
  if (/(^|[\s"'(])\/(etc|tmp|usr|work|var|home|root|proc)\b/.test(message)) throw new Error(`message names a path: ${message}`);
  if (/\b\d+\.\d+\.\d+\b/.test(message)) throw new Error(`message names a version: ${message}`);
  if (message.length > 400) throw new Error(`message is ${message.length} characters long`);
}
export * from './exploit-files.js';
export * from './exploit-conversions-graphics.js';
export * from './exploit-conversions-documents.js';
