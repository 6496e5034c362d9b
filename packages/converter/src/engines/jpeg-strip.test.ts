import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { packageFile } from './engine.js';
import { withoutMetadata } from './jpeg-strip.js';
import { scratchDir, tool, toolBytes } from '../testing/tools.js';

// Issue 31: a JPEG loses its EXIF, XMP, IPTC and comments, keeps its colour profile, and its
// compressed picture is copied byte for byte. Judged by exiftool (what metadata is left, and
// whether it is valid) and libjpeg-turbo's djpeg (the decoded pixels), never by the walk itself.
const EXIFTOOL = '/usr/bin/exiftool';
const IPHONE_HEIC = packageFile('test/photos/metadata-extractor-iphone-xr-portrait.heic');
const CAT = packageFile('test/corpus/jpg/image-rs-progressive-cat.jpg');

let work: string;
/** name → a JPEG full of metadata. */
const sources = new Map<string, string>();

before(async () => {
  work = await scratchDir('jpeg-strip-');
  // heif-convert's JPEG of a real iPhone photo: its EXIF (GPS, orientation 6), XMP and ICC profile.
  const phone = join(work, 'phone.jpg');
  tool('/usr/bin/heif-convert', ['--quiet', '-q', '85', IPHONE_HEIC, phone]);
  sources.set('iPhone photo through heif-convert', phone);
  // A progressive JPEG given every kind of metadata by exiftool, and a gain map's worth of bytes after its end.
  const tagged = join(work, 'tagged.jpg');
  await writeFile(tagged, await readFile(CAT));
  tool(EXIFTOOL, ['-q', '-overwrite_original', '-GPSLatitude=48.85', '-GPSLatitudeRef=N', '-Artist=Jane Doe', '-XMP-dc:Creator=Jane Doe', '-IPTC:By-line=Jane Doe', '-Comment=Jane Doe', tagged]);
  tool(EXIFTOOL, ['-q', '-overwrite_original', '-tagsfromfile', phone, '-ICC_Profile', tagged]);
  await writeFile(tagged, Buffer.concat([await readFile(tagged), await readFile(phone)]));
  sources.set('progressive JPEG with EXIF, XMP, IPTC, a comment and trailing data', tagged);
  // A baseline JPEG with restart markers every row of blocks, tagged with EXIF.
  const ppm = decoded(CAT, 'cat.ppm');
  const restarts = join(work, 'restarts.jpg');
  tool('/usr/bin/cjpeg', ['-restart', '1', '-outfile', restarts, ppm]);
  tool(EXIFTOOL, ['-q', '-overwrite_original', '-GPSLatitude=48.85', '-GPSLatitudeRef=N', restarts]);
  sources.set('baseline JPEG with restart markers', restarts);
});
after(async () => {
  await rm(work, { recursive: true, force: true });
});

/** The pixels as djpeg decodes them, written to `name` in the work folder. */
function decoded(jpeg: string, name: string): string {
  const out = join(work, name);
  tool('/usr/bin/djpeg', ['-ppm', '-outfile', out, jpeg]);
  return out;
}

/** The metadata groups exiftool finds, and its warnings. */
function metadata(path: string): { groups: Set<string>; tags: Record<string, unknown> } {
  const tags = (JSON.parse(tool(EXIFTOOL, ['-j', '-G1', '-a', '-validate', '-warning', '-error', '-EXIF:all', '-XMP:all', '-IPTC:all', '-GPS:all', '-File:Comment', '-ICC_Profile:all', '-MPF:all', path])) as Record<string, unknown>[])[0] ?? {};
  return { groups: new Set(Object.keys(tags).map((k) => k.split(':')[0] as string)), tags };
}

test('a JPEG loses its EXIF, XMP, IPTC and comments, keeps its ICC profile, and decodes to the same pixels', async () => {
  const phone = sources.get('iPhone photo through heif-convert') as string;
  for (const [name, path] of sources) {
    const before = metadata(path);
    assert.ok(before.groups.has('GPS') || before.groups.has('IFD0'), `${name}: the source has EXIF`);
    const copy = withoutMetadata(await readFile(path));
    assert.ok(copy, `${name}: walked`);
    const out = join(work, 'out.jpg');
    await writeFile(out, copy);
    const after = metadata(out);
    for (const group of ['IFD0', 'ExifIFD', 'GPS', 'XMP-dc', 'XMP-x', 'IPTC', 'MPF0']) assert.ok(!after.groups.has(group), `${name}: no ${group} left (${[...after.groups].join(', ')})`);
    assert.equal(after.tags['File:Comment'], undefined, `${name}: no comment left`);
    assert.equal(after.tags['ExifTool:Warning'], undefined, `${name}: exiftool finds nothing wrong`);
    assert.equal(after.tags['ExifTool:Error'], undefined, `${name}: exiftool reads it`);
    // The colour profile is the source's, byte for byte.
    const icc = (p: string): string => toolBytes(EXIFTOOL, ['-b', '-ICC_Profile', p]).toString('base64');
    if (before.groups.has('ICC-header')) assert.equal(icc(out), icc(path), `${name}: the ICC profile is kept`);
    // The picture is copied, never re-encoded: djpeg decodes the same pixels.
    // Nothing after the end of image: a gain map or a second picture carries its own EXIF.
    assert.ok(!copy.includes((await readFile(phone)).subarray(0, 4096)) || path === phone, `${name}: the trailing picture is gone`);
    assert.ok((await readFile(decoded(out, 'out.ppm'))).equals(await readFile(decoded(path, 'source.ppm'))), `${name}: the same pixels`);
  }
});

test('bytes that do not walk as a JPEG are left to jpegtran', async () => {
  const phone = await readFile(sources.get('iPhone photo through heif-convert') as string);
  assert.equal(withoutMetadata(Buffer.from('not a jpeg at all')), null, 'no start of image');
  assert.equal(withoutMetadata(phone.subarray(0, Math.floor(phone.length / 2))), null, 'cut in its scan: no end of image');
  assert.equal(withoutMetadata(phone.subarray(0, 30)), null, 'cut in a segment');
  const lying = Buffer.from(phone);
  lying.writeUInt16BE(0xfff0, 4); // the first segment claims to run past the end
  assert.equal(withoutMetadata(lying.subarray(0, 4096)), null, 'a segment longer than the file');
});
