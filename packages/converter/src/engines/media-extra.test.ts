// Issue 12's Debian engines through the real Converter, each output checked by a tool that
// did not write it: rsvg renders Inkscape's SVG, pdfinfo/pdftotext read PDFs, Ghostscript's
// bbox device reads EPS/PS, ImageMagick and heif-info/jxlinfo read rasters, ffprobe reads
// audio, Python's zipfile/tarfile and 7-Zip list archives, fc-scan (FreeType) reads fonts,
// and 3D outputs are parsed here. Plus the archive guards: traversal, links, count, expansion.
import assert from 'node:assert/strict';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Converter } from '../converter.js';
import { missingContent } from '../guards/output-content.js';
import { FfmpegEngine } from './ffmpeg.engine.js';
import { packageFile } from './engine.js';
import { MARKER, makeExtraSamples } from '../testing/extra-samples.js';
import { meshVertices } from '../testing/matrix/validate-extra.js';
import { ffprobe, fixture, identify, scratchDir, tool } from '../testing/tools.js';

let dir: string;
let conv: Converter;
let samples: Map<string, string>;

before(async () => {
  dir = await scratchDir('conv-media-');
  conv = await Converter.create({ workDir: join(dir, 'work'), timeoutMs: 60_000, inputLimits: { maxArchiveEntries: 500, maxArchiveBytes: 20 * 1024 ** 2 } });
  samples = await makeExtraSamples(join(dir, 'samples'));
});
after(async () => {
  await conv.close();
  await rm(dir, { recursive: true, force: true });
});

let n = 0;
async function convert(from: string, to: string, input = samples.get(from) as string): Promise<{ path: string; engines: readonly string[] }> {
  const out = join(dir, 'out', `${n++}-${from}.${to}`);
  const r = await conv.convert({ inputPath: input, sourceFormat: from, targetFormat: to, outputPath: out });
  if (!r.ok) assert.fail(`${from} → ${to}: ${JSON.stringify(r.error)}`);
  return { path: out, engines: r.engines };
}

test('vector: SVG, EMF, WMF, EPS, PS and a PDF page to each other and to PNG', { timeout: 300_000 }, async () => {
  const svg = await convert('emf', 'svg');
  assert.deepEqual(svg.engines, ['inkscape']);
  tool('/usr/bin/rsvg-convert', ['-f', 'png', '-o', join(dir, 'check.png'), svg.path]);
  assert.equal(identify(join(dir, 'check.png')).format, 'PNG');
  const pdf = await convert('svg', 'pdf');
  // The browser draws an SVG as it shows it (issue 22); librsvg and Inkscape stand behind it.
  assert.deepEqual(pdf.engines, ['chromium']);
  assert.match(tool('/usr/bin/pdftotext', [pdf.path, '-']), new RegExp(MARKER));
  for (const from of ['svg', 'svgz', 'emf', 'wmf', 'eps', 'ps']) {
    const png = await convert(from, 'png');
    const { format, width } = identify(png.path);
    assert.equal(format, 'PNG', from);
    assert.ok(width >= 100, `${from} → png is ${width} px wide`);
  }
  for (const [from, to] of [['svg', 'eps'], ['emf', 'ps'], ['pdf', 'eps'], ['eps', 'ps'], ['ps', 'eps']] as const) {
    const r = await convert(from, to, from === 'pdf' ? pdf.path : undefined);
    // Ghostscript's bbox device reads the PostScript and reports the drawn area (on stderr).
    const { spawnSync } = await import('node:child_process');
    const bbox = spawnSync('/usr/bin/gs', ['-dSAFER', '-dBATCH', '-dNOPAUSE', '-q', '-sDEVICE=bbox', r.path], { encoding: 'utf8', timeout: 60_000 });
    assert.match(bbox.stderr, /%%BoundingBox: \d+ \d+ [1-9]\d* [1-9]\d*/, `${from} → ${to}`);
  }
  const emf = await convert('svg', 'emf');
  assert.deepEqual([...(await readFile(emf.path)).subarray(40, 44)], [0x20, 0x45, 0x4d, 0x46]);
  const eps2svg = await convert('eps', 'svg');
  assert.deepEqual(eps2svg.engines, ['ghostscript', 'inkscape']);
  // A bitmap traced by potrace: an SVG of paths that rsvg renders.
  const trace = await convert('pbm', 'svg');
  assert.deepEqual(trace.engines, ['potrace']);
  assert.match(await readFile(trace.path, 'utf8'), /<path/);
  tool('/usr/bin/rsvg-convert', ['-f', 'png', '-o', join(dir, 'trace.png'), trace.path]);
  const fromPng = await convert('png', 'svg', fixture('sample.png'));
  assert.deepEqual(fromPng.engines, ['imagemagick', 'potrace']);
});

test('HEIC, JPEG XL and camera raw (DNG) to the common rasters and back', { timeout: 180_000 }, async () => {
  for (const [from, to, engines] of [['heic', 'png', ['libheif']], ['heic', 'webp', ['libheif', 'sharp']], ['jxl', 'jpg', ['libjxl']], ['jxl', 'tiff', ['libjxl', 'sharp']], ['dng', 'tiff', ['libraw']], ['dng', 'jpg', ['libraw', 'sharp']], ['jxl', 'png', ['libjxl']]] as const) {
    const r = await convert(from, to);
    assert.deepEqual(r.engines, engines, `${from} → ${to}`);
    const id = identify(r.path);
    assert.equal(id.format, { png: 'PNG', webp: 'WEBP', jpg: 'JPEG', tiff: 'TIFF', ppm: 'PPM' }[to], `${from} → ${to}`);
    if (from === 'dng') assert.deepEqual([id.width, id.height], [64, 48]);
  }
  const heic = await convert('png', 'heic', (await convert('dng', 'png')).path);
  assert.match(tool('/usr/bin/heif-info', [heic.path]), /64x48/);
  // A 1-bit picture (the BMP Suite's, in the corpus) makes a 1-bit PNG, which heif-enc
  // aborted on (issue 12): it is re-encoded at 8 bits first.
  const bilevel = await convert('bmp', 'png', packageFile('test/corpus/bmp/image-rs-Core_1_Bit.bmp'));
  assert.ok((await readFile(bilevel.path))[24] as number < 8, 'ImageMagick wrote a PNG of fewer than 8 bits');
  assert.match(tool('/usr/bin/heif-info', [(await convert('png', 'heic', bilevel.path)).path]), /\d+x\d+/);
  const jxl = await convert('png', 'jxl', fixture('sample.png'));
  assert.match(tool('/usr/bin/jxlinfo', [jxl.path]), /JPEG XL image/);
});

test('audio: FFmpeg\'s added formats and SoX\'s, read back by ffprobe', { timeout: 180_000 }, async () => {
  const expect: Readonly<Record<string, string>> = { aiff: 'aiff', au: 'au', caf: 'caf', w64: 'w64', wv: 'wv', voc: 'voc', '8svx': 'iff', avr: 'avr', sph: 'nistsphere', amr: 'amr' };
  const wav = fixture('sample.wav');
  const seconds = ffprobe(wav).duration;
  for (const to of Object.keys(expect)) {
    const r = await convert('wav', to, wav);
    const p = ffprobe(r.path);
    assert.equal(p.format, expect[to], `wav → ${to}`);
    assert.ok(Math.abs(p.duration - seconds) < 0.1, `wav → ${to} lasts ${p.duration}, not ${seconds}`);
  }
  const mp3 = join(dir, 'tone.mp3');
  tool('/usr/bin/ffmpeg', ['-v', 'error', '-y', '-i', wav, mp3]);
  const chained = await convert('mp3', 'amr', mp3);
  assert.deepEqual(chained.engines, ['ffmpeg', 'sox']);
  for (const from of ['8svx', 'avr', 'sph', 'amr', 'caf', 'wv']) assert.equal(ffprobe((await convert(from, 'flac')).path).format, 'flac', from);
});

// Issue 31: FFmpeg exits 0 on a FLAC whose frames it cannot decode and writes a 78-byte WAV
// header (or an unreadable MP3): "completed" with none of the sound. Here a FLAC of the
// sample tone keeps its STREAMINFO (3 s, as the header says) and loses its frames.
test('an audio output that carries none of the source\'s sound fails; a whole one passes', { timeout: 120_000 }, async () => {
  const wav = fixture('sample.wav');
  const flac = join(dir, 'tone.flac');
  tool('/usr/bin/ffmpeg', ['-v', 'error', '-y', '-stream_loop', '5', '-i', wav, '-c:a', 'flac', flac]); // the 0.5 s tone, six times
  const bytes = await readFile(flac);
  let end = 4; // "fLaC", then metadata blocks: 1 byte (last flag + type) and a 3-byte length each
  for (;;) {
    const last = (bytes[end] as number) & 0x80;
    end += 4 + bytes.readUIntBE(end + 1, 3);
    if (last) break;
  }
  const frameless = join(dir, 'frameless.flac');
  await writeFile(frameless, bytes.subarray(0, end));
  assert.ok(ffprobe(frameless).duration > 0.5, 'the header still says how long it is');
  for (const to of ['wav', 'mp3', 'ogg']) {
    const r = await conv.convert({ inputPath: frameless, sourceFormat: 'flac', targetFormat: to, outputPath: join(dir, 'out', `frameless.${to}`) });
    assert.equal(r.ok, false, `frameless flac → ${to} must fail, not complete`);
    if (!r.ok) {
      assert.equal(r.error.code, 'conversion_failed', to);
      assert.match(r.error.message, new RegExp(`The ${to} output carries none of the flac file's sound`));
    }
  }
  const whole = ffprobe((await convert('flac', 'wav', flac)).path);
  assert.ok(Math.abs(whole.duration - ffprobe(flac).duration) < 0.1, 'the whole FLAC converts as before');
});

test('the content rule: nothing out of something fails; a header that overstates its length does not fail real content', () => {
  assert.match(missingContent({ audioS: 3, videoS: 0 }, { audioS: 0, videoS: 0 }, 'audio') ?? '', /holds 0 s of sound, the source 3 s/);
  assert.match(missingContent({ audioS: 3, videoS: 0 }, null, 'audio') ?? '', /cannot be read back/);
  assert.match(missingContent({ audioS: 20, videoS: 20 }, { audioS: 20, videoS: 0 }, 'video') ?? '', /0 s of pictures/);
  assert.equal(missingContent({ audioS: 36_000, videoS: 0 }, { audioS: 2, videoS: 0 }, 'audio'), null, 'hours claimed, 2 s real: not "none"');
  assert.equal(missingContent({ audioS: 0.3, videoS: 0 }, { audioS: 0, videoS: 0 }, 'audio'), null, 'too short to judge');
  assert.equal(missingContent({ audioS: 0, videoS: 5 }, { audioS: 0, videoS: 0 }, 'audio'), null, 'no sound in, none expected out');
});

test('audio and video containers FFmpeg writes (issue 12): one conversion each, read back by ffprobe', { timeout: 300_000 }, async () => {
  // Audio from the WAVE fixture: ffprobe's demuxer and the only stream's codec (no video).
  const audio: Readonly<Record<string, readonly [string, string]>> = {
    ac3: ['ac3', 'ac3'], eac3: ['eac3', 'eac3'], mp2: ['mp3', 'mp2'], aac: ['aac', 'aac'], wma: ['asf', 'wmav2'],
    mka: ['matroska,webm', 'opus'], oga: ['ogg', 'flac'], tta: ['tta', 'tta'], spx: ['ogg', 'speex'],
  };
  const wav = fixture('sample.wav');
  const seconds = ffprobe(wav).duration;
  for (const [to, [format, codec]] of Object.entries(audio)) {
    const p = ffprobe((await convert('wav', to, wav)).path);
    assert.equal(p.format, format, `wav → ${to}`);
    assert.deepEqual(p.codecs, [codec], `wav → ${to}`);
    assert.ok(Math.abs(p.duration - seconds) < 0.2, `wav → ${to} lasts ${p.duration}, not ${seconds}`);
  }
  // Video from a one-second clip with sound: demuxer, codecs, and the ISO brand where containers share a demuxer.
  const clip = join(dir, 'clip.mp4');
  tool('/usr/bin/ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=duration=1:size=64x48:rate=10', '-f', 'lavfi', '-i', 'sine=duration=1:sample_rate=22050',
    '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', clip]);
  const video: Readonly<Record<string, readonly [string, string, string, string?]>> = {
    flv: ['flv', 'h264', 'aac'], f4v: ['mov,mp4,m4a,3gp,3g2,mj2', 'h264', 'aac', 'f4v '], m4v: ['mov,mp4,m4a,3gp,3g2,mj2', 'h264', 'aac', 'M4V '],
    '3gp': ['mov,mp4,m4a,3gp,3g2,mj2', 'h264', 'aac', '3gp'], '3g2': ['mov,mp4,m4a,3gp,3g2,mj2', 'h264', 'aac', '3g2'],
    ts: ['mpegts', 'h264', 'aac'], m2ts: ['mpegts', 'h264', 'aac'], wmv: ['asf', 'wmv2', 'wmav2'], asf: ['asf', 'wmv2', 'wmav2'],
    mpg: ['mpeg', 'mpeg1video', 'mp2'], vob: ['mpeg', 'mpeg2video', 'ac3'], mxf: ['mxf', 'mpeg2video', 'pcm_s16le'],
    ogv: ['ogg', 'theora', 'vorbis'], dv: ['dv', 'dvvideo', 'pcm_s16le'], nut: ['nut', 'mpeg4', 'mp3'], y4m: ['yuv4mpegpipe', 'rawvideo', ''],
  };
  for (const [to, [format, v, a, brand]] of Object.entries(video)) {
    const r = await convert('mp4', to, clip);
    const p = ffprobe(r.path);
    assert.equal(p.format, format, `mp4 → ${to}`);
    assert.deepEqual(p.codecs.filter((c) => c !== undefined).sort(), [v, a].filter(Boolean).sort(), `mp4 → ${to}`);
    assert.ok(p.duration > 0.8 && p.duration < 1.3, `mp4 → ${to} lasts ${p.duration}`);
    if (brand) assert.match(tool('/usr/bin/ffprobe', ['-v', 'error', '-show_entries', 'format_tags=major_brand', '-of', 'csv=p=0', r.path]), new RegExp(`^${brand}`), to);
  }
  const head = await readFile((await convert('mp4', 'm2ts', clip)).path);
  assert.deepEqual([head[4], head[196], head[388]], [0x47, 0x47, 0x47], 'm2ts: 192-byte packets');
  assert.match(tool('/usr/bin/ffprobe', ['-v', 'error', '-select_streams', 'v', '-show_entries', 'stream=width,height', '-of', 'csv=p=0', (await convert('mp4', 'dv', clip)).path]), /^720,576/);
  // Read back: each new source to a common target. A mono TTA or Speex stream has no channel
  // layout, which the AAC encoder refused until the layout was named.
  for (const [from, to] of [['tta', 'm4a'], ['spx', 'aac'], ['ac3', 'flac'], ['mka', 'mp3'], ['wma', 'wav'], ['m2ts', 'mp4'], ['y4m', 'webm'], ['dv', 'mp4'], ['vob', 'mkv'], ['wmv', 'dv']] as const) {
    const r = await convert(from, to);
    assert.deepEqual(r.engines, ['ffmpeg'], `${from} → ${to}`);
    assert.ok(ffprobe(r.path).duration > 0.1, `${from} → ${to}`);
  }
  // Sound cannot become video; a silent raw video has no sound to give.
  const ffmpegEngine = new FfmpegEngine();
  assert.equal(ffmpegEngine.supports('y4m', 'wav'), false);
  assert.equal(ffmpegEngine.supports('ac3', 'mp4'), false);
  assert.equal(ffmpegEngine.supports('y4m', 'mp4'), true);
});

test('archives repack between zip, 7z, tar.*, cpio and ISO 9660 with every member and byte kept', { timeout: 180_000 }, async () => {
  const formats = ['zip', '7z', 'tar', 'tgz', 'tbz2', 'txz', 'cpio', 'iso'];
  for (const from of formats) {
    for (const to of formats) {
      if (from === to) continue;
      const r = await convert(from, to);
      // Python's tarfile reads the tars, 7-Zip the rest; neither wrote them (bsdtar did).
      const tarLike = ['tar', 'tgz', 'tbz2', 'txz'].includes(to);
      const listing = tarLike
        ? tool('/usr/bin/python3', ['-c', 'import tarfile,sys;print("\\n".join(tarfile.open(sys.argv[1]).getnames()))', r.path])
        : tool('/usr/bin/7z', ['l', '-ba', r.path]);
      assert.match(listing, /docs\/note\.txt/i, `${from} → ${to}`);
      assert.match(listing, /readme\.txt/i, `${from} → ${to}`);
      const note = tarLike
        ? tool('/usr/bin/python3', ['-c', 'import tarfile,sys;sys.stdout.write(tarfile.open(sys.argv[1]).extractfile("docs/note.txt").read().decode())', r.path])
        : tool('/usr/bin/7z', ['e', '-so', r.path, 'docs/note.txt']);
      assert.equal(note, `${MARKER} inside\n`, `${from} → ${to}`);
    }
  }
});

test('archive guards: traversal, links out, too many entries, too much expansion', { timeout: 120_000 }, async () => {
  const evil = join(dir, 'evil');
  await mkdir(evil, { recursive: true });
  const py = (code: string, out: string): void => void tool('/usr/bin/python3', ['-c', code, out]);
  const cases: [string, string, (p: string) => void, RegExp][] = [
    ['dotdot.zip', 'zip', (p) => py("import zipfile,sys\nwith zipfile.ZipFile(sys.argv[1],'w') as z: z.writestr('../../escape.txt','x')", p), /points outside the archive/],
    ['abs.tar', 'tar', (p) => py("import tarfile,sys,io\nt=tarfile.open(sys.argv[1],'w')\ni=tarfile.TarInfo('/etc/evil'); i.size=1; t.addfile(i, io.BytesIO(b'x')); t.close()", p), /points outside the archive/],
    ['link.tar', 'tar', (p) => py("import tarfile,sys\nt=tarfile.open(sys.argv[1],'w')\ni=tarfile.TarInfo('passwd'); i.type=tarfile.SYMTYPE; i.linkname='/etc/passwd'; t.addfile(i); t.close()", p), /points outside the archive/],
    ['many.tgz', 'tgz', (p) => py("import tarfile,sys,io\nt=tarfile.open(sys.argv[1],'w:gz')\nfor n in range(600):\n  i=tarfile.TarInfo(f'f{n}'); i.size=0; t.addfile(i, io.BytesIO(b''))\nt.close()", p), /more than 500 entries/],
    ['bomb.tgz', 'tgz', (p) => py("import tarfile,sys,io\nt=tarfile.open(sys.argv[1],'w:gz')\ni=tarfile.TarInfo('zeros'); i.size=30*1024*1024; t.addfile(i, io.BytesIO(bytes(i.size))); t.close()", p), /expands to more than 20971520 bytes/],
  ];
  for (const [name, from, make, message] of cases) {
    const p = join(evil, name);
    make(p);
    const started = Date.now();
    const r = await conv.convert({ inputPath: p, sourceFormat: from, targetFormat: 'zip' === from ? '7z' : 'zip', outputPath: join(dir, 'out', `${name}.out`) });
    assert.equal(r.ok, false, name);
    if (!r.ok) {
      assert.equal(r.error.code, 'conversion_failed', name);
      assert.match(r.error.message, message, name);
    }
    assert.ok(Date.now() - started < 30_000, name);
  }
});

test('3D models convert each to each and keep the mesh', { timeout: 180_000 }, async () => {
  const formats = ['obj', 'stl', 'ply', 'glb', 'dae', '3ds', 'x', '3mf'];
  for (const to of formats) {
    if (to === 'obj') continue;
    const r = await convert('obj', to);
    const v = await meshVertices(r.path, to);
    // Indexed formats keep 8 corners; STL, 3DS and DirectX store each triangle's own (36).
    assert.ok(v === 8 || v === 24 || v === 36, `obj → ${to}: ${v} vertices`);
  }
  for (const from of formats) {
    if (from === 'obj') continue;
    const v = await meshVertices((await convert(from, 'obj')).path, 'obj');
    assert.ok(v >= 8, `${from} → obj: ${v} vertices`);
  }
});

test('fonts convert each to each; FreeType (fc-scan) reads the family', { timeout: 180_000 }, async () => {
  const formats = ['ttf', 'otf', 'woff', 'woff2', 'sfd', 'pfb'];
  for (const from of formats) {
    for (const to of formats) {
      if (from === to) continue;
      const r = await convert(from, to);
      if (to === 'sfd') assert.match(await readFile(r.path, 'utf8'), /^SplineFontDB:/);
      else assert.match(tool('/usr/bin/fc-scan', ['--format', '%{family}', r.path]), /DejaVu Sans/, `${from} → ${to}`);
    }
  }
});

test('detection of every new format from its bytes, and the text ones from content or name', async () => {
  const { decidedByName, detectFormat } = await import('../formats/detect.js');
  // Formats without a signature of their own (VOB and ASF share MPEG-PS's and WMV's bytes): their name decides.
  for (const [key, path] of samples) {
    if (key.includes('>')) continue;
    const found = await detectFormat(path, decidedByName(key) ? `upload.${key}` : 'upload.bin');
    assert.equal(found?.ext, key, path);
  }
  // A gzip of something else is not an archive we take.
  const gz = join(dir, 'notes.gz');
  tool('/usr/bin/python3', ['-c', 'import gzip,sys;open(sys.argv[1],"wb").write(gzip.compress(b"just words"))', gz]);
  assert.equal(await detectFormat(gz, 'notes.gz'), null);
});
