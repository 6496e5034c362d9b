/**
 * The matrix: converts every sample of each source along each candidate pair's preferred
 * route and judges the output with {@link validate}. Pairs run `concurrency` at a time (the
 * engines' own processes do the work; two fit the two cores).
 */
import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Converter } from '../../converter.js';
import { formatInfo } from '../../formats/catalogue.js';
import type { FailedPair, ProvenPair } from '../../proven-pairs.js';
import type { Sample } from './samples.js';
import { canValidate, validate } from './validate.js';

/** A pair to try, with the chain the registry prefers for it. */
export interface PairToTry {
  readonly from: string;
  readonly to: string;
  readonly engines: readonly string[];
  readonly via?: string;
}

/** What one pair came to. */
export type PairOutcome = { ok: true; pair: ProvenPair } | { ok: false; failure: FailedPair };

/** Tries `pairs` with their samples; `onDone` sees each outcome as it lands (progress). */
export async function runPairs(
  conv: Converter,
  pairs: readonly PairToTry[],
  samples: ReadonlyMap<string, readonly Sample[]>,
  dir: string,
  opts: { concurrency: number; onDone?: (o: PairOutcome, done: number) => void },
): Promise<PairOutcome[]> {
  await mkdir(dir, { recursive: true });
  const outcomes: PairOutcome[] = new Array<PairOutcome>(pairs.length);
  let next = 0;
  let done = 0;
  const worker = async (): Promise<void> => {
    for (;;) {
      const i = next++;
      if (i >= pairs.length) return;
      const p = pairs[i] as PairToTry;
      // A pair-shaped sample (`csv>vcf`: a contact table) stands in for the source's own.
      const outcome = await tryPair(conv, p, samples.get(`${p.from}>${p.to}`) ?? samples.get(p.from) ?? [], join(dir, String(i)));
      outcomes[i] = outcome;
      opts.onDone?.(outcome, ++done);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.concurrency) }, worker));
  return outcomes;
}

async function tryPair(conv: Converter, p: PairToTry, samples: readonly Sample[], dir: string): Promise<PairOutcome> {
  const fail = (reason: string): PairOutcome => ({ ok: false, failure: { from: p.from, to: p.to, engines: p.engines, reason } });
  if (!samples.length) return fail('no sample');
  if (!canValidate(p.to)) return fail(`no independent check for ${p.to}`);
  const family = formatInfo(p.to)?.family ?? '';
  let ms = 0;
  let bytes = 0;
  let check = '';
  try {
    for (const [n, sample] of samples.entries()) {
      const out = join(dir, `out-${n}.${p.to}`);
      const t0 = performance.now();
      const r = await conv.convert({ inputPath: sample.path, sourceFormat: p.from, targetFormat: p.to, outputPath: out });
      const took = performance.now() - t0;
      if (!r.ok) return fail(`${sample.origin}: ${r.error.code}: ${(r.error.detail ?? r.error.message).slice(0, 240)}`);
      // The preferred route failed and a fallback did the work: prove that chain, not this one.
      const ran = r.engines.filter((e) => e !== 'qpdf' || p.engines.includes('qpdf'));
      if (ran.join('>') !== p.engines.join('>') && !(ran.length === p.engines.length && ran.every((e, i) => e === p.engines[i] || e.startsWith(`${p.engines[i]}-`)))) {
        return fail(`${sample.origin}: ran ${ran.join('>')} instead of ${p.engines.join('>')}`);
      }
      const v = await validate(out, p.to, family, sample.marker);
      if (!v.ok) return fail(`${sample.origin}: ${v.reason}`);
      ms = Math.max(ms, took);
      if (n === 0) {
        bytes = (await stat(out)).size;
        check = v.check;
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return { ok: true, pair: { from: p.from, to: p.to, engines: p.engines, ...(p.via ? { via: p.via } : {}), ms: Math.round(ms), bytes, check } };
}
