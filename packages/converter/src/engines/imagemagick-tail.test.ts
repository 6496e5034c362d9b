// The older raster tail through the real Converter (issue 12): a tiny PNG, dark red on the
// left and white on the right, goes to each new writable format and back to PNG; the sides
// and both colours must survive (as grey or black for the grey and bilevel formats). The
// read-only ones (Utah RLE, MacPaint, Palm; written by Netpbm) must come out as PNG.
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Converter } from '../converter.js';
import { netpbmArgs } from '../testing/extra-samples.js';
import { fixture, identify, scratchDir, tool, toolBytes } from '../testing/tools.js';

let dir: string;
let conv: Converter;
let png: string;

const WIDTH = 24;
const HEIGHT = 16;
const RED = [160, 20, 30] as const;

before(async () => {
  dir = await scratchDir('conv-im-tail-');
  // Every candidate pair, proven or not: this test is part of the proof, not a user of it.
  conv = await Converter.create({ workDir: join(dir, 'work'), timeoutMs: 60_000, maxInputPixels: 4_000_000, candidatePairs: true });
  png = join(dir, 'halves.png');
  tool('/usr/bin/convert', ['-size', `${WIDTH}x${HEIGHT}`, 'xc:white', '-fill', `rgb(${RED.join(',')})`, '-draw', `rectangle 0,0 ${WIDTH / 2 - 1},${HEIGHT - 1}`, png]);
});
after(async () => {
  await conv.close();
  await rm(dir, { recursive: true, force: true });
});

let n = 0;
async function convert(from: string, to: string, input: string): Promise<string> {
  const out = join(dir, 'out', `${n++}-${from}.${to}`);
  const r = await conv.convert({ inputPath: input, sourceFormat: from, targetFormat: to, outputPath: out });
  if (!r.ok) assert.fail(`${from} → ${to}: ${JSON.stringify(r.error)}`);
  assert.deepEqual(r.engines, ['imagemagick'], `${from} → ${to}`);
  return out;
}

/** The 8-bit RGB of one pixel of a PNG, read by ImageMagick's `convert` (system policy). */
function pixel(path: string, x: number, y: number): number[] {
  return [...toolBytes('/usr/bin/convert', [path, '-crop', `1x1+${x}+${y}`, '-colorspace', 'sRGB', '-depth', '8', 'rgb:-']).subarray(0, 3)];
}

const near = (got: number[], want: readonly number[], tolerance: number, what: string): void => {
  assert.ok(got.every((v, i) => Math.abs(v - (want[i] ?? 0)) <= tolerance), `${what}: ${got.join(',')} is not ${want.join(',')} ± ${tolerance}`);
};

/** How each format keeps colour: full colour (with a tolerance), grey, or black and white. */
const KINDS: Readonly<Record<string, 'colour' | 'grey' | 'bilevel'>> = {
  pict: 'colour', mtv: 'colour', sixel: 'colour', hrz: 'colour', cin: 'colour', dcx: 'colour', avs: 'colour', v: 'colour',
  pgx: 'grey', otb: 'bilevel', cals: 'bilevel', g3: 'bilevel', jbig: 'bilevel', rgf: 'bilevel',
};

test('png → each writable format of the older tail → png keeps the sides and the colours', { timeout: 300_000 }, async () => {
  for (const [ext, kind] of Object.entries(KINDS)) {
    const back = await convert(ext, 'png', await convert('png', ext, png));
    const { format, width, height } = identify(back);
    assert.equal(format, 'PNG', ext);
    // HRZ is always 256×240 (slow-scan TV); a fax line is as wide as the page ImageMagick reads it on.
    if (ext === 'hrz') assert.deepEqual([width, height], [256, 240], ext);
    else if (ext === 'g3') assert.ok(height === HEIGHT && width >= WIDTH, `g3: ${width}x${height}`);
    else assert.deepEqual([width, height], [WIDTH, HEIGHT], ext);
    const sx = width === 256 && ext === 'hrz' ? 256 / WIDTH : 1;
    const sy = ext === 'hrz' ? 240 / HEIGHT : 1;
    const left = pixel(back, Math.floor(3 * sx), Math.floor((HEIGHT / 2) * sy));
    const right = pixel(back, Math.floor((WIDTH - 3) * sx), Math.floor((HEIGHT / 2) * sy));
    near(right, [255, 255, 255], 8, `${ext} white half`);
    if (kind === 'colour') near(left, RED, 8, `${ext} red half`);
    else if (kind === 'bilevel') near(left, [0, 0, 0], 0, `${ext} red half as black`);
    else assert.ok(left[0] === left[1] && left[1] === left[2] && (left[0] ?? 255) < 100, `${ext} red half as dark grey: ${left.join(',')}`);
  }
});

test('Utah RLE, MacPaint and Palm (written by Netpbm) are read', { timeout: 120_000 }, async () => {
  for (const [ext, sides] of [['rle', [64, 48]], ['palm', [64, 48]], ['mac', [576, 720]]] as const) {
    const sample = join(dir, `netpbm.${ext}`);
    tool('/bin/sh', netpbmArgs(ext, fixture('sample.png'), sample));
    const out = await convert(ext, 'png', sample);
    const { format, width, height } = identify(out);
    assert.equal(format, 'PNG', ext);
    assert.deepEqual([width, height], sides, ext);
  }
});
