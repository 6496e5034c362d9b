// The conversion service against the tools people use instead, measured side by side in one
// run, through the HTTP API as a user calls it (a real service process on loopback):
//   1. docx → pdf, one document at a time, for every real document of the corpus
//      (packages/converter/test/corpus/docx): the API (upload + convert + download) vs a cold
//      `soffice --headless --convert-to pdf` per file vs `unoconv` with a warm listener
//      (Debian's package). Per document the three run in turn (A B C), so all see the same
//      machine load; every output is checked with pdfinfo. Target: ≥ 5× unoconv, 100% converted.
//   2. Images: png → webp (quality 80) and a jpeg resize (jpg → webp, ≤ 2048 px, quality 75),
//      the API vs ImageMagick's `convert` on the same generated photo-like images. Target: faster.
//   3. API overhead: a ~20 MB PNG (12 MP) → webp through the API vs the same engine call in-process,
//      without HTTP. Target: ≤ 1.15×.
//   4. A 2 GB upload over loopback (a WAV, streamed): MB/s and the service's RSS growth, beside
//      a bare Node HTTP server that streams the same body to disk, rounds alternating (median of
//      3). Targets: ≥ 0.8× the bare server, RSS growth < 150 MB.
// Usage: npm run bench:convert [-- --docs N] [--images N] [--upload-mb N] [--upload-rounds N] [--no-upload] [--only-upload]
// Build first (npm run build). Ends with one `RESULT key=value …` line.

// First: on a Node older than 22.12 this exits with one line before any native addon loads (issue 44).
import '@mailconv/platform/node-guard';
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Converter, ownForSandbox, runSandboxed } from '@mailconv/converter';
import { ensureSystemPackages } from '../scripts/lib/ensure.mjs';
import { convertViaApi, startConvertService } from './lib/convert-service.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const DOCS = arg('docs', Infinity);
const IMAGES = arg('images', 6);
const UPLOAD_MB = arg('upload-mb', 2000);
const UPLOAD_ROUNDS = arg('upload-rounds', 3);
const NO_UPLOAD = process.argv.includes('--no-upload');
const ONLY_UPLOAD = process.argv.includes('--only-upload');

// unoconv is the baseline's own package (listed with the test packages).
ensureSystemPackages({ includeTest: true });

const dir = await mkdtemp(join(tmpdir(), 'bench-convert-'));
// The cold soffice runs as the sandbox user: it writes its profile and outputs here.
await ownForSandbox(dir);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const sum = (xs) => xs.reduce((a, b) => a + b, 0);
const sec = (ms) => (ms / 1000).toFixed(1);
const pdfPages = (path) => {
  const r = spawnSync('/usr/bin/pdfinfo', [path], { encoding: 'utf8' });
  return r.status === 0 ? Number(/^Pages:\s+(\d+)/m.exec(r.stdout)?.[1] ?? 0) : 0;
};
const rssMb = (pid) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(spawnSync('cat', [`/proc/${pid}/status`], { encoding: 'utf8' }).stdout ?? '');
  return m ? Number(m[1]) / 1024 : NaN;
};

// --- the service, as a separate process on loopback --------------------------------------
const { base, auth, service } = await startConvertService(dir, { env: { CONVERT_PRESTART: 'true' } });

/** Upload + convert (waiting for it) + download through the API. */
const viaApi = (name, bytes, target, options = {}) => convertViaApi(base, auth, name, bytes, target, options);

const results = {};
try {
  // --- 1. docx → pdf -------------------------------------------------------------------
  if (!ONLY_UPLOAD) {
  const corpus = join(ROOT, 'packages/converter/test/corpus/docx');
  const docs = (await readdir(corpus)).filter((f) => f.endsWith('.docx')).sort().slice(0, DOCS);
  const coldProfile = pathToFileURL(join(dir, 'cold-profile')).href;
  const cold = async (file, i) => {
    const outdir = join(dir, `cold-${i}`);
    const r = await runSandboxed('/usr/bin/soffice', [`-env:UserInstallation=${coldProfile}`, '--headless', '--convert-to', 'pdf', '--outdir', outdir, join(corpus, file)], {
      cwd: dir,
      timeoutMs: 120_000,
      readOnly: [corpus], // the documents, read-only in the sandbox
    });
    const out = join(outdir, file.replace(/\.docx$/, '.pdf'));
    return r.exitCode === 0 && pdfPages(out) > 0;
  };
  // unoconv's listener: one warm soffice on its default socket, as its manual describes.
  const unoHome = join(dir, 'unoconv-home');
  await mkdir(unoHome);
  const unoEnv = { ...process.env, HOME: unoHome };
  // unoconv is a Python script for Debian's python3 (which has the uno module), whatever python3 is first on PATH.
  const UNOCONV = ['/usr/bin/python3', '/usr/bin/unoconv'];
  const listener = spawn(UNOCONV[0], [UNOCONV[1], '--listener'], { env: unoEnv, stdio: 'ignore', detached: true });
  const unoconv = async (file, i) => {
    const out = join(dir, `uno-${i}.pdf`);
    const r = await new Promise((resolve) => {
      const p = spawn(UNOCONV[0], [UNOCONV[1], '-f', 'pdf', '-o', out, join(corpus, file)], { env: unoEnv, stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      p.stderr.on('data', (b) => (err += b));
      p.on('exit', (code) => resolve({ code, err }));
    });
    return r.code === 0 && pdfPages(out) > 0;
  };
  const api = async (file) => {
    const r = await viaApi(file, await readFile(join(corpus, file)), 'pdf');
    if (!r.ok) return false;
    const out = join(dir, `api-${file}.pdf`);
    await writeFile(out, r.out);
    return pdfPages(out) > 0;
  };
  // Untimed warm-ups: the cold profile's creation, the listener's start, the pool's first document.
  await cold(docs[0], 'setup');
  for (let i = 0; i < 50 && !(await unoconv(docs[0], 'setup')); i++) await new Promise((r) => setTimeout(r, 200));
  await api(docs[0]);
  const time = { api: [], cold: [], unoconv: [] };
  const okCount = { api: 0, cold: 0, unoconv: 0 };
  const failed = { api: [], cold: [], unoconv: [] };
  for (const [i, file] of docs.entries()) {
    for (const [side, fn] of [['api', api], ['cold', cold], ['unoconv', unoconv]]) {
      const t0 = performance.now();
      const ok = await fn(file, i);
      time[side].push(performance.now() - t0);
      if (ok) okCount[side]++;
      else failed[side].push(file);
    }
  }
  // The listener's soffice (it listens on unoconv's default loopback socket, port 2002).
  try {
    process.kill(-listener.pid, 'SIGKILL');
  } catch {
    // already gone
  }
  spawnSync('pkill', ['-f', 'port=2002;urp']);
  for (const side of ['api', 'cold', 'unoconv']) {
    console.log(`docx→pdf ${side.padEnd(8)} ${okCount[side]}/${docs.length} converted, total ${sec(sum(time[side]))} s, median ${median(time[side]).toFixed(0)} ms${failed[side].length ? `, failed: ${failed[side].join(' ')}` : ''}`);
  }
  Object.assign(results, {
    docs: docs.length,
    api_docx_ok: okCount.api,
    cold_docx_ok: okCount.cold,
    unoconv_docx_ok: okCount.unoconv,
    api_docx_s: sec(sum(time.api)),
    cold_docx_s: sec(sum(time.cold)),
    unoconv_docx_s: sec(sum(time.unoconv)),
    docx_vs_cold: (sum(time.cold) / sum(time.api)).toFixed(2),
    docx_vs_unoconv: (sum(time.unoconv) / sum(time.api)).toFixed(2),
  });

  // --- 2. images: API vs ImageMagick's CLI --------------------------------------------
  const images = [];
  for (let i = 0; i < IMAGES; i++) {
    const png = join(dir, `photo-${i}.png`);
    const jpg = join(dir, `photo-${i}.jpg`);
    // Photo-like: a fractal landscape with grain, 6 MP, different every time.
    spawnSync('/usr/bin/convert', ['-seed', String(1000 + i), '-size', '3000x2000', 'plasma:fractal', '-blur', '0x1', '-attenuate', '0.4', '+noise', 'Gaussian', '-depth', '8', png]);
    spawnSync('/usr/bin/convert', [png, '-quality', '92', jpg]);
    images.push({ png, jpg });
  }
  const im = (args) => {
    const r = spawnSync('/usr/bin/convert', args);
    return r.status === 0;
  };
  const imgTime = { apiWebp: [], imWebp: [], apiResize: [], imResize: [] };
  let imgOk = 0;
  for (const [i, { png, jpg }] of images.entries()) {
    const pngBytes = await readFile(png);
    const jpgBytes = await readFile(jpg);
    let t0 = performance.now();
    const a = await viaApi('photo.png', pngBytes, 'webp', { quality: 80 });
    imgTime.apiWebp.push(performance.now() - t0);
    t0 = performance.now();
    const b = im([png, '-quality', '80', join(dir, `im-${i}.webp`)]);
    imgTime.imWebp.push(performance.now() - t0);
    t0 = performance.now();
    const c = await viaApi('photo.jpg', jpgBytes, 'webp', { preset: 'web' });
    imgTime.apiResize.push(performance.now() - t0);
    t0 = performance.now();
    const d = im([jpg, '-resize', '2048x2048>', '-quality', '75', join(dir, `im-r-${i}.webp`)]);
    imgTime.imResize.push(performance.now() - t0);
    if (a.ok && b && c.ok && d) imgOk++;
  }
  console.log(`png→webp     api ${median(imgTime.apiWebp).toFixed(0)} ms vs convert ${median(imgTime.imWebp).toFixed(0)} ms (median of ${images.length})`);
  console.log(`jpg resize   api ${median(imgTime.apiResize).toFixed(0)} ms vs convert ${median(imgTime.imResize).toFixed(0)} ms`);
  Object.assign(results, {
    images: images.length,
    images_ok: imgOk,
    webp_vs_imagemagick: (median(imgTime.imWebp) / median(imgTime.apiWebp)).toFixed(2),
    resize_vs_imagemagick: (median(imgTime.imResize) / median(imgTime.apiResize)).toFixed(2),
  });

  // --- 3. API overhead on a ~20 MB image ----------------------------------------------
  const big = join(dir, 'big.png');
  // 12 MP, 8 bits per channel: about 20 MB of PNG.
  spawnSync('/usr/bin/convert', ['-seed', '7', '-size', '4000x3000', 'plasma:fractal', '-blur', '0x1', '-attenuate', '0.2', '+noise', 'Gaussian', '-depth', '8', big]);
  const bigBytes = await readFile(big);
  const direct = await Converter.create({ workDir: join(dir, 'direct-work') });
  const overhead = { api: [], direct: [] };
  for (let i = 0; i < 5; i++) {
    let t0 = performance.now();
    const a = await viaApi('big.png', bigBytes, 'webp', { quality: 80 });
    overhead.api.push(performance.now() - t0);
    if (!a.ok) throw new Error(`API big image: ${a.why}`);
    t0 = performance.now();
    const r = await direct.convert({ inputPath: big, sourceFormat: 'png', targetFormat: 'webp', options: { quality: 80 }, outputPath: join(dir, `direct-${i}.webp`) });
    overhead.direct.push(performance.now() - t0);
    if (!r.ok) throw new Error(`direct big image: ${JSON.stringify(r.error)}`);
  }
  await direct.close();
  console.log(`20 MB image  api ${median(overhead.api).toFixed(0)} ms vs engine call ${median(overhead.direct).toFixed(0)} ms (${(bigBytes.length / 1e6).toFixed(1)} MB, median of 5)`);
  Object.assign(results, { big_image_mb: (bigBytes.length / 1e6).toFixed(1), api_overhead: (median(overhead.api) / median(overhead.direct)).toFixed(2) });

  }
  // --- 4. a 2 GB upload -----------------------------------------------------------------
  if (!NO_UPLOAD) {
    const total = UPLOAD_MB * 1e6;
    const wavBody = () => {
      // A WAV header, then silence-free PCM in 1 MiB blocks generated on the fly (no file).
      const header = Buffer.alloc(44);
      header.write('RIFF', 0, 'latin1');
      header.writeUInt32LE(Math.min(total - 8, 0xffffffff), 4);
      header.write('WAVEfmt ', 8, 'latin1');
      header.writeUInt32LE(16, 16);
      header.writeUInt16LE(1, 20);
      header.writeUInt16LE(2, 22);
      header.writeUInt32LE(48_000, 24);
      header.writeUInt32LE(192_000, 28);
      header.writeUInt16LE(4, 32);
      header.writeUInt16LE(16, 34);
      header.write('data', 36, 'latin1');
      header.writeUInt32LE(Math.min(total - 44, 0xffffffff), 40);
      const block = Buffer.alloc(1 << 20);
      for (let i = 0; i < block.length; i += 2) block.writeInt16LE(Math.round(3000 * Math.sin(i / 40)), i);
      return (async function* () {
        yield header;
        let left = total - 44;
        while (left > 0) {
          const n = Math.min(left, block.length);
          yield n === block.length ? block : block.subarray(0, n);
          left -= n;
        }
      })();
    };
    const multipart = (boundary) =>
      (async function* () {
        yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.wav"\r\nContent-Type: audio/wav\r\n\r\n`);
        yield* wavBody();
        yield Buffer.from(`\r\n--${boundary}--\r\n`);
      })();
    const post = async (url, headers) => {
      const boundary = `bench${Date.now()}`;
      const t0 = performance.now();
      const res = await fetch(url, {
        method: 'POST',
        headers: { ...headers, 'content-type': `multipart/form-data; boundary=${boundary}` },
        body: Readable.toWeb(Readable.from(multipart(boundary))),
        duplex: 'half',
      });
      const body = await res.text();
      return { ms: performance.now() - t0, status: res.status, body };
    };
    // Baseline: a bare Node server streaming the request body to a file. Rounds alternate
    // bare, API, bare, API…, each file removed after its run, so both see the same disk and load.
    const bare = createServer((req, res) => {
      pipeline(req, createWriteStream(join(dir, 'bare-upload'))).then(() => res.end('{}'), () => res.end());
    });
    await new Promise((r) => bare.listen(0, '127.0.0.1', r));
    const rssBefore = rssMb(service.pid);
    let rssPeak = rssBefore;
    const rates = { bare: [], api: [] };
    let stored;
    for (let round = 0; round < UPLOAD_ROUNDS; round++) {
      const bareRun = await post(`http://127.0.0.1:${bare.address().port}/`, {});
      await rm(join(dir, 'bare-upload'), { force: true });
      rates.bare.push(total / 1e6 / (bareRun.ms / 1000));
      const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssMb(service.pid))), 50);
      const up = await post(`${base}/api/v1/upload`, auth);
      clearInterval(sampler);
      if (up.status !== 201) throw new Error(`upload: ${up.status} ${up.body.slice(0, 200)}`);
      const uploaded = JSON.parse(up.body);
      const file = join(dir, 'data', 'storage', 'uploads', uploaded.upload_id ?? uploaded.id);
      stored = await stat(file);
      await rm(file, { force: true });
      rates.api.push(total / 1e6 / (up.ms / 1000));
    }
    bare.close();
    const apiRate = median(rates.api);
    const bareRate = median(rates.bare);
    console.log(`upload ${UPLOAD_MB} MB  api ${apiRate.toFixed(0)} MB/s (runs ${rates.api.map((r) => r.toFixed(0)).join(', ')}; stored ${stored.size} bytes, RSS ${rssBefore.toFixed(0)} → peak ${rssPeak.toFixed(0)} MB) vs bare server ${bareRate.toFixed(0)} MB/s (runs ${rates.bare.map((r) => r.toFixed(0)).join(', ')}): ${(apiRate / bareRate).toFixed(2)}×`);
    Object.assign(results, {
      upload_mb: UPLOAD_MB,
      upload_rounds: UPLOAD_ROUNDS,
      upload_mb_s: apiRate.toFixed(0),
      bare_upload_mb_s: bareRate.toFixed(0),
      upload_vs_bare: (apiRate / bareRate).toFixed(2),
      upload_rss_growth_mb: (rssPeak - rssBefore).toFixed(0),
    });
  }

  const met =
    results.api_docx_ok === results.docs &&
    Number(results.docx_vs_unoconv) >= 5 &&
    results.images_ok === results.images &&
    Number(results.webp_vs_imagemagick) > 1 &&
    Number(results.resize_vs_imagemagick) > 1 &&
    Number(results.api_overhead) <= 1.15 &&
    (NO_UPLOAD || (Number(results.upload_vs_bare) >= 0.8 && Number(results.upload_rss_growth_mb) < 150));
  console.log(`RESULT ${Object.entries({ ...results, targets_met: met }).map(([k, v]) => `${k}=${v}`).join(' ')}`);
} finally {
  service.kill('SIGTERM');
  await new Promise((r) => service.once('exit', r));
  await rm(dir, { recursive: true, force: true });
}
