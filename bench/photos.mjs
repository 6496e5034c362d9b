// Photos and video the way phones make them (issue 31), through the HTTP API as a user calls
// it (a real service process on loopback: upload, convert, download), side by side with the
// tool alone on the same file in the same run, rounds alternating (A B A B), medians:
//   1. a 12-megapixel iPhone HEIC (the corpus's iPhone XR portrait photo) → JPG, quality 85
//      (the service's default) vs `heif-convert -q 85` alone. Target: ≤ 1.2×.
//   2. a 10 s 1080p H.264 MP4 (generated here by ffmpeg: testsrc2 at 30 fps) → GIF at the
//      service's defaults (12 fps, 480 px wide, a palette made for the clip, Bayer dither 5)
//      vs the best-known ffmpeg two-pass palette commands alone at the same settings
//      (palettegen stats_mode=diff, then paletteuse, lanczos scaling; ffmpeg's own threads).
//      Targets: ≤ 1.2× the time, and a file no larger.
// Every output is checked: the JPEG's size is 3024×4032 (upright), the GIF's frames and
// width are ffprobe's. Usage: npm run bench:photos [-- --rounds N]. Build first (npm run build).
// Ends with one `RESULT key=value …` line.

// First: on a Node older than 22.12 this exits with one line before any native addon loads (issue 44).
import '@mailconv/platform/node-guard';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { ensureSystemPackages } from '../scripts/lib/ensure.mjs';
import { convertViaApi, startConvertService } from './lib/convert-service.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const i = process.argv.indexOf('--rounds');
const ROUNDS = i > 0 ? Number(process.argv[i + 1]) : 3;
const HEIC = join(ROOT, 'packages/converter/test/photos/metadata-extractor-iphone-xr-portrait.heic');

ensureSystemPackages({ includeTest: true });

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const run = (cmd, args) => {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};
const timed = async (fn) => {
  const t = performance.now();
  const out = await fn();
  return { ms: performance.now() - t, out };
};
/** Width, height and frame count as ffprobe reads them. */
const probe = (path) => {
  const s = JSON.parse(run('/usr/bin/ffprobe', ['-v', 'error', '-count_frames', '-select_streams', 'v:0', '-show_entries', 'stream=width,height,nb_read_frames', '-of', 'json', path])).streams[0];
  return { width: s.width, height: s.height, frames: Number(s.nb_read_frames) };
};

const dir = await mkdtemp(join(tmpdir(), 'bench-photos-'));
const { base, auth, stop } = await startConvertService(dir);
const viaApi = async (name, bytes, target, options, out) => {
  const r = await convertViaApi(base, auth, name, bytes, target, options);
  if (!r.ok) throw new Error(`API ${name} → ${target}: ${r.why}`);
  await writeFile(out, r.out);
  return r;
};
const results = {};
try {
  // --- 1. HEIC → JPG ----------------------------------------------------------------------
  const heic = await readFile(HEIC);
  const heifConvert = join(dir, 'heif-convert.jpg');
  const apiJpg = join(dir, 'api.jpg');
  const ours = [];
  const theirs = [];
  await viaApi('photo.heic', heic, 'jpg', {}, apiJpg); // warm the service once, as a running service is
  for (let r = 0; r < ROUNDS; r++) {
    theirs.push((await timed(() => run('/usr/bin/heif-convert', ['-q', '85', HEIC, heifConvert]))).ms);
    ours.push((await timed(() => viaApi('photo.heic', heic, 'jpg', {}, apiJpg))).ms);
  }
  for (const [who, path] of [['api', apiJpg], ['heif-convert', heifConvert]]) {
    const { width, height } = probe(path);
    if (`${width}×${height}` !== '3024×4032') throw new Error(`${who}: ${width}×${height}, not the upright 3024×4032`);
  }
  results.heic_api_ms = Math.round(median(ours));
  results.heic_heif_convert_ms = Math.round(median(theirs));
  results.heic_ratio = (median(ours) / median(theirs)).toFixed(2);
  results.heic_api_kb = Math.round((await stat(apiJpg)).size / 1024);
  results.heic_heif_convert_kb = Math.round((await stat(heifConvert)).size / 1024);
  console.log(`HEIC → JPG (12 MP): API ${results.heic_api_ms} ms, heif-convert ${results.heic_heif_convert_ms} ms: ${results.heic_ratio}× (target ≤ 1.2)`);

  // --- 2. MP4 → GIF -----------------------------------------------------------------------
  const mp4 = join(dir, 'clip.mp4');
  run('/usr/bin/ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=1920x1080:rate=30:duration=10', '-pix_fmt', 'yuv420p', '-c:v', 'libx264', '-preset', 'veryfast', mp4]);
  const clip = await readFile(mp4);
  const palette = join(dir, 'palette.png');
  const ffGif = join(dir, 'ffmpeg.gif');
  const apiGif = join(dir, 'api.gif');
  const scale = 'fps=12,scale=480:-2:flags=lanczos';
  const twoPass = () => {
    run('/usr/bin/ffmpeg', ['-v', 'error', '-y', '-i', mp4, '-vf', `${scale},palettegen=stats_mode=diff`, palette]);
    run('/usr/bin/ffmpeg', ['-v', 'error', '-y', '-i', mp4, '-i', palette, '-lavfi', `${scale}[x];[x][1:v]paletteuse=dither=bayer:bayer_scale=5`, '-loop', '0', ffGif]);
  };
  const oursGif = [];
  const theirsGif = [];
  for (let r = 0; r < ROUNDS; r++) {
    theirsGif.push((await timed(async () => twoPass())).ms);
    oursGif.push((await timed(() => viaApi('clip.mp4', clip, 'gif', {}, apiGif))).ms);
  }
  const a = probe(apiGif);
  const b = probe(ffGif);
  if (a.width !== 480 || b.width !== 480 || a.frames !== b.frames || a.frames < 115) throw new Error(`GIFs differ: API ${JSON.stringify(a)}, ffmpeg ${JSON.stringify(b)}`);
  results.gif_api_ms = Math.round(median(oursGif));
  results.gif_ffmpeg_ms = Math.round(median(theirsGif));
  results.gif_ratio = (median(oursGif) / median(theirsGif)).toFixed(2);
  results.gif_api_kb = Math.round((await stat(apiGif)).size / 1024);
  results.gif_ffmpeg_kb = Math.round((await stat(ffGif)).size / 1024);
  results.gif_frames = a.frames;
  console.log(`MP4 → GIF (10 s 1080p): API ${results.gif_api_ms} ms, ffmpeg two-pass ${results.gif_ffmpeg_ms} ms: ${results.gif_ratio}× (target ≤ 1.2); ${results.gif_api_kb} KB vs ${results.gif_ffmpeg_kb} KB, ${a.frames} frames`);
  const met = Number(results.heic_ratio) <= 1.2 && Number(results.gif_ratio) <= 1.2 && results.gif_api_kb <= results.gif_ffmpeg_kb;
  console.log(`RESULT ${Object.entries({ ...results, rounds: ROUNDS, targets_met: met }).map(([k, v]) => `${k}=${v}`).join(' ')}`);
} finally {
  await stop();
  await rm(dir, { recursive: true, force: true });
}
