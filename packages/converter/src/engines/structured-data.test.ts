// The data, contacts and subtitle engines (issue 12) through the real Converter, each output
// read back by an independent parser (Python's json/csv/tomllib/yaml/xml/configparser, FFmpeg
// for subtitles), and their limits on hostile input: size, nesting, aliases, entities, heap.
// The each-to-each matrices run two conversions at a time and read their outputs back in one
// Python run (data) or one FFmpeg run per target (subtitles), not one process per pair; every
// pair is still converted and read back on its own (issue 44).
import assert from 'node:assert/strict';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Converter } from '../converter.js';
import { MARKER, PEOPLE, makeExtraSamples } from '../testing/extra-samples.js';
import { pythonReader } from '../testing/python-read.js';
import { atMostTwo, runTool, scratchDir } from '../testing/tools.js';
import { runInWorker } from './structured/run-in-worker.js';

let dir: string;
let conv: Converter;
let samples: Map<string, string>;

before(async () => {
  dir = await scratchDir('conv-data-');
  conv = await Converter.create({ workDir: join(dir, 'work'), timeoutMs: 30_000 });
  samples = await makeExtraSamples(join(dir, 'samples'));
});
after(async () => {
  await conv.close();
  await rm(dir, { recursive: true, force: true });
});

async function convert(input: string, from: string, to: string): Promise<{ path: string; engines: readonly string[] }> {
  const out = join(dir, 'out', `${from}-${to}-${Math.random().toString(36).slice(2)}.${to}`);
  const r = await conv.convert({ inputPath: input, sourceFormat: from, targetFormat: to, outputPath: out });
  if (!r.ok) assert.fail(`${from} → ${to}: ${JSON.stringify(r.error)}`);
  return { path: out, engines: r.engines };
}

const PY_READ: Readonly<Record<string, string>> = {
  json: 'json.load(open(p))',
  ndjson: '[json.loads(l) for l in open(p) if l.strip()]',
  csv: 'list(csv.DictReader(open(p, newline="")))',
  tsv: 'list(csv.DictReader(open(p, newline=""), delimiter="\\t"))',
  toml: 'tomllib.load(open(p, "rb"))',
  yaml: 'yaml.safe_load(open(p))',
  xml: 'to(ET.parse(p).getroot())',
  ini: '{s: dict(c[s]) for s in c.sections()} if c.read(p) else None',
};
const PY_PRELUDE = 'import sys,json,csv,tomllib,yaml,configparser\nimport xml.etree.ElementTree as ET\n'
  + 'def to(e):\n  kids=list(e)\n  if not kids: return e.text\n  d={}\n  for k in kids: d.setdefault(k.tag,[]).append(to(k))\n  return {k:(v[0] if len(v)==1 else v) for k,v in d.items()}\n';

/** Python reads each file with the standard parser of its format (a fresh ConfigParser per file). */
const python = pythonReader(PY_READ, { prelude: PY_PRELUDE, setup: '  c=configparser.ConfigParser(interpolation=None)\n' });
const pyRead = python.read;

/** The people records, wherever the format put them (a list, a table of `people`, sections, XML records). */
function people(v: unknown): Record<string, string>[] {
  let x = v;
  while (x && typeof x === 'object' && !Array.isArray(x) && Object.keys(x).length === 1) x = Object.values(x)[0];
  if (x && typeof x === 'object' && !Array.isArray(x)) x = Object.values(x); // INI sections
  return (x as Record<string, string>[]).map((r) => ({ name: r.name ?? '', email: r.email ?? '', city: r.city ?? '' }));
}

test('data formats convert each to each and an independent parser reads the same records', { timeout: 180_000 }, async () => {
  const formats = ['csv', 'tsv', 'json', 'ndjson', 'yaml', 'toml', 'xml', 'ini'];
  const csv = await convert(samples.get('json') as string, 'json', 'csv');
  samples.set('csv', csv.path);
  const pairs = formats.flatMap((from) => formats.filter((to) => to !== from).map((to) => ({ from, to })));
  assert.equal(pairs.length, 56);
  const outputs = await atMostTwo(pairs, async ({ from, to }) => {
    const r = await convert(samples.get(from) as string, from, to);
    assert.deepEqual(r.engines, ['data'], `${from} → ${to}`);
    return { path: r.path, fmt: to, label: `${from} → ${to}` };
  });
  const values = await python.values(outputs);
  outputs.forEach(({ label }, i) => assert.deepEqual(people(values[i]), PEOPLE, label));
});

test('vCard and iCalendar become tables and back', async () => {
  const vcfCsv = await convert(samples.get('vcf') as string, 'vcf', 'csv');
  const rows = (await pyRead(vcfCsv.path, 'csv')) as Record<string, string>[];
  assert.deepEqual(rows.map((r) => [r.fn, r.email]), PEOPLE.map((p) => [p.name, p.email]));
  const icsJson = await convert(samples.get('ics') as string, 'ics', 'json');
  const events = (await pyRead(icsJson.path, 'json')) as Record<string, string>[];
  assert.equal(events[0]?.summary, `${MARKER} launch`);
  assert.equal(events[0]?.dtstart, '2026-03-01T10:00:00Z');
  assert.equal(events[1]?.dtstart, '2026-04-02');
  // A contact table from a mail client and an event table become vCard 4.0 and iCalendar.
  const vcf = await readFile((await convert(samples.get('csv>vcf') as string, 'csv', 'vcf')).path, 'utf8');
  assert.match(vcf, /^BEGIN:VCARD\r\nVERSION:4\.0\r\nFN:Ada Lovelace\r\nEMAIL:ada@example\.org\r\nTEL:\+44 20 7946 0000\r\nEND:VCARD\r\n/);
  assert.match(vcf, new RegExp(`FN:Hopper\\\\, Grace ${MARKER}\\r\\n`));
  const ics = await readFile((await convert(samples.get('csv>ics') as string, 'csv', 'ics')).path, 'utf8');
  assert.match(ics, /DTSTART:20260301T100000Z\r\nDTEND:20260301T110000Z\r\nLOCATION:Room 1\\, floor 2/);
  assert.match(ics, /DTSTART;VALUE=DATE:20260402/);
  // The calendar we wrote is read back (ical.js) into the same events.
  const back = (await pyRead(await writeBack(ics), 'csv')) as Record<string, string>[];
  assert.deepEqual(back.map((e) => [e.summary, e.dtstart, e.location]), [[`${MARKER} launch`, '2026-03-01T10:00:00Z', 'Room 1, floor 2'], ['Review', '2026-04-02', '']]);
  const notContacts = join(dir, 'numbers.csv');
  await writeFile(notContacts, 'a,b\n1,2\n');
  const r = await conv.convert({ inputPath: notContacts, sourceFormat: 'csv', targetFormat: 'vcf', outputPath: join(dir, 'out', 'none.vcf') });
  assert.equal(r.ok, false);
  assert.match(!r.ok ? r.error.message : '', /No contact found/);
});

async function writeBack(ics: string): Promise<string> {
  const p = join(dir, 'roundtrip.ics');
  await writeFile(p, ics);
  return (await convert(p, 'ics', 'csv')).path;
}

/** FFmpeg's demuxer per subtitle format it reads (it has none for SBV). */
const SUBTITLE_DEMUXER: Readonly<Record<string, string>> = { srt: 'srt', vtt: 'webvtt', ass: 'ass', ssa: 'ass', sub: 'microdvd', lrc: 'lrc', smi: 'sami' };

/** FFmpeg's input arguments for a `to` subtitle file. */
const ffmpegInput = (path: string, to: string): string[] => ['-f', SUBTITLE_DEMUXER[to] as string, ...(to === 'sub' ? ['-subfps', '25'] : []), '-i', path];

/**
 * FFmpeg reads every `to` file and writes each as SRT text: one run for them all (each input
 * mapped to its own SRT file), or, when that run fails, one run per file so that the failing
 * file is named with FFmpeg's own message.
 */
async function ffmpegToSrt(paths: readonly string[], to: string): Promise<string[]> {
  const srts = paths.map((p) => `${p}.ffmpeg.srt`);
  const all = await runTool('/usr/bin/ffmpeg', ['-v', 'error', '-y', ...paths.flatMap((p) => ffmpegInput(p, to)), ...srts.flatMap((s, i) => ['-map', `${i}`, '-f', 'srt', s])]);
  if (all.code === 0) return Promise.all(srts.map((s) => readFile(s, 'utf8')));
  return Promise.all(paths.map(async (p) => {
    const one = await runTool('/usr/bin/ffmpeg', ['-v', 'error', ...ffmpegInput(p, to), '-f', 'srt', '-']);
    if (one.code !== 0) assert.fail(`FFmpeg could not read ${p} as ${to}: ${one.stderr}`);
    return one.stdout.toString('utf8');
  }));
}

test('subtitles convert each to each; FFmpeg reads every output it knows and finds the cues', { timeout: 120_000 }, async () => {
  const formats = ['srt', 'vtt', 'ass', 'ssa', 'sub', 'sbv', 'lrc', 'smi'];
  const pairs = formats.flatMap((from) => formats.filter((to) => to !== from).map((to) => ({ from, to })));
  assert.equal(pairs.length, 56);
  const outputs = await atMostTwo(pairs, async ({ from, to }) => (await convert(samples.get(from) as string, from, to)).path);
  // The text FFmpeg reads from each output (one FFmpeg run per target), or the output itself where FFmpeg has no reader.
  const texts = new Array<string>(pairs.length);
  for (const to of formats) {
    const at = pairs.flatMap((p, i) => (p.to === to ? [i] : []));
    const read = SUBTITLE_DEMUXER[to] ? await ffmpegToSrt(at.map((i) => outputs[i] as string), to) : await Promise.all(at.map((i) => readFile(outputs[i] as string, 'utf8')));
    at.forEach((i, k) => (texts[i] = read[k] as string));
  }
  pairs.forEach(({ from, to }, i) => {
    const text = texts[i] as string;
    assert.match(text, new RegExp(`${MARKER} one`), `${from} → ${to}`);
    assert.match(text, /Second line/, `${from} → ${to}`);
    if (to === 'srt') assert.match(text, /00:00:01[,.]000 --> 00:00:0(2|3)[,.]\d{3}/, `${from} → srt keeps the timing`);
  });
});

test('hostile data is refused with a clear message and never stalls the service', { timeout: 120_000 }, async () => {
  const cases: [string, string, string | Buffer, RegExp][] = [
    ['deep.json', 'json', `${'['.repeat(5000)}${']'.repeat(5000)}`, /nested more than 64 levels/],
    ['laughs.yaml', 'yaml', `a: &a ["x","x","x","x","x","x","x","x","x","x"]\n${Array.from({ length: 12 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10).fill(`*${String.fromCharCode(97 + i)}`).join(',')}]`).join('\n')}\n`, /YAML|alias/i],
    // Internal entities are expanded by the input guard's pre-pass (issue 21); external ones stay refused.
    ['entities.xml', 'xml', '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a SYSTEM "file:///etc/passwd">]><r>&a;</r>', /external entit/],
    ['broken.json', 'json', '{"a": ', /could not be read/],
    ['latin1.csv', 'csv', Buffer.from([0x61, 0x2c, 0x62, 0x0a, 0xe9, 0x2c, 0x31, 0x0a]), /not UTF-8/],
  ];
  for (const [name, from, body, message] of cases) {
    const p = join(dir, name);
    await writeFile(p, body);
    const ticks: number[] = [];
    const timer = setInterval(() => ticks.push(Date.now()), 20);
    const started = Date.now();
    const r = await conv.convert({ inputPath: p, sourceFormat: from, targetFormat: 'csv' === from ? 'json' : 'csv', outputPath: join(dir, 'out', `${name}.out`) });
    clearInterval(timer);
    assert.equal(r.ok, false, name);
    if (!r.ok) {
      assert.equal(r.error.code, 'conversion_failed', name);
      assert.match(r.error.message, message, name);
    }
    assert.ok(Date.now() - started < 20_000, `${name} took ${Date.now() - started} ms`);
  }
  // Past the input cap: refused before it is read.
  const big = join(dir, 'big.json');
  await writeFile(big, `[${'"xxxxxxxxxxxxxxxx",'.repeat(2_000_000)}"x"]`);
  const r = await conv.convert({ inputPath: big, sourceFormat: 'json', targetFormat: 'yaml', outputPath: join(dir, 'out', 'big.yaml') });
  assert.equal(r.ok, false);
  assert.match(!r.ok ? r.error.message : '', /over the 33554432 bytes/);
});

test('the worker is stopped by its heap cap and by the time-out, and the event loop keeps turning', { timeout: 120_000 }, async () => {
  const work = await scratchDir('conv-worker-');
  try {
    const input = join(work, 'many.json');
    // ~16 MB of small objects: several hundred MiB of heap once parsed and written as YAML.
    await writeFile(input, `[${'{"k":"v","n":1},'.repeat(1_000_000)}{"k":"v"}]`);
    const job = { dir: work, timeoutMs: 60_000, maxFileBytes: 1024 ** 3, maxInputPixels: 1e6 };
    const step = { input, from: 'json', to: 'yaml', output: join(work, 'out.yaml'), options: {}, quality: 75, qualityRequested: false, job };
    let lag = 0;
    let last = Date.now();
    const timer = setInterval(() => {
      lag = Math.max(lag, Date.now() - last - 20);
      last = Date.now();
    }, 20);
    await assert.rejects(runInWorker(step, 'data', { maxInputBytes: 64 * 1024 ** 2, maxHeapMb: 48 }), /more memory to convert than the 48 MiB/);
    await assert.rejects(runInWorker({ ...step, job: { ...job, timeoutMs: 300 } }, 'data', { maxInputBytes: 64 * 1024 ** 2, maxHeapMb: 1024 }), /took too long/);
    clearInterval(timer);
    assert.ok(lag < 500, `event loop stalled ${lag} ms`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
});
