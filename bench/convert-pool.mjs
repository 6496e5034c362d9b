// docx → pdf through the warm LibreOffice pool vs a cold `soffice --headless --convert-to pdf`
// per file, measured in the same run, alternating so both see the same machine load.
// Usage: node bench/convert-pool.mjs [rounds=8]   (build first: npm run build)
// Both sides run through the converter's exec sandbox (same network namespace and limits).
// The cold side reuses one profile folder created by an untimed first run, which favours it:
// a truly fresh profile per file costs several seconds more.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { Converter, ownForSandbox, runSandboxed } from '@mailconv/converter';

const rounds = Math.max(1, Number(process.argv[2] ?? 8));
const input = fileURLToPath(new URL('../packages/converter/test/fixtures/sample.docx', import.meta.url));
const dir = await mkdtemp(join(tmpdir(), 'bench-convert-'));
// The cold soffice writes its profile and output here as the sandbox user.
await ownForSandbox(dir);
const coldProfile = pathToFileURL(join(dir, 'cold-profile')).href;

async function assertPdf(path) {
  const head = (await readFile(path)).subarray(0, 5).toString();
  if (head !== '%PDF-') throw new Error(`${path} is not a PDF`);
}

async function cold(i) {
  const outdir = join(dir, `cold-${i}`);
  const t0 = performance.now();
  const r = await runSandboxed('/usr/bin/soffice', [`-env:UserInstallation=${coldProfile}`, '--headless', '--convert-to', 'pdf', '--outdir', outdir, input], {
    cwd: dir, timeoutMs: 120_000, readOnly: [dirname(input)], // the fixture's folder, read-only in the sandbox
  });
  const ms = performance.now() - t0;
  if (r.exitCode !== 0) throw new Error(`cold soffice failed: ${r.stderr}`);
  await assertPdf(join(outdir, 'sample.pdf'));
  return ms;
}

const converter = await Converter.create({ workDir: join(dir, 'work'), libreoffice: { instances: 1 }, prestart: true });
async function warm(i) {
  const t0 = performance.now();
  const r = await converter.convert({ inputPath: input, sourceFormat: 'docx', targetFormat: 'pdf', outputPath: join(dir, `warm-${i}.pdf`) });
  const ms = performance.now() - t0;
  if (!r.ok) throw new Error(`warm conversion failed: ${JSON.stringify(r.error)}`);
  await assertPdf(r.output.path);
  return ms;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

try {
  // Untimed: the cold profile's first creation and the pool's first document.
  await cold('setup');
  await warm('setup');
  const w = [];
  const c = [];
  for (let i = 0; i < rounds; i++) {
    w.push(await warm(i));
    c.push(await cold(i));
  }
  const warmMs = median(w);
  const coldMs = median(c);
  console.log(`rounds=${rounds} input=sample.docx (${(await readFile(input)).length} bytes)`);
  console.log(`warm pool  ms: ${w.map((x) => x.toFixed(0)).join(' ')}`);
  console.log(`cold soffice ms: ${c.map((x) => x.toFixed(0)).join(' ')}`);
  console.log(`RESULT warm_ms=${warmMs.toFixed(0)} cold_ms=${coldMs.toFixed(0)} speedup=${(coldMs / warmMs).toFixed(1)}`);
} finally {
  await converter.close();
  await rm(dir, { recursive: true, force: true });
}
