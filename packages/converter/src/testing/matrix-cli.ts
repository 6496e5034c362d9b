/**
 * `npm run matrix`: proves every pair the engines could do (issue 12). Makes one sample per
 * source format (plus a real corpus file where there is one), converts it along each
 * candidate pair's preferred route, judges each output with an independent tool, and writes
 * the proven pairs to `packages/converter/proven-pairs.json` (the registry lists and routes
 * only those) and the table `docs/conversion-matrix.md`.
 *
 *   npm run matrix                         # every candidate pair
 *   npm run matrix -- --sources epub,mobi  # only these sources; the rest of the file is kept
 *   npm run matrix -- --retry-failed      # only the pairs the file lists as failed
 *   npm run matrix -- --retry-failed --targets icml   # … into these targets
 *   npm run matrix -- --concurrency 1
 */

// First: on a Node older than 22.12 this exits with one line before any native addon loads (issue 44).
import '@mailconv/platform/node-guard';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Converter } from '../converter.js';
import { FORMATS } from '../formats/catalogue.js';
import { PROOF_FILE, readProof, type FailedPair, type ProofFile, type ProvenPair } from '../proven-pairs.js';
import { runPairs, type PairToTry } from './matrix/run.js';
import { makeSamples } from './matrix/samples.js';

const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { sources: { type: 'string' }, concurrency: { type: 'string', default: '2' }, out: { type: 'string', default: PROOF_FILE }, quiet: { type: 'boolean', default: false }, 'retry-failed': { type: 'boolean', default: false }, targets: { type: 'string' } },
  });
  const concurrency = Math.max(1, Number(values.concurrency) || 2);
  const only = values.sources ? new Set(values.sources.split(',').map((s) => s.trim()).filter(Boolean)) : undefined;
  const targets = values.targets ? new Set(values.targets.split(',').map((s) => s.trim()).filter(Boolean)) : undefined;
  const old = (only || targets || values['retry-failed']) && existsSync(values.out) ? await readProof(values.out) : undefined;
  const retry = values['retry-failed'] ? new Set(old?.failed.map((f) => `${f.from}>${f.to}`) ?? []) : undefined;
  const started = performance.now();
  const dir = await mkdtemp(join(tmpdir(), 'mailconv-matrix-'));
  const conv = await Converter.create({ workDir: join(dir, 'work'), timeoutMs: 120_000, maxInputPixels: 4_000_000, candidatePairs: true, libreoffice: { instances: concurrency } });
  try {
    const candidates: PairToTry[] = conv.registry.candidatePairs()
      .filter((p) => (!only || only.has(p.from)) && (!targets || targets.has(p.to)) && (!retry || retry.has(`${p.from}>${p.to}`)))
      .map(({ from, to, route }) => ({ from, to, engines: route.steps.map((s) => s.engine), ...(route.steps.length > 1 ? { via: route.steps[0]?.to as string } : {}) }));
    const sources = [...new Set(candidates.map((p) => p.from))];
    process.stdout.write(`matrix: ${candidates.length} candidate pairs from ${sources.length} source formats, ${concurrency} at a time\n`);
    const samples = await makeSamples(conv, sources, join(dir, 'samples'), (line) => process.stdout.write(`  ${line}\n`));
    const noSample = sources.filter((s) => !samples.has(s));
    const tried = candidates.filter((p) => samples.has(p.from));
    const outcomes = await runPairs(conv, tried, samples, join(dir, 'out'), {
      concurrency,
      onDone: (o, done) => {
        if (!o.ok && !values.quiet) process.stdout.write(`  ✗ ${o.failure.from} → ${o.failure.to} (${o.failure.engines.join('>')}): ${o.failure.reason}\n`);
        if (done % 100 === 0) process.stdout.write(`  … ${done}/${tried.length} (${Math.round((performance.now() - started) / 1000)} s)\n`);
      },
    });
    let pairs: ProvenPair[] = outcomes.flatMap((o) => (o.ok ? [o.pair] : []));
    let failed: FailedPair[] = outcomes.flatMap((o) => (o.ok ? [] : [o.failure]));
    // A partial run keeps what the file says about the pairs it did not try.
    if (old) {
      const triedKeys = new Set(tried.map((p) => `${p.from}>${p.to}`));
      // Dropped: what was tried now, and (with --sources) what those sources no longer offer.
      const keep = (p: { from: string; to: string }): boolean =>
        !triedKeys.has(`${p.from}>${p.to}`) && !(only?.has(p.from) && (!targets || targets.has(p.to)) && !values['retry-failed']);
      pairs = [...old.pairs.filter(keep), ...pairs];
      failed = [...old.failed.filter(keep), ...failed];
    }
    const order = new Map(FORMATS.map((f, i) => [f.ext, i]));
    const byCatalogue = (a: { from: string; to: string }, b: { from: string; to: string }): number =>
      (order.get(a.from) ?? 1e9) - (order.get(b.from) ?? 1e9) || (order.get(a.to) ?? 1e9) - (order.get(b.to) ?? 1e9);
    pairs.sort(byCatalogue);
    failed.sort(byCatalogue);
    const duration = (performance.now() - started) / 1000;
    const proof: ProofFile = {
      generated_at: new Date().toISOString(),
      // A partial run reports the last full run's duration (the file's figure is the full matrix).
      duration_s: old ? old.duration_s : Math.round(duration),
      concurrency: old ? old.concurrency : concurrency,
      engines: Object.fromEntries(conv.probes().filter((p) => p.available).map((p) => [p.engine, p.version])),
      // A partial run keeps the sources the full run had no sample for (and did not try now).
      no_sample: [...new Set([...(old?.no_sample.filter((s) => !samples.has(s)) ?? []), ...noSample])],
      totals: (() => {
        // Counted from every candidate the engines offer now, so partial runs never count one twice.
        const accounted = new Set([...pairs, ...failed].map((p) => `${p.from}>${p.to}`));
        const untried = conv.registry.candidatePairs().filter((p) => !accounted.has(`${p.from}>${p.to}`)).length;
        return { candidates: pairs.length + failed.length + untried, proven: pairs.length, failed: failed.length, untried };
      })(),
      pairs,
      failed,
    };
    await writeFile(values.out, serialise(proof));
    // The table follows the package's own proof only (a trial run to another file leaves it).
    if (values.out === PROOF_FILE) await writeFile(join(REPO_ROOT, 'docs', 'conversion-matrix.md'), table(proof));
    const formats = new Set(pairs.flatMap((p) => [p.from, p.to]));
    process.stdout.write(
      `matrix: ${pairs.length} pairs proven, ${failed.length} failed, ${proof.totals.untried} untried (no sample: ${noSample.join(', ') || 'none'}); ` +
      `${formats.size} formats; ${duration.toFixed(0)} s\nwrote ${values.out} and docs/conversion-matrix.md\n`,
    );
  } finally {
    await conv.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** JSON with one pair per line: reviewable diffs. */
function serialise(proof: ProofFile): string {
  const { pairs, failed, ...head } = proof;
  const lines = (xs: readonly object[]): string => xs.map((x) => `    ${JSON.stringify(x)}`).join(',\n');
  const top = JSON.stringify(head, null, 2).replace(/\n}$/, '');
  return `${top},\n  "pairs": [\n${lines(pairs)}\n  ],\n  "failed": [\n${lines(failed)}\n  ]\n}\n`;
}

/** The generated table linked from the README: targets per source, then the failures. */
function table(proof: ProofFile): string {
  const bySource = new Map<string, ProvenPair[]>();
  for (const p of proof.pairs) bySource.set(p.from, [...(bySource.get(p.from) ?? []), p]);
  const formats = new Set(proof.pairs.flatMap((p) => [p.from, p.to]));
  const out = [
    '# Conversion matrix',
    '',
    `Generated by \`npm run matrix\` on ${proof.generated_at.slice(0, 10)} (do not edit by hand). The last full run took ${proof.duration_s} s, ${proof.concurrency} at a time; runs for some sources or targets (\`--sources\`, \`--targets\`) extend it.`,
    `Every pair below was converted from a real sample and its output accepted by an independent tool (see \`packages/converter/proven-pairs.json\` for the engine chain, time, size and check of each).`,
    '',
    `**${formats.size} formats, ${proof.pairs.length} proven pairs**; ${proof.failed.length} candidate pairs failed and are not offered${proof.no_sample.length ? `; no sample for ${proof.no_sample.join(', ')}` : ''}.`,
    '',
    '| source | targets (chains in italics: through the format after →) |',
    '|---|---|',
  ];
  for (const [from, ps] of bySource) {
    out.push(`| ${from} | ${ps.map((p) => (p.via ? `*${p.to}* → ${p.via}` : p.to)).join(', ')} |`);
  }
  out.push('', '## Failed candidate pairs', '', '| pair | engines | reason |', '|---|---|---|');
  for (const f of proof.failed) out.push(`| ${f.from} → ${f.to} | ${f.engines.join(' → ')} | ${f.reason.replace(/\|/g, '\\|').replace(/\n/g, ' ')} |`);
  return `${out.join('\n')}\n`;
}

main().catch((e: unknown) => {
  process.stderr.write(`matrix: ${(e as Error).stack ?? String(e)}\n`);
  process.exitCode = 1;
});
