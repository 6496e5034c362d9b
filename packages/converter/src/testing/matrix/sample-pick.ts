/**
 * The stratified sample of proven pairs that is converted again (issue 12; issue 44): by the
 * suite (registry-matrix.test.ts, a fixed seed) and by `npm run matrix:sample` (any seed, any
 * size). One implementation, so a seed names the same pairs in both: the same seed and the
 * same proof always pick the same sample.
 *
 * First the strata: every source format, every pair of families, every engine chain and
 * every engine at least once — the rarest strata first, each not yet covered by a pair taken
 * for another getting one of its pairs at random, so the strata need few pairs (about 310 of
 * 8,500; 210 of them the sources). Then, up to `fraction` of all pairs, pairs at random
 * (uniformly: slow pairs as likely as fast ones).
 */
import { formatInfo } from '../../formats/catalogue.js';
import { detectFormat, decidedByName } from '../../formats/detect.js';
import type { ProvenPair } from '../../proven-pairs.js';
import type { Sample } from './samples.js';

/** The strata a pair stands for. */
export function strataOf(p: ProvenPair): string[] {
  return [
    `source:${p.from}`,
    `chain:${p.engines.join('>')}`,
    `family:${formatInfo(p.from)?.family}>${formatInfo(p.to)?.family}`,
    ...p.engines.map((e) => `engine:${e}`),
  ];
}

/** A small deterministic PRNG (mulberry32): numbers in [0, 1). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What {@link pickSample} chose. */
export interface PickedSample {
  /** The pairs, in the proof's order. */
  readonly pairs: ProvenPair[];
  /** How many strata the proof has (every one is covered). */
  readonly strata: number;
  /** How many of `pairs` were taken for the strata (the rest were drawn at random). */
  readonly stratified: number;
}

/**
 * Every stratum of `proven` covered, then random pairs until `fraction` of them (0: the
 * strata alone; 1: every pair). Deterministic for a seed and a proof.
 */
export function pickSample(proven: readonly ProvenPair[], options: { seed: number; fraction?: number }): PickedSample {
  const fraction = Math.min(1, Math.max(0, options.fraction ?? 0));
  const rand = prng(options.seed);
  const strata = new Map<string, ProvenPair[]>();
  for (const p of proven) for (const s of strataOf(p)) strata.set(s, [...(strata.get(s) ?? []), p]);
  const chosen = new Set<ProvenPair>();
  const covered = new Set<string>();
  const take = (p: ProvenPair): void => {
    chosen.add(p);
    for (const s of strataOf(p)) covered.add(s);
  };
  // Rarest first: a chain found in two pairs decides more than a source with eighty.
  const order = [...strata.entries()].sort(([a, x], [b, y]) => x.length - y.length || (a < b ? -1 : a > b ? 1 : 0));
  for (const [stratum, ps] of order) if (!covered.has(stratum)) take(ps[Math.floor(rand() * ps.length)] as ProvenPair);
  const stratified = chosen.size;
  const wanted = Math.ceil(proven.length * fraction);
  const rest = proven.filter((p) => !chosen.has(p));
  while (chosen.size < wanted && rest.length) take(rest.splice(Math.floor(rand() * rest.length), 1)[0] as ProvenPair);
  return { pairs: proven.filter((p) => chosen.has(p)), strata: strata.size, stratified };
}

/**
 * Samples that are not what an upload of them is detected as, with its own name, and from
 * its bytes alone unless the format has no signature ({@link decidedByName}): a pair proved
 * from such a sample proves nothing about an upload.
 */
export async function misdetectedSamples(samples: ReadonlyMap<string, readonly Sample[]>): Promise<string[]> {
  const misdetected: string[] = [];
  for (const [key, list] of samples) {
    // `csv>vcf`: a sample made for one pair only, of the format before the arrow.
    const ext = key.split('>')[0] as string;
    for (const s of list) {
      const named = (await detectFormat(s.path, `upload.${ext}`))?.ext;
      const blind = decidedByName(ext) ? ext : (await detectFormat(s.path, 'upload.bin'))?.ext;
      if (named !== ext || blind !== ext) misdetected.push(`${key} (${s.origin}): named ${named}, by bytes ${blind}`);
    }
  }
  return misdetected;
}
