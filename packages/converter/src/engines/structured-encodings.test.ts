// The data engine's JSON5, XML plist, Java properties, MessagePack, CBOR, BSON and GPX/KML →
// GeoJSON formats (issue 12) through the real Converter, each output read back by an
// independent parser (Debian's Python packages: json5, plistlib, javaproperties, msgpack,
// cbor2, pymongo's bson, geojson), and hostile binary input answered with a clean error.
// The each-to-each matrix runs two conversions at a time and Python reads all its outputs in
// one run, not one Python process per pair; every pair is still converted and read back (issue 44).
import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Converter } from '../converter.js';
import { MARKER, PEOPLE, makeExtraSamples } from '../testing/extra-samples.js';
import { pythonReader } from '../testing/python-read.js';
import { atMostTwo, scratchDir, tool } from '../testing/tools.js';

let dir: string;
let conv: Converter;
let samples: Map<string, string>;

before(async () => {
  dir = await scratchDir('conv-encodings-');
  conv = await Converter.create({ workDir: join(dir, 'work'), timeoutMs: 30_000 });
  samples = await makeExtraSamples(join(dir, 'samples'));
});
after(async () => {
  await conv.close();
  await rm(dir, { recursive: true, force: true });
});

async function convert(input: string, from: string, to: string): Promise<string> {
  const out = join(dir, 'out', `${from}-${to}-${Math.random().toString(36).slice(2)}.${to}`);
  const r = await conv.convert({ inputPath: input, sourceFormat: from, targetFormat: to, outputPath: out });
  if (!r.ok) assert.fail(`${from} → ${to}: ${JSON.stringify(r.error)}`);
  assert.deepEqual(r.engines, ['data']);
  return out;
}

/** Debian's parser of each format, as a Python expression of the path `p`. */
const PY_READ: Readonly<Record<string, string>> = {
  json: 'json.load(open(p))',
  json5: '__import__("json5").load(open(p))',
  plist: '__import__("plistlib").load(open(p, "rb"), fmt=__import__("plistlib").FMT_XML)',
  properties: 'dict(__import__("javaproperties").load(open(p, encoding="utf-8")))',
  msgpack: '__import__("msgpack").unpackb(open(p, "rb").read(), raw=False)',
  cbor: '__import__("cbor2").loads(open(p, "rb").read())',
  bson: '__import__("bson").decode_all(open(p, "rb").read())[0]',
  csv: 'list(csv.DictReader(open(p, newline="")))',
};

/** Python reads each file with Debian's parser of its format. */
const python = pythonReader(PY_READ);
const pyRead = python.read;

/** The people records wherever the format put them (a list, or a list under one key). */
function people(v: unknown): unknown {
  let x = v;
  while (x && typeof x === 'object' && !Array.isArray(x) && Object.keys(x).length === 1) x = Object.values(x)[0];
  return x;
}

test('JSON5, plist, MessagePack, CBOR and BSON convert each to each and Python reads the same records', { timeout: 180_000 }, async () => {
  const formats = ['json', 'json5', 'plist', 'msgpack', 'cbor', 'bson'];
  const pairs = formats.flatMap((from) => formats.filter((to) => to !== from).map((to) => ({ from, to })));
  assert.equal(pairs.length, 30);
  const outputs = await atMostTwo(pairs, async ({ from, to }) => ({ path: await convert(samples.get(from) as string, from, to), fmt: to, label: `${from} → ${to}` }));
  const values = await python.values(outputs);
  outputs.forEach(({ label }, i) => assert.deepEqual(people(values[i]), PEOPLE, label));
});

test('Java properties keep flat keys; nested values are written dotted, lists by index; as INI the first part is the section', async () => {
  const props = await pyRead(await convert(samples.get('json') as string, 'json', 'properties'), 'properties');
  assert.deepEqual(props, Object.fromEntries(PEOPLE.flatMap((p, i) => Object.entries(p).map(([k, v]) => [`${i}.${k}`, v]))));
  // The sample uses all three separators (=, :, blank); the escapes survive a round trip.
  const json = await pyRead(await convert(samples.get('properties') as string, 'properties', 'json'), 'json');
  assert.deepEqual(json, Object.fromEntries(PEOPLE.flatMap((p, i) => Object.entries(p).map(([k, v]) => [`person${i + 1}.${k}`, v]))));
  const sections = tool('/usr/bin/python3', ['-c', 'import configparser,sys\nc=configparser.ConfigParser(interpolation=None)\nc.read(sys.argv[1])\nprint(c.sections(), c["person2"]["name"])',
    await convert(samples.get('properties') as string, 'properties', 'ini')]).trim();
  assert.equal(sections, `['person1', 'person2'] ${PEOPLE[1]?.name}`);
  const tricky = join(dir, 'tricky.json');
  await writeFile(tricky, JSON.stringify({ 'key with = and :': 'line one\nline two \u00e9', '#not a comment': ' lead' }));
  assert.deepEqual(await pyRead(await convert(tricky, 'json', 'properties'), 'properties'), { 'key with = and :': 'line one\nline two \u00e9', '#not a comment': ' lead' });
});

test('GPX, KML and TCX become GeoJSON (valid to python-geojson) and tables of their features', async () => {
  for (const from of ['gpx', 'kml']) {
    const out = await convert(samples.get(from) as string, from, 'geojson');
    const check = tool('/usr/bin/python3', ['-c', 'import geojson,sys\no=geojson.load(open(sys.argv[1]))\nassert o.is_valid, o.errors()\nprint(o.type, len(o.features), sorted(f.geometry.type for f in o.features))', out]).trim();
    assert.equal(check, "FeatureCollection 2 ['LineString', 'Point']", from);
    const rows = (await pyRead(await convert(samples.get(from) as string, from, 'csv'), 'csv')) as Record<string, string>[];
    const point = rows.find((r) => r.geometry === 'Point');
    assert.equal(point?.name, `${MARKER} point`, from);
    assert.deepEqual((JSON.parse(point?.coordinates ?? '[]') as number[]).slice(0, 2), [-0.1276, 51.5072], from);
  }
  // A Garmin activity: one lap, its track a LineString with the times and heart rates beside it.
  const tcx = tool('/usr/bin/python3', ['-c', 'import geojson,sys\no=geojson.load(open(sys.argv[1]))\nassert o.is_valid, o.errors()\nf=o.features[0]\nprint(f.geometry.type, len(f.geometry.coordinates), f.properties["coordinateProperties"]["heart"])',
    await convert(samples.get('tcx') as string, 'tcx', 'geojson')]).trim();
  assert.equal(tcx, 'LineString 2 [120, 130]');
  // Any other table is not geodata: no such pair.
  const r = await conv.convert({ inputPath: samples.get('json') as string, sourceFormat: 'json', targetFormat: 'geojson', outputPath: join(dir, 'out', 'no.geojson') });
  assert.equal(r.ok, false);
});

test('hostile binary data and XML are refused with a clear message, quickly', { timeout: 120_000 }, async () => {
  const cases: [string, string, Buffer | string, RegExp][] = [
    // An array claiming 4 billion items in 5 bytes: the length is capped by the input size before any allocation.
    ['huge-array.msgpack', 'msgpack', Buffer.from([0xdd, 0xff, 0xff, 0xff, 0xff]), /Max length exceeded/],
    // A string claiming 2^64-1 bytes.
    ['huge-string.cbor', 'cbor', Buffer.from([0x7b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x61]), /truncated|could not be read/],
    // 100,000 nested one-item arrays.
    ['deep.msgpack', 'msgpack', Buffer.alloc(100_001, 0x91).fill(0xc0, 100_000), /nested more than 64 levels/],
    ['deep.cbor', 'cbor', Buffer.alloc(100_001, 0x81).fill(0xf6, 100_000), /depth|nested/i],
    // A BSON document whose length field claims 2 GiB.
    ['huge.bson', 'bson', Buffer.from([0xff, 0xff, 0xff, 0x7f, 0x0a, 0x61, 0x00, 0x00]), /length field does not match/],
    ['deep.bson', 'bson', deepBson(20_000), /nested/],
    ['entities.plist', 'plist', '<?xml version="1.0"?><!DOCTYPE plist [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]><plist><string>&b;</string></plist>', /declares XML entities/],
    ['entities.gpx', 'gpx', '<?xml version="1.0"?><!DOCTYPE gpx [<!ENTITY x SYSTEM "file:///etc/passwd">]><gpx><wpt lat="1" lon="1"><name>&x;</name></wpt></gpx>', /declares XML entities/],
    ['not-gpx.gpx', 'gpx', '<?xml version="1.0"?><html/>', /root element is <html>/],
    ['broken.json5', 'json5', '{a: ', /could not be read/],
  ];
  for (const [name, from, body, message] of cases) {
    const p = join(dir, name);
    await writeFile(p, body);
    const started = Date.now();
    const r = await conv.convert({ inputPath: p, sourceFormat: from, targetFormat: 'json' === from ? 'yaml' : 'json', outputPath: join(dir, 'out', `${name}.out`) });
    assert.equal(r.ok, false, name);
    if (!r.ok) {
      assert.equal(r.error.code, 'conversion_failed', name);
      assert.match(r.error.message, message, `${name}: ${r.error.message}`);
    }
    assert.ok(Date.now() - started < 20_000, `${name} took ${Date.now() - started} ms`);
  }
});

/** A BSON document nested `depth` levels (`{a: {a: …}}`), every length field right. */
function deepBson(depth: number): Buffer {
  let doc = Buffer.from([5, 0, 0, 0, 0]);
  for (let i = 0; i < depth; i++) {
    const inner = Buffer.concat([Buffer.from([0x03, 0x61, 0x00]), doc, Buffer.from([0])]);
    const len = Buffer.alloc(4);
    len.writeInt32LE(inner.length + 4);
    doc = Buffer.concat([len, inner]);
  }
  return doc;
}
