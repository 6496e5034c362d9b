/**
 * `npm run matrix:sample`: converts a stratified sample of the proven pairs again and judges
 * each output with the matrix's independent checks (issue 44) — the suite's re-check
 * (registry-matrix.test.ts) at any seed and size, with the same pick (matrix/sample-pick.ts):
 * every source format, family pair, engine chain and engine at least once, then pairs at
 * random up to `--fraction` of all. It writes nothing: the proof is `npm run matrix`'s.
 *
 *   npm run matrix:sample                          # today's seed (printed), an eighth of the pairs
 *   npm run matrix:sample -- --seed 7              # that seed again
 *   npm run matrix:sample -- --seed 7 --fraction 0.25
 *   npm run matrix:sample -- --seed 7 --fraction 0 # the strata alone (~310 pairs)
 *
 * Exits 1 when a pair fails (each printed with its reason), 2 on bad arguments.
 */

// First: on a Node older than 22.12 this exits with one line before any native addon loads (issue 44).
import '@mailconv/platform/node-guard';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Converter } from '../converter.js';
import { readProof } from '../proven-pairs.js';
import { runPairs } from './matrix/run.js';
import { misdetectedSamples, pickSample } from './matrix/sample-pick.js';
import { makeSamples } from './matrix/samples.js';

/** The default share of the pairs: the eighth the suite re-proved before issue 44. */
const DEFAULT_FRACTION = 1 / 8;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { seed: { type: 'string' }, fraction: { type: 'string' }, concurrency: { type: 'string', default: '2' }, quiet: { type: 'boolean', default: false } },
  });
  // Without --seed, one that changes daily: a nightly run covers other pairs each day.
  const seed = values.seed === undefined ? Math.floor(Date.now() / 86_400_000) : Number(values.seed);
  const fraction = values.fraction === undefined ? DEFAULT_FRACTION : Number(values.fraction);
  if (!Number.isInteger(seed) || !(fraction >= 0 && fraction <= 1)) {
    process.stderr.write('usage: npm run matrix:sample -- [--seed <integer>] [--fraction <0..1>] [--concurrency <n>] [--quiet]\n');
    process.exitCode = 2;
    return;
  }
  const concurrency = Math.max(1, Number(values.concurrency) || 2);
  const started = performance.now();
  const proof = await readProof();
  const picked = pickSample(proof.pairs, { seed, fraction });
  const { pairs } = picked;
  const sources = [...new Set(pairs.map((p) => p.from))];
  process.stdout.write(`matrix:sample: seed ${seed}, ${pairs.length} of ${proof.pairs.length} proven pairs (${picked.stratified} for the ${picked.strata} strata) from ${sources.length} source formats, ${concurrency} at a time\n`);
  const dir = await mkdtemp(join(tmpdir(), 'mailconv-matrix-sample-'));
  try {
    // Samples are made as the matrix makes them: by the engines, whether or not that pair is offered.
    const maker = await Converter.create({ workDir: join(dir, 'maker'), timeoutMs: 120_000, maxInputPixels: 4_000_000, candidatePairs: true, libreoffice: { instances: 1 } });
    let samples: Awaited<ReturnType<typeof makeSamples>>;
    try {
      samples = await makeSamples(maker, sources, join(dir, 'samples'), (line) => process.stdout.write(`  ${line}\n`));
    } finally {
      await maker.close();
    }
    const misdetected = await misdetectedSamples(samples);
    for (const m of misdetected) process.stdout.write(`  ✗ sample misdetected: ${m}\n`);
    // The pairs as they are offered: only the proven ones, along their proven chains.
    const conv = await Converter.create({ workDir: join(dir, 'work'), timeoutMs: 120_000, maxInputPixels: 4_000_000, libreoffice: { instances: concurrency } });
    let failed = 0;
    try {
      await runPairs(conv, pairs, samples, join(dir, 'out'), {
        concurrency,
        onDone: (o, done) => {
          if (!o.ok) {
            failed++;
            if (!values.quiet) process.stdout.write(`  ✗ ${o.failure.from} → ${o.failure.to} (${o.failure.engines.join('>')}): ${o.failure.reason}\n`);
          }
          if (done % 100 === 0) process.stdout.write(`  … ${done}/${pairs.length} (${Math.round((performance.now() - started) / 1000)} s)\n`);
        },
      });
    } finally {
      await conv.close();
    }
    const seconds = Math.round((performance.now() - started) / 1000);
    process.stdout.write(`matrix:sample: seed ${seed}: ${pairs.length - failed} of ${pairs.length} pairs proved again, ${failed} failed, ${misdetected.length} samples misdetected; ${seconds} s\n`);
    if (failed || misdetected.length) process.exitCode = 1;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`matrix:sample: ${(e as Error).stack ?? String(e)}\n`);
  process.exitCode = 1;
});
