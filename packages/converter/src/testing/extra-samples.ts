/**
 * One small sample of every format issue 12's engines read, made by independent tools
 * (FFmpeg, SoX, Python's zipfile/tarfile, 7-Zip, ImageMagick, Netpbm; FFmpeg's QOI encoder) or written here as text, and,
 * where only the engine itself writes a format (EMF, WMF, fonts, most 3D formats), by that
 * engine's own binary run directly. Each sample holds a marker the checks look for.
 * Used by the registry matrix and the engine tests only.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { makeDng } from './raw-sample.js';
import { fixture, tool } from './tools.js';

/** Audio samples FFmpeg's CLI writes: extension, encoder, muxer. */
const AV_AUDIO: readonly (readonly [string, string, string])[] = [
  ['ac3', 'ac3', 'ac3'], ['eac3', 'eac3', 'eac3'], ['mp2', 'mp2', 'mp2'], ['aac', 'aac', 'adts'], ['wma', 'wmav2', 'asf'],
  ['mka', 'libopus', 'matroska'], ['oga', 'flac', 'oga'], ['tta', 'tta', 'tta'], ['spx', 'libspeex', 'spx'],
];
const H264_AAC = ['-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac'];
/** Video samples FFmpeg's CLI writes: extension, codec arguments, muxer. */
const AV_VIDEO: readonly (readonly [string, readonly string[], string])[] = [
  ['flv', H264_AAC, 'flv'], ['f4v', H264_AAC, 'f4v'], ['m4v', H264_AAC, 'ipod'], ['3gp', H264_AAC, '3gp'], ['3g2', H264_AAC, '3g2'],
  ['ts', H264_AAC, 'mpegts'], ['m2ts', [...H264_AAC, '-mpegts_m2ts_mode', '1'], 'mpegts'],
  ['wmv', ['-c:v', 'wmv2', '-c:a', 'wmav2'], 'asf'], ['asf', ['-c:v', 'msmpeg4', '-c:a', 'wmav2'], 'asf'],
  ['mpg', ['-c:v', 'mpeg1video', '-c:a', 'mp2'], 'mpeg'], ['vob', ['-c:v', 'mpeg2video', '-c:a', 'ac3'], 'vob'],
  ['mxf', ['-c:v', 'mpeg2video', '-c:a', 'pcm_s16le'], 'mxf'], ['ogv', ['-c:v', 'libtheora', '-c:a', 'libvorbis'], 'ogv'],
  ['dv', ['-pix_fmt', 'yuv420p', '-c:v', 'dvvideo', '-c:a', 'pcm_s16le', '-ac', '2'], 'dv'],
  ['nut', ['-c:v', 'mpeg4', '-c:a', 'libmp3lame'], 'nut'], ['y4m', ['-an', '-pix_fmt', 'yuv420p'], 'yuv4mpegpipe'],
];

/** The word every text-bearing sample holds. */
export const MARKER = 'Marker';

export const SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="120" height="80" viewBox="0 0 120 80">
<rect x="5" y="5" width="110" height="70" fill="#3a7" stroke="#000" stroke-width="3"/>
<circle cx="60" cy="40" r="20" fill="#fff"/>
<text x="10" y="75" font-family="DejaVu Sans" font-size="12">${MARKER}</text></svg>
`;

export const CUBE_OBJ = `# a unit cube
o Cube
v -1 -1 -1
v 1 -1 -1
v 1 1 -1
v -1 1 -1
v -1 -1 1
v 1 -1 1
v 1 1 1
v -1 1 1
f 1 3 2
f 1 4 3
f 5 6 7
f 5 7 8
f 1 2 6
f 1 6 5
f 2 3 7
f 2 7 6
f 3 4 8
f 3 8 7
f 4 1 5
f 4 5 8
`;

/** The records every data sample holds (as strings: tables keep text). */
export const PEOPLE = [
  { name: 'Ada Lovelace', email: 'ada@example.org', city: 'London' },
  { name: `Grace Hopper, ${MARKER}`, email: 'grace@example.org', city: 'New York' },
];

const TEXT: Readonly<Record<string, string>> = {
  tsv: `name\temail\tcity\n${PEOPLE.map((p) => `${p.name}\t${p.email}\t${p.city}`).join('\n')}\n`,
  json: `${JSON.stringify(PEOPLE, null, 2)}\n`,
  ndjson: `${PEOPLE.map((p) => JSON.stringify(p)).join('\n')}\n`,
  yaml: PEOPLE.map((p) => `- name: "${p.name}"\n  email: ${p.email}\n  city: ${p.city}\n`).join(''),
  toml: PEOPLE.map((p) => `[[people]]\nname = "${p.name}"\nemail = "${p.email}"\ncity = "${p.city}"\n`).join('\n'),
  xml: `<?xml version="1.0" encoding="UTF-8"?>\n<people>\n${PEOPLE.map((p) => `  <person><name>${p.name}</name><email>${p.email}</email><city>${p.city}</city></person>`).join('\n')}\n</people>\n`,
  ini: PEOPLE.map((p, i) => `[person${i + 1}]\nname = ${p.name}\nemail = ${p.email}\ncity = ${p.city}\n`).join('\n'),
  vcf: PEOPLE.map((p) => `BEGIN:VCARD\r\nVERSION:3.0\r\nFN:${p.name.replace(/,/g, '\\,')}\r\nEMAIL;TYPE=INTERNET:${p.email}\r\nADR;TYPE=HOME:;;;${p.city};;;\r\nEND:VCARD\r\n`).join(''),
  ics: 'BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//samples//EN\r\nBEGIN:VEVENT\r\nUID:one@example.org\r\nDTSTAMP:20260101T000000Z\r\n'
    + `DTSTART:20260301T100000Z\r\nDTEND:20260301T110000Z\r\nSUMMARY:${MARKER} launch\r\nLOCATION:Room 1\\, floor 2\r\nEND:VEVENT\r\n`
    + 'BEGIN:VEVENT\r\nUID:two@example.org\r\nDTSTAMP:20260101T000000Z\r\nDTSTART;VALUE=DATE:20260402\r\nSUMMARY:Review\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n',
  srt: `1\n00:00:01,000 --> 00:00:02,500\n${MARKER} one\n\n2\n00:00:03,000 --> 00:00:04,000\nSecond line\n`,
  ssa: '[Script Info]\nScriptType: v4.00\n\n[V4 Styles]\n'
    + 'Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, TertiaryColour, BackColour, Bold, Italic, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, AlphaLevel, Encoding\n'
    + 'Style: Default,Arial,20,16777215,65535,65535,0,0,0,1,2,0,2,10,10,10,0,0\n\n[Events]\n'
    + 'Format: Marked, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n'
    + `Dialogue: Marked=0,0:00:01.00,0:00:02.50,Default,,0000,0000,0000,,${MARKER} one\nDialogue: Marked=0,0:00:03.00,0:00:04.00,Default,,0000,0000,0000,,Second line\n`,
  sub: `{25}{62}${MARKER} one\n{75}{100}Second line\n`,
  sbv: `0:00:01.000,0:00:02.500\n${MARKER} one\n\n0:00:03.000,0:00:04.000\nSecond line\n`,
  smi: `<SAMI>\n<BODY>\n<SYNC Start=1000><P Class=ENCC>${MARKER} one\n<SYNC Start=2500><P Class=ENCC>&nbsp;\n<SYNC Start=3000><P Class=ENCC>Second line\n<SYNC Start=4000><P Class=ENCC>&nbsp;\n</BODY>\n</SAMI>\n`,
  svg: SVG,
  obj: CUBE_OBJ,
  json5: `// people\n[\n${PEOPLE.map((p) => `  {name: '${p.name}', email: "${p.email}", city: '${p.city}',},`).join('\n')}\n]\n`,
  properties: `# people\n${PEOPLE.map((p, i) => `person${i + 1}.name = ${p.name}\nperson${i + 1}.email: ${p.email}\nperson${i + 1}.city ${p.city}`).join('\n')}\n`,
  geojson: `${JSON.stringify({ type: 'FeatureCollection', features: [
    { type: 'Feature', properties: { name: `${MARKER} point` }, geometry: { type: 'Point', coordinates: [-0.1276, 51.5072] } },
    { type: 'Feature', properties: { name: 'Walk' }, geometry: { type: 'LineString', coordinates: [[-0.1276, 51.5072], [-0.1, 51.51]] } },
  ] }, null, 2)}\n`,
  gpx: `<?xml version="1.0" encoding="UTF-8"?>\n<gpx version="1.1" creator="samples" xmlns="http://www.topografix.com/GPX/1/1">\n`
    + `  <wpt lat="51.5072" lon="-0.1276"><name>${MARKER} point</name></wpt>\n`
    + '  <trk><name>Walk</name><trkseg><trkpt lat="51.5072" lon="-0.1276"><ele>11</ele></trkpt><trkpt lat="51.51" lon="-0.1"><ele>14</ele></trkpt></trkseg></trk>\n</gpx>\n',
  kml: `<?xml version="1.0" encoding="UTF-8"?>\n<kml xmlns="http://www.opengis.net/kml/2.2"><Document>\n`
    + `  <Placemark><name>${MARKER} point</name><Point><coordinates>-0.1276,51.5072,0</coordinates></Point></Placemark>\n`
    + '  <Placemark><name>Walk</name><LineString><coordinates>-0.1276,51.5072,0 -0.1,51.51,0</coordinates></LineString></Placemark>\n</Document></kml>\n',
  tcx: '<?xml version="1.0" encoding="UTF-8"?>\n<TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2">\n'
    + `<Activities><Activity Sport="Running"><Id>2026-03-01T10:00:00Z</Id><Notes>${MARKER} run</Notes><Lap StartTime="2026-03-01T10:00:00Z">\n`
    + '<TotalTimeSeconds>60</TotalTimeSeconds><DistanceMeters>200</DistanceMeters><Calories>10</Calories><Intensity>Active</Intensity><TriggerMethod>Manual</TriggerMethod>\n'
    + '<Track><Trackpoint><Time>2026-03-01T10:00:00Z</Time><Position><LatitudeDegrees>51.5072</LatitudeDegrees><LongitudeDegrees>-0.1276</LongitudeDegrees></Position><HeartRateBpm><Value>120</Value></HeartRateBpm></Trackpoint>\n'
    + '<Trackpoint><Time>2026-03-01T10:01:00Z</Time><Position><LatitudeDegrees>51.51</LatitudeDegrees><LongitudeDegrees>-0.1</LongitudeDegrees></Position><HeartRateBpm><Value>130</Value></HeartRateBpm></Trackpoint></Track>\n'
    + '</Lap></Activity></Activities>\n</TrainingCenterDatabase>\n',
};

/**
 * Formats ImageMagick reads but does not write (well), written by Netpbm from a PNG: Utah RLE,
 * MacPaint (576×720, the picture top left), Palm (with its colour table).
 */
export const NETPBM_WRITERS: Readonly<Record<string, string>> = {
  rle: '/usr/bin/pnmtorle',
  mac: '/usr/bin/ppmtopgm | /usr/bin/pgmtopbm -threshold | /usr/bin/pbmtomacp',
  palm: '/usr/bin/pnmquant 256 2>/dev/null | /usr/bin/pnmtopalm -colormap',
};

/** `/bin/sh` arguments that write `png` as an `ext` file at `out` with {@link NETPBM_WRITERS}. */
export function netpbmArgs(ext: string, png: string, out: string): string[] {
  return ['-c', `/usr/bin/pngtopnm "$1" | ${NETPBM_WRITERS[ext] ?? 'false'} > "$2"`, 'sh', png, out];
}

/** Pairs whose source sample must be shaped for the target (a contact table for vCard, events for iCalendar). */
export const PAIR_TEXT: Readonly<Record<string, string>> = {
  'csv>vcf': `name,email,phone\nAda Lovelace,ada@example.org,+44 20 7946 0000\n"Hopper, Grace ${MARKER}",grace@example.org,\n`,
  'json>vcf': `${JSON.stringify([{ 'full name': `Ada ${MARKER}`, 'e-mail': 'ada@example.org' }])}\n`,
  'csv>ics': `title,start,end,location\n${MARKER} launch,2026-03-01T10:00:00Z,2026-03-01T11:00:00Z,"Room 1, floor 2"\nReview,2026-04-02,,\n`,
  'json>ics': `${JSON.stringify([{ summary: `${MARKER} launch`, dtstart: '2026-03-01 10:00', location: 'Room 1' }])}\n`,
  // CSL JSON (what Zotero exports) into BibTeX.
  'json>bib': `${JSON.stringify([{ id: 'lovelace1843', type: 'article-journal', title: `Notes on the analytical engine, ${MARKER}`, author: [{ family: 'Lovelace', given: 'Ada' }], 'container-title': 'Scientific Memoirs', volume: '3', page: '666-731', issued: { 'date-parts': [[1843]] } }], null, 2)}\n`,
};

/** Writes the samples into `dir`; answers extension → path, plus `from>to` → path for {@link PAIR_TEXT}. */
export async function makeExtraSamples(dir: string): Promise<Map<string, string>> {
  await mkdir(dir, { recursive: true });
  const out = new Map<string, string>();
  const at = (name: string): string => join(dir, name);
  const put = async (ext: string, body: string | Buffer): Promise<string> => {
    const p = at(`sample.${ext}`);
    await writeFile(p, body);
    out.set(ext, p);
    return p;
  };
  const made = (ext: string, cmd: string, args: (p: string) => string[]): string => {
    const p = at(`sample.${ext}`);
    tool(cmd, args(p));
    out.set(ext, p);
    return p;
  };
  for (const [ext, body] of Object.entries(TEXT)) await put(ext, body);
  for (const [pair, body] of Object.entries(PAIR_TEXT)) {
    const p = at(`pair-${pair.replace('>', '-to-')}.${pair.split('>')[0] ?? 'txt'}`);
    await writeFile(p, body);
    out.set(pair, p);
  }
  // Binary data (and XML plists) written by Python's own libraries, from the JSON sample.
  const json = out.get('json') as string;
  const pyData = (code: string) => (p: string): string[] => ['-c', `import json,sys\nv=json.load(open(sys.argv[2]))\n${code}`, p, json];
  made('plist', '/usr/bin/python3', pyData("import plistlib\nopen(sys.argv[1],'wb').write(plistlib.dumps({'people': v}))"));
  made('msgpack', '/usr/bin/python3', pyData("import msgpack\nopen(sys.argv[1],'wb').write(msgpack.packb(v))"));
  made('cbor', '/usr/bin/python3', pyData("import cbor2\nopen(sys.argv[1],'wb').write(cbor2.dumps(v))"));
  made('bson', '/usr/bin/python3', pyData("import bson\nopen(sys.argv[1],'wb').write(bson.encode({'people': v}))"));

  const srt = out.get('srt') as string;
  const ffmpeg = (fmt: string) => (p: string): string[] => ['-v', 'error', '-y', '-i', srt, '-f', fmt, p];
  made('vtt', '/usr/bin/ffmpeg', ffmpeg('webvtt'));
  made('ass', '/usr/bin/ffmpeg', ffmpeg('ass'));
  made('lrc', '/usr/bin/ffmpeg', ffmpeg('lrc'));

  // Vector: SVG by hand, gzipped; EPS/PS by librsvg (independent of Inkscape and Ghostscript); EMF/WMF by Inkscape.
  const svg = out.get('svg') as string;
  await put('svgz', gzipSync(Buffer.from(SVG)));
  made('eps', '/usr/bin/rsvg-convert', (p) => ['-f', 'eps', '-o', p, svg]);
  made('ps', '/usr/bin/rsvg-convert', (p) => ['-f', 'ps', '-o', p, svg]);
  for (const ext of ['emf', 'wmf']) made(ext, '/usr/bin/inkscape', (p) => [svg, `--export-type=${ext}`, `--export-filename=${p}`]);

  // Raster: from the PNG fixture.
  const png = fixture('sample.png');
  made('heic', '/usr/bin/heif-enc', (p) => ['-q', '80', '-o', p, png]);
  made('jxl', '/usr/bin/cjxl', (p) => [png, p]);
  // QOI by FFmpeg's own encoder (independent of qoijs).
  made('qoi', '/usr/bin/ffmpeg', (p) => ['-v', 'error', '-y', '-i', png, '-c:v', 'qoi', '-f', 'image2', '-update', '1', p]);
  made('pgm', '/usr/bin/convert', (p) => [png, `pgm:${p}`]);
  made('pbm', '/usr/bin/convert', (p) => [png, '-threshold', '50%', `pbm:${p}`]);
  await put('dng', makeDng());
  for (const ext of Object.keys(NETPBM_WRITERS)) made(ext, '/bin/sh', (p) => netpbmArgs(ext, png, p));

  // Audio: a tenth of a second of tone, from SoX or FFmpeg.
  for (const [ext, type] of [['aiff', 'aiff'], ['au', 'au'], ['voc', 'voc'], ['8svx', '8svx'], ['avr', 'avr'], ['sph', 'sph']] as const) {
    made(ext, '/usr/bin/sox', (p) => ['-n', '-t', type, p, 'synth', '0.3', 'sine', '440', 'vol', '0.5']);
  }
  made('amr', '/usr/bin/sox', (p) => ['-n', '-r', '8000', '-c', '1', '-t', 'amr-nb', p, 'synth', '0.3', 'sine', '440', 'vol', '0.5']);
  for (const [ext, codec] of [['caf', 'pcm_s16le'], ['w64', 'pcm_s16le'], ['wv', 'wavpack']] as const) {
    made(ext, '/usr/bin/ffmpeg', (p) => ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=duration=0.3:sample_rate=8000', '-c:a', codec, '-f', ext, p]);
  }

  // FFmpeg's other audio streams and containers, from the same tone at 48 kHz.
  const tone = ['-f', 'lavfi', '-i', 'sine=duration=0.3:sample_rate=48000'];
  for (const [ext, codec, muxer] of AV_AUDIO) made(ext, '/usr/bin/ffmpeg', (p) => ['-v', 'error', '-y', ...tone, '-c:a', codec, '-f', muxer, p]);
  // Video: 0.4 s of FFmpeg's test card (DV only at its PAL size) with a tone.
  for (const [ext, codecs, muxer] of AV_VIDEO) {
    const size = ext === 'dv' ? '720x576' : '64x48';
    const card = ['-f', 'lavfi', '-i', `testsrc=duration=0.4:size=${size}:rate=25`, '-f', 'lavfi', '-i', 'sine=duration=0.4:sample_rate=48000'];
    made(ext, '/usr/bin/ffmpeg', (p) => ['-v', 'error', '-y', ...card, ...codecs, '-shortest', '-f', muxer, p]);
  }

  // Archives: a folder with a marker file, packed by Python, 7-Zip and bsdtar; at its top a
  // small site (index.html and its stylesheet), which is what makes a zip a page for the browser.
  const tree = at('tree');
  await mkdir(join(tree, 'docs'), { recursive: true });
  await writeFile(join(tree, 'docs', 'note.txt'), `${MARKER} inside\n`);
  await writeFile(join(tree, 'readme.txt'), 'top level\n');
  await writeFile(join(tree, 'index.html'), `<!doctype html><html><head><title>Site</title><link rel="stylesheet" href="docs/site.css"></head><body><h1>${MARKER}</h1><p>A page zipped with its stylesheet.</p></body></html>\n`);
  await writeFile(join(tree, 'docs', 'site.css'), 'h1 { color: #1f6feb; font-family: sans-serif; }\n');
  const py = (code: string, p: string): string[] => ['-c', code, p, tree];
  const walk = 'import os,sys\nfiles=[(os.path.join(r,f),os.path.relpath(os.path.join(r,f),sys.argv[2])) for r,_,fs in os.walk(sys.argv[2]) for f in fs]\n';
  made('zip', '/usr/bin/python3', (p) => py(`${walk}import zipfile\nwith zipfile.ZipFile(sys.argv[1],'w',zipfile.ZIP_DEFLATED) as z:\n  [z.write(a,n) for a,n in files]`, p));
  for (const [ext, mode] of [['tar', 'w'], ['tgz', 'w:gz'], ['tbz2', 'w:bz2'], ['txz', 'w:xz']] as const) {
    made(ext, '/usr/bin/python3', (p) => py(`${walk}import tarfile\nwith tarfile.open(sys.argv[1],'${mode}') as t:\n  [t.add(a,n) for a,n in files]`, p));
  }
  made('7z', '/usr/bin/7z', (p) => ['a', '-bd', '-y', p, join(tree, 'docs'), join(tree, 'readme.txt')]);
  made('cpio', '/usr/bin/bsdtar', (p) => ['-c', '--format', 'newc', '-f', p, '-C', tree, 'docs', 'readme.txt']);
  made('iso', '/usr/bin/bsdtar', (p) => ['-c', '--format', 'iso9660', '-f', p, '-C', tree, 'docs', 'readme.txt']);

  // 3D: the cube by hand; the other formats by assimp itself (nothing else here writes them).
  const obj = out.get('obj') as string;
  for (const [ext, id] of [['stl', 'stl'], ['ply', 'ply'], ['glb', 'glb2'], ['dae', 'collada'], ['3ds', '3ds'], ['x', 'x'], ['3mf', '3mf']] as const) {
    made(ext, '/usr/bin/assimp', (p) => ['export', obj, p, `-f${id}`]);
  }

  // Fonts: DejaVu Sans cut to A–Z by FontForge, then written in each format by FontForge.
  const ttf = made('ttf', '/usr/bin/fontforge', (p) => ['-quiet', '-lang=ff', '-c', 'Open($1); Select(0u41,0u5a); SelectInvert(); Clear(); Generate($2)', '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf', p]);
  for (const ext of ['otf', 'woff', 'woff2', 'pfb']) made(ext, '/usr/bin/fontforge', (p) => ['-quiet', '-lang=ff', '-c', 'Open($1); Generate($2)', ttf, p]);
  made('sfd', '/usr/bin/fontforge', (p) => ['-quiet', '-lang=ff', '-c', 'Open($1); Save($2)', ttf, p]);

  // A PDF that holds a picture, for pdf → zip (its images; issue 25): ImageMagick's JPEG of the
  // sample, which img2pdf embeds as it is (and pdfimages -all gives back as a .jpg).
  const jpeg = at('pair-pdf-to-zip.jpg');
  tool('/usr/bin/convert', [fixture('sample.png'), '-background', 'white', '-flatten', jpeg]);
  const pdfWithImage = at('pair-pdf-to-zip.pdf');
  tool('/usr/bin/img2pdf', ['-o', pdfWithImage, jpeg]);
  out.set('pdf>zip', pdfWithImage);
  return out;
}
