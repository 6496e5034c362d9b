// The XML pre-pass (issue 21) on its own: what it expands is checked against libxml2
// (`xmllint --noent`, canonical XML of both sides), what it refuses by its messages.
import assert from 'node:assert/strict';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ConversionError } from '../errors.js';
import { scratchDir, tool } from '../testing/tools.js';
import { DEFAULT_INPUT_LIMITS, inspectInput } from './input-guard.js';
import { MAX_DEPTH, PROLOG_BYTES } from './xml-entities.js';
import type { JobContext } from '../engines/engine.js';

let dir: string;
before(async () => {
  dir = await scratchDir('xml-entities-');
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const job = (): JobContext => ({ dir, timeoutMs: 30_000, maxFileBytes: 64 * 1024 * 1024, maxInputPixels: 1e8 });
let n = 0;

/** Writes `content` as an upload and runs the guard on it. */
async function inspect(content: string | Buffer, ext = 'xml'): Promise<{ input: string; source: string; references: number | undefined }> {
  const source = join(dir, `in-${n++}.${ext}`);
  await writeFile(source, content);
  const r = await inspectInput(source, ext, DEFAULT_INPUT_LIMITS, job());
  return { input: r.input, source, references: r.facts.entity_references };
}

/** Canonical XML (C14N) of a file, entities expanded by libxml2, nothing loaded from outside. */
function c14n(path: string): string {
  return tool('/usr/bin/xmllint', ['--nonet', '--noent', '--c14n', path]);
}

async function refused(content: string | Buffer, message: RegExp, ext = 'xml'): Promise<void> {
  await assert.rejects(inspect(content, ext), (e: unknown) => {
    assert.ok(e instanceof ConversionError, String(e));
    assert.equal(e.code, 'conversion_failed');
    assert.match(e.message, message);
    return true;
  });
}

describe('internal entities are expanded as an XML parser would', () => {
  const cases: Record<string, string> = {
    'text and attribute values, nested': '<?xml version="1.0"?>\n<!DOCTYPE doc [\n  <!ENTITY product "Mailconv">\n  <!ENTITY full "&product; Converter">\n]>\n<doc title="&full; (&product;)">About &full;, by &product;.</doc>\n',
    'markup inside an entity (Illustrator\'s Viewport)': '<!DOCTYPE svg [<!ENTITY Viewport "<rect x=\'.5\' y=\'.5\' width=\'49\' height=\'29\'/>">]><svg xmlns="http://www.w3.org/2000/svg"><g>&Viewport;</g></svg>',
    'a default namespace from an entity': '<!DOCTYPE svg [<!ENTITY ns_svg "http://www.w3.org/2000/svg"><!ENTITY ns_xlink "http://www.w3.org/1999/xlink">]><svg xmlns="&ns_svg;" xmlns:xlink="&ns_xlink;"><a xlink:href="#x"/></svg>',
    'quotes from an entity inside quoted attributes': '<!DOCTYPE d [<!ENTITY dq \'say "hi"\'><!ENTITY sq "it\'s">]><d a="&dq; &sq;" b=\'&dq; &sq;\'>&dq; &sq;</d>',
    'character references: in the value now, escaped twice later (XML 1.0 §4.6 example)': '<!DOCTYPE d [<!ENTITY example "<p>An ampersand (&#38;#38;) may be escaped numerically (&#38;#38;#38;) or with a general entity (&amp;amp;).</p>">]><d>&example;</d>',
    'built-ins and character references are left alone': '<!DOCTYPE d [<!ENTITY e "x">]><d a="&lt;&#34;&e;&quot;">&amp;&lt;&gt;&apos;&quot;&#233;&#x1F600;&e;</d>',
    'comments, CDATA and PIs keep their ampersands': '<!DOCTYPE d [<!ENTITY e "E">]><!-- &e; --><?pi &e; ?><d><!-- &nope; --><![CDATA[&nope; <x>]]><?pi &nope;?>&e;</d><!-- &e; -->',
    'white space from character references in values': '<!DOCTYPE d [<!ENTITY ws "a&#9;b&#10;c&#13;d">]><d a="&ws;">&ws;</d>',
    'the first declaration of a name binds; comments, PIs, ELEMENT and ATTLIST in the subset': '<!DOCTYPE d [<!-- a comment with ]> inside --><?pi ]>?><!ELEMENT d (#PCDATA)><!ATTLIST d a CDATA "x>y"><!ENTITY e "first"><!ENTITY e "second"><!NOTATION png SYSTEM "image/png">]><d a="z">&e;</d>',
    'an external DTD is named but never read; entities from the internal subset': '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n<!DOCTYPE article PUBLIC "-//OASIS//DTD DocBook XML V4.5//EN" "http://www.oasis-open.org/docbook/xml/4.5/docbookx.dtd" [\n<!ENTITY GHC "GHC">\n]>\n<article><para>&GHC; is a compiler.</para></article>',
  };
  for (const [name, xml] of Object.entries(cases)) {
    test(name, async () => {
      const r = await inspect(xml);
      assert.notEqual(r.input, r.source, 'a copy is written');
      const out = await readFile(r.input, 'utf8');
      assert.doesNotMatch(out, /<!ENTITY/);
      assert.ok((r.references ?? 0) >= 1);
      // libxml2 reads the copy (which declares nothing) as it reads the original with --noent.
      // An external DTD is named there: strip it from the original for xmllint too (--nonet
      // refuses to load it, and --noent alone would try).
      const original = join(dir, `orig-${n++}.xml`);
      await writeFile(original, xml.replace(/PUBLIC "[^"]*" "[^"]*"/, ''));
      assert.equal(c14n(r.input), c14n(original));
    });
  }

  test('a DOCTYPE naming an external DTD and declaring nothing: the file goes on unchanged', async () => {
    const xml = '<?xml version="1.0"?><!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd"><svg xmlns="http://www.w3.org/2000/svg"/>';
    const r = await inspect(xml, 'svg');
    assert.equal(r.input, r.source);
    const attlist = await inspect('<!DOCTYPE d [<!ATTLIST d a CDATA "x">]><d/>');
    assert.equal(attlist.input, attlist.source, 'a subset without entities is left as it is');
  });

  test('the rewritten copy keeps the DOCTYPE\'s name and external identifier, not its subset', async () => {
    const r = await inspect('<?xml version="1.0"?>\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd" [\n<!ENTITY ns_svg "http://www.w3.org/2000/svg">\n]>\n<svg xmlns="&ns_svg;"/>\n', 'svg');
    assert.equal(await readFile(r.input, 'utf8'), '<?xml version="1.0"?>\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">\n<svg xmlns="http://www.w3.org/2000/svg"/>\n');
  });

  test(`entities nested ${MAX_DEPTH} deep expand; one level more is refused`, async () => {
    const decls = (depth: number): string => Array.from({ length: depth }, (_, i) => `<!ENTITY e${i} "${i + 1 < depth ? `&e${i + 1};` : 'deep'}">`).join('');
    const ok = await inspect(`<!DOCTYPE d [${decls(MAX_DEPTH)}]><d>&e0;</d>`);
    assert.match(await readFile(ok.input, 'utf8'), /<d>deep<\/d>/);
    await refused(`<!DOCTYPE d [${decls(MAX_DEPTH + 1)}]><d>&e0;</d>`, new RegExp(`nests entities more than ${MAX_DEPTH} deep`));
  });
});

describe('encodings: read in the declared one, written in UTF-8', () => {
  const doc = (encoding: string): string => `<?xml version="1.0" encoding="${encoding}"?><!DOCTYPE d [<!ENTITY name "Zoë Ünal">]><d a="&name;">&name; — café</d>`;
  const expected = '<d a="Zoë Ünal">Zoë Ünal — café</d>';

  for (const [label, bytes] of [
    ['UTF-8 with a byte order mark', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(doc('UTF-8'))])],
    ['UTF-16LE with a byte order mark', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(doc('UTF-16'), 'utf16le')])],
    ['UTF-16BE with a byte order mark', Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(doc('UTF-16'), 'utf16le').swap16()])],
    ['UTF-16LE without a byte order mark', Buffer.from(doc('UTF-16'), 'utf16le')],
  ] as const) {
    test(label, async () => {
      const r = await inspect(bytes);
      const out = await readFile(r.input);
      assert.notDeepEqual(out.subarray(0, 3), Buffer.from([0xef, 0xbb, 0xbf]), 'no byte order mark');
      assert.match(out.toString('utf8'), /^<\?xml version="1.0" encoding="UTF-8"\?>/);
      assert.ok(out.toString('utf8').endsWith(expected));
      assert.match(c14n(r.input), /Zoë Ünal — café/);
    });
  }

  test('ISO-8859-1 (a legacy encoding the runtime decodes)', async () => {
    const r = await inspect(Buffer.from(doc('ISO-8859-1').replace(' —', ''), 'latin1'));
    const out = await readFile(r.input, 'utf8');
    assert.match(out, /encoding="UTF-8"/);
    assert.ok(out.endsWith('<d a="Zoë Ünal">Zoë Ünal café</d>'));
  });

  test('bytes that are not the declared encoding are refused, not guessed', async () => {
    await refused(Buffer.concat([Buffer.from(doc('UTF-8')), Buffer.from([0xff, 0xfe, 0x41])]), /not valid UTF-8/);
  });
});

describe('what stays refused', () => {
  test('billion laughs (SVGO\'s test file, nine levels of ten) is stopped by the bound', async () => {
    const lol = ['<!ENTITY lol "lol">', ...Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i || ''};`.repeat(10)}">`)];
    const started = Date.now();
    await refused(`<?xml version="1.0"?><!DOCTYPE lolz [${lol.join('')}]><lolz>&lol9;</lolz>`, /entities expand to more than 10,000,000 characters \(an entity expansion bomb such as "billion laughs"\)/);
    assert.ok(Date.now() - started < 5_000, 'refused quickly');
  });

  test('a quadratic blow-up (one 50 KB entity referenced 1,000 times) is stopped by the bound', async () => {
    await refused(`<!DOCTYPE d [<!ENTITY big "${'x'.repeat(50_000)}">]><d>${'&big;'.repeat(1_000)}</d>`, /expand to more than 10,000,000 characters/, 'dbk');
  });

  test('nested empty entities are counted too', async () => {
    const decls = ['<!ENTITY e0 "">', ...Array.from({ length: 6 }, (_, i) => `<!ENTITY e${i + 1} "${`&e${i};`.repeat(20)}">`)];
    await refused(`<!DOCTYPE d [${decls.join('')}]><d>&e6;</d>`, /expand to more than/);
  });

  test('external entities, SYSTEM and PUBLIC, and unparsed ones', async () => {
    await refused('<!DOCTYPE d [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><d>&xxe;</d>', /declares the external entity "xxe" \(SYSTEM\).*external entities are refused/);
    await refused('<!DOCTYPE d [<!ENTITY ok "fine"><!ENTITY pub PUBLIC "-//X//Y//EN" "http://127.0.0.1/x">]><d>&ok;</d>', /external entity "pub" \(PUBLIC\)/, 'svg');
    await refused('<!DOCTYPE d [<!NOTATION png SYSTEM "image/png"><!ENTITY pic SYSTEM "pic.png" NDATA png>]><d/>', /external entity "pic"/, 'dbk');
  });

  test('parameter entities, declared or referenced', async () => {
    await refused('<!DOCTYPE d [<!ENTITY % ext SYSTEM "http://127.0.0.1/evil.dtd"> %ext;]><d/>', /parameter entity "%ext".*pull in other DTDs/);
    await refused('<!DOCTYPE d [<!ENTITY % inner "<!ENTITY x \'y\'>">]><d/>', /parameter entity "%inner"/);
    await refused('<!DOCTYPE d [%undeclared;]><d/>', /parameter entity "%undeclared;"/);
    await refused('<!DOCTYPE d [<!ELEMENT d %content;>]><d/>', /parameter entity "%content;"/);
    await refused('<!DOCTYPE d [<!ENTITY e "a%pe;b">]><d>&e;</d>', /entity "e" uses a parameter entity/);
  });

  test('a reference to an undeclared name, in text or in an attribute or inside an entity', async () => {
    await refused('<!DOCTYPE d [<!ENTITY a "A">]><d>&a; &mdash;</d>', /uses the entity "&mdash;" without declaring it/);
    await refused('<!DOCTYPE d [<!ENTITY a "A">]><d x="&a;&nbsp;"/>', /"&nbsp;" without declaring it/);
    await refused('<!DOCTYPE d [<!ENTITY a "A &b;">]><d>&a;</d>', /"&b;" without declaring it/);
  });

  test('an entity that refers to itself, directly or through another', async () => {
    await refused('<!DOCTYPE d [<!ENTITY a "x&a;">]><d>&a;</d>', /entity "a" refers to itself/);
    await refused('<!DOCTYPE d [<!ENTITY a "&b;"><!ENTITY b "&a;">]><d x="&a;"/>', /refers to itself/);
  });

  test('entity values and bodies that are not well-formed', async () => {
    await refused('<!DOCTYPE d [<!ENTITY lt2 "&#60;">]><d a="&lt2;"/>', /entity holding "<" in an attribute value/);
    await refused('<!DOCTYPE d [<!ENTITY half "<b">]><d>&half;</d>', /not well-formed XML: the tag "b" is not closed properly \(in the entity "half"\)/);
    await refused('<!DOCTYPE d [<!ENTITY bad "a & b">]><d>&bad;</d>', /entity "bad" holds a bare "&"/);
    await refused('<!DOCTYPE d [<!ENTITY nul "&#0;">]><d>&nul;</d>', /character XML does not allow/);
  });

  test('entities in a DOCTYPE the pre-pass cannot read stay refused as before', async () => {
    await refused('<!DOCTYPE d [<![INCLUDE[<!ENTITY e "x">]]>]><d>&e;</d>', /declares XML entities in a DOCTYPE that cannot be read/);
    await refused('text before <!DOCTYPE d [<!ENTITY e "x">]><d>&e;</d>', /cannot be read/);
  });

  test('a prolog longer than the MiB read for it (declarations hidden behind a comment)', async () => {
    await refused(`<!--${'x'.repeat(PROLOG_BYTES)}--><!DOCTYPE d [<!ENTITY e SYSTEM "file:///etc/passwd">]><d>&e;</d>`, /prolog .* runs past its first 1 MiB/);
  });
});
