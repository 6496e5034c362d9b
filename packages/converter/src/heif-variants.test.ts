import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Converter, type ConvertResult } from './converter.js';
import { packageFile } from './engines/engine.js';
import { runTool, ssim, tool } from './testing/tools.js';

// Issue 31: HEIF files as phones write them beyond a single picture — a burst (three top-level
// images, the primary second), an Apple spatial photo (two eyes, the primary first), a picture
// with an alpha plane — come out as the primary picture to every photo target. heif-convert
// wrote such files as name-1.png, name-2.png, … and the conversion "produced no output".
// Checked against libheif's own decode of the primary image (heif-info names it; heif-convert
// writes it), by ffmpeg's SSIM, and by ImageMagick's reading of sizes and channels. A picture
// with alpha keeps it in png and webp and is laid over white in jpg and pdf (heif-convert's
// own JPEG showed what lay under the transparent pixels). The photos are the files as the
// cameras and phones wrote them (up to 12 MP); libheif's reference decode (a 16-bit PNG of the
// camera's 12 MP took half a minute on a loaded machine) runs while the converter makes the
// targets, two at a time (issue 44).
const PHOTOS = packageFile('test/photos');
// The spatial photo's two 2560×2560 eyes are decoded at every conversion (34 s for four
// targets on a loaded machine): it goes to jpg (heif-convert's JPEG) and png (the PNG that
// every other target is written from); the small files go to all four.
const ALL = ['jpg', 'png', 'webp', 'pdf'] as const;
const FILES = [
  { name: 'burst', file: 'pillow-heif-burst-zpug-3.heic', images: 3, primary: 2, size: '64×64', targets: ALL },
  { name: 'spatial photo', file: 'pillow-heif-spatial-photo.heic', images: 2, primary: 1, size: '2560×2560', targets: ['jpg', 'png'] },
  { name: 'alpha', file: 'pillow-heif-rgba-8.heif', images: 1, primary: 1, size: '128×128', targets: ALL },
  // A camera's 10-bit HEIF (.hif): its PDF page took a minute through a 16-bit PNG; it now
  // embeds heif-convert's JPEG (the picture checked as stored, and stored as a JPEG).
  { name: 'camera 10-bit', file: 'pillow-heif-sony-a7s3-10bit.hif', images: 1, primary: 1, size: '4240×2832', targets: ['jpg', 'pdf'] },
  // An iPhone 13 Pro portrait-mode photo with its depth map (an auxiliary image, 768×576),
  // and a Galaxy S25 Ultra HDR photo (brand `tmap`: an SDR primary, a gain map and a tone-mapped
  // derived image): the primary picture, never the depth map or the gain map.
  { name: 'iPhone portrait mode with depth', file: 'pillow-heif-iphone-depth.heic', images: 1, primary: 1, size: '4032×3024', targets: ['jpg', 'pdf'] },
  { name: 'Galaxy HDR with gain map', file: 'pillow-heif-galaxy-gain-map.heic', images: 1, primary: 1, size: '4000×1848', targets: ['jpg', 'png'] },
] as const;

let converter: Converter;
let work: string;
before(async () => {
  work = await mkdtemp(join(tmpdir(), 'heif-variants-'));
  converter = await Converter.create({ workDir: join(work, 'jobs') });
});
after(async () => {
  await converter.close();
  await rm(work, { recursive: true, force: true });
});

/** A tool's stdout, without blocking (the conversions go on meanwhile); throws on a non-zero exit. */
async function run(cmd: string, args: string[]): Promise<string> {
  const r = await runTool(cmd, args);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout.toString('utf8');
}

/** libheif's reference decode of the file's primary image, as a PNG. */
async function reference(f: (typeof FILES)[number]): Promise<string> {
  const info = await run('/usr/bin/heif-info', [join(PHOTOS, f.file)]);
  const listed = [...info.matchAll(/^image: \d+x\d+ \(id=\d+\)(, primary)?$/gm)];
  assert.equal(listed.length, f.images, `${f.name}: top-level images`);
  assert.equal(listed.findIndex((m) => m[1]) + 1, f.primary, `${f.name}: the primary image`);
  const dir = join(work, `ref-${f.images}-${f.primary}-${f.size}`);
  await mkdir(dir, { recursive: true });
  await run('/usr/bin/heif-convert', [join(PHOTOS, f.file), join(dir, 'ref.png')]);
  return join(dir, f.images === 1 ? 'ref.png' : `ref-${f.primary}.png`);
}

for (const f of FILES) {
  test(`HEIF ${f.name} → ${f.targets.join(', ')}: the primary picture, as libheif decodes it`, { timeout: 180_000 }, async () => {
    // The reference decode and the conversions at once; each target's own copy of the file.
    const refMade = reference(f);
    const next = [...f.targets];
    const made = new Map<string, Promise<ConvertResult>>();
    const convertNext = async (): Promise<void> => {
      for (let target = next.shift(); target; target = next.shift()) {
        const src = join(work, `${f.file}-for.${target}`);
        await copyFile(join(PHOTOS, f.file), src);
        const result = converter.convert({ inputPath: src, sourceFormat: 'heic', targetFormat: target, outputPath: join(work, `${f.file}.${target}`) });
        made.set(target, result);
        await result;
      }
    };
    const [ref] = await Promise.all([refMade, convertNext(), convertNext()]);
    // Targets without alpha (jpg, pdf) show the picture laid over white, as ImageMagick lays it.
    const white = f.name === 'alpha' ? `${ref}-on-white.png` : ref;
    if (white !== ref) tool('/usr/bin/convert', [ref, '-background', 'white', '-flatten', white]);
    const problems: string[] = [];
    for (const target of f.targets) {
      const out = join(work, `${f.file}.${target}`);
      const r = await (made.get(target) as Promise<ConvertResult>);
      if (!r.ok) {
        problems.push(`${target}: ${r.error.message}`);
        continue;
      }
      // A PDF's picture is compared as stored (poppler's pdfimages), not as a page rendering.
      let picture = out;
      if (target === 'pdf') {
        // A picture without alpha is embedded as a JPEG (DCT); one with alpha as a lossless image laid over white.
        const encoding = tool('/usr/bin/pdfimages', ['-list', out]).trim().split('\n')[2]?.trim().split(/\s+/)[8];
        if (encoding !== (f.name === 'alpha' ? 'image' : 'jpeg')) problems.push(`pdf: the picture is stored as ${encoding}`);
        // Taken out as stored (-all: a JPEG as is, anything else as PNG).
        tool('/usr/bin/pdfimages', ['-all', out, `${out}-image`]);
        picture = `${out}-image-000.${encoding === 'jpeg' ? 'jpg' : 'png'}`;
      }
      const [size, channels] = tool('/usr/bin/identify', ['-format', '%w×%h %[channels]', picture]).split(' ');
      if (size !== f.size) problems.push(`${target}: ${size}, not ${f.size}`);
      // The alpha plane is kept where the target holds one.
      if (f.name === 'alpha' && (target === 'png' || target === 'webp') && !/a$/.test(channels ?? '')) problems.push(`${target}: no alpha (${channels})`);
      // The phones' GPS positions stay behind (the default, photo_metadata: strip).
      if (tool('/usr/bin/exiftool', ['-s3', '-GPSLatitude', picture]).trim()) problems.push(`${target}: a GPS position was carried over`);
      const s = ssim(picture, target === 'jpg' || target === 'pdf' ? white : ref);
      if (s < 0.95) problems.push(`${target}: SSIM ${s} against libheif's primary image`);
    }
    assert.deepEqual(problems, []);
  });
}
