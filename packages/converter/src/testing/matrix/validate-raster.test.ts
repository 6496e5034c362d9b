// The older raster tail's referees can fail (issue 12): a good file of each kind passes, and
// a cut file, one whose header disagrees with its picture, or another format under the name
// is rejected.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fixture, tool } from '../tools.js';
import { validate } from './validate.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'conv-referee-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The fixture written by ImageMagick (system policy) as `ext` with coder `coder`. */
async function written(ext: string, coder = ext): Promise<string> {
  const path = join(dir, `good.${ext}`);
  tool('/usr/bin/convert', [fixture('sample.png'), '-background', 'white', '-flatten', `${coder}:${path}`]);
  return path;
}

async function variant(ext: string, bytes: Buffer, name: string): Promise<string> {
  const path = join(dir, `${name}.${ext}`);
  await writeFile(path, bytes);
  return path;
}

test('good files of the older tail pass, with both referees named', async () => {
  for (const [ext, coder] of [['mtv', 'mtv'], ['pict', 'pict'], ['v', 'vips'], ['sixel', 'sixel'], ['pgx', 'pgx'], ['cin', 'cin'], ['dcx', 'dcx'], ['cals', 'cals'], ['jbig', 'jbig'], ['g3', 'g3'], ['hrz', 'hrz'], ['otb', 'otb'], ['rgf', 'rgf'], ['avs', 'avs']] as const) {
    const v = await validate(await written(ext, coder), ext, 'image');
    assert.ok(v.ok, `${ext}: ${v.ok ? '' : v.reason}`);
    assert.match(v.check, /identify: .+; .+: \d+x\d+/, ext);
  }
});

test('cut files, headers that disagree with the picture, and other formats under the name are rejected', async () => {
  const png = await readFile(fixture('sample.png'));
  for (const ext of ['mtv', 'v', 'sixel', 'pgx', 'cin', 'dcx', 'cals', 'jbig', 'hrz', 'avs', 'pict']) {
    const v = await validate(await variant(ext, png, 'png-inside'), ext, 'image');
    assert.equal(v.ok, false, `a PNG named .${ext} passed`);
  }
  const cut = async (ext: string, coder = ext): Promise<Buffer> => {
    const b = await readFile(await written(ext, coder));
    return b.subarray(0, Math.floor(b.length / 2));
  };
  for (const [ext, coder] of [['mtv', 'mtv'], ['v', 'vips'], ['hrz', 'hrz'], ['avs', 'avs'], ['rgf', 'rgf']] as const) {
    const v = await validate(await variant(ext, await cut(ext, coder), 'cut'), ext, 'image');
    assert.equal(v.ok, false, `half a .${ext} passed`);
  }
  // A PICT whose frame says 65 pixels wide while the picture is 64: the parsed header disagrees.
  const pict = Buffer.from(await readFile(await written('pict')));
  pict.writeInt16BE(pict.readInt16BE(520) + 1, 520);
  const v = await validate(await variant('pict', pict, 'wide-frame'), 'pict', 'image');
  assert.equal(v.ok, false, 'a PICT with a wrong frame passed');
});
