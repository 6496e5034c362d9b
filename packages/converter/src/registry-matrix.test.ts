// The committed proof (proven-pairs.json, written by `npm run matrix`) and the registry agree,
// and a stratified sample of at least an eighth of the proven pairs is proved again on every
// run (issue 12): every source format, every family, every engine chain at least once, the
// rest drawn at random, by a seed that changes daily (MATRIX_SEED=<n> repeats a run). The
// full matrix takes longer than the suite's budget (~50 min on 2 cores); `npm run matrix`
// re-proves everything. A fifth took 13 minutes of both cores, a third of the whole suite;
// an eighth keeps the suite within its 40 minutes while the other tests grow.
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Converter } from './converter.js';
import { formatInfo } from './formats/catalogue.js';
import { decidedByName, detectFormat } from './formats/detect.js';
import { readProof, type ProofFile, type ProvenPair } from './proven-pairs.js';
import { runPairs } from './testing/matrix/run.js';
import { makeSamples } from './testing/matrix/samples.js';
import { scratchDir } from './testing/tools.js';

/** One pair in this many is re-proved (at least: the strata come first). */
const SAMPLE_DIVISOR = 8;

let dir: string;
let conv: Converter;
let proof: ProofFile;

before(async () => {
  dir = await scratchDir('conv-matrix-');
  proof = await readProof();
  conv = await Converter.create({ workDir: join(dir, 'work'), timeoutMs: 120_000, maxInputPixels: 4_000_000, libreoffice: { instances: 2 } });
});
after(async () => {
  await conv.close();
  await rm(dir, { recursive: true, force: true });
});

const key = (p: { from: string; to: string }): string => `${p.from}>${p.to}`;

test('the registry lists exactly the proven pairs, each along the chain that was proved', async () => {
  const proven = new Map(proof.pairs.map((p) => [key(p), p]));
  assert.equal(proven.size, proof.pairs.length, 'a pair is in the proof twice');
  const listed = conv.registry.pairs();
  // Nothing listed that was not proved (the registry filters by the file: this guards the filter).
  for (const p of listed) assert.ok(proven.has(key(p)), `${key(p)} is listed but not proven`);
  // Nothing proved that is not listed: a proven pair the engines no longer route means the proof is stale.
  const listedKeys = new Set(listed.map(key));
  const stale = proof.pairs.filter((p) => !listedKeys.has(key(p))).map(key);
  assert.deepEqual(stale, [], 'proven but not routable any more: re-run `npm run matrix`');
  // The listing shows the chain that was proved; the routing prefers it too.
  for (const from of new Set(listed.map((p) => p.from))) {
    for (const t of conv.registry.targets(from)) {
      const p = proven.get(key({ from, to: t.format })) as ProvenPair;
      assert.deepEqual(t.engines, p.engines, `${from} → ${t.format}`);
      assert.equal(t.via, p.via, `${from} → ${t.format} via`);
    }
  }
  // The counts the API reports come from the same data.
  assert.equal(proof.totals.proven, proof.pairs.length);
  assert.equal(proof.totals.failed, proof.failed.length);
  assert.ok(listed.length >= 2_500, `${listed.length} pairs`);
});

test('the proof is current: every proven chain is still the one the engines would take first', async () => {
  const candidates = await Converter.create({ workDir: join(dir, 'cand'), candidatePairs: true, libreoffice: { instances: 1 } });
  try {
    const preferred = new Map(candidates.registry.candidatePairs().map((c) => [key(c), c.route.steps.map((s) => s.engine).join('>')]));
    const changed = proof.pairs.filter((p) => preferred.get(key(p)) !== p.engines.join('>')).map((p) => `${key(p)}: proved ${p.engines.join('>')}, now ${preferred.get(key(p)) ?? 'no route'}`);
    assert.deepEqual(changed, [], 're-run `npm run matrix`');
    // Every candidate was tried: proven, failed (with a reason) or without a sample.
    const accounted = new Set([...proof.pairs, ...proof.failed].map(key));
    const untried = [...preferred.keys()].filter((k) => !accounted.has(k) && !proof.no_sample.includes(k.split('>')[0] as string));
    assert.deepEqual(untried, [], 'candidate pairs the proof does not mention: re-run `npm run matrix`');
  } finally {
    await candidates.close();
  }
});

/** A small deterministic PRNG (mulberry32). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test('a stratified eighth of the proven pairs converts again and passes the independent checks', { timeout: 1_800_000 }, async (t) => {
  const seed = Number(process.env.MATRIX_SEED ?? Math.floor(Date.now() / 86_400_000));
  const rand = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const chosen = new Map<string, ProvenPair>();
  const take = (p: ProvenPair): void => {
    chosen.set(key(p), p);
  };
  const strata = new Map<string, ProvenPair[]>();
  const add = (stratum: string, p: ProvenPair): void => {
    strata.set(stratum, [...(strata.get(stratum) ?? []), p]);
  };
  for (const p of proof.pairs) {
    add(`source:${p.from}`, p);
    add(`chain:${p.engines.join('>')}`, p);
    add(`family:${formatInfo(p.from)?.family}>${formatInfo(p.to)?.family}`, p);
    for (const e of p.engines) add(`engine:${e}`, p);
  }
  for (const ps of strata.values()) take(pick(ps));
  // The rest at random (uniformly, slow pairs as likely as fast ones) up to an eighth.
  const wanted = Math.ceil(proof.pairs.length / SAMPLE_DIVISOR);
  const rest = proof.pairs.filter((p) => !chosen.has(key(p)));
  while (chosen.size < wanted && rest.length) take(rest.splice(Math.floor(rand() * rest.length), 1)[0] as ProvenPair);
  const pairs = [...chosen.values()];
  // Samples are made as the runner makes them: by the engines, whether or not that pair is offered.
  const maker = await Converter.create({ workDir: join(dir, 'maker'), timeoutMs: 120_000, maxInputPixels: 4_000_000, candidatePairs: true, libreoffice: { instances: 1 } });
  let samples: Awaited<ReturnType<typeof makeSamples>>;
  try {
    samples = await makeSamples(maker, [...new Set(pairs.map((p) => p.from))], join(dir, 'samples'));
  } finally {
    await maker.close();
  }
  // Every sample is what an upload of it is detected as: with its own name, and from its
  // bytes alone unless the format has no signature (decidedByName).
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
  assert.deepEqual(misdetected, []);
  const started = performance.now();
  const outcomes = await runPairs(conv, pairs, samples, join(dir, 'out'), { concurrency: 2 });
  t.diagnostic(`${pairs.length} of ${proof.pairs.length} pairs re-proved (${strata.size} strata, seed ${seed}) in ${Math.round((performance.now() - started) / 1000)} s`);
  const failures = outcomes.flatMap((o) => (o.ok ? [] : [`${key(o.failure)} (${o.failure.engines.join('>')}): ${o.failure.reason}`]));
  assert.deepEqual(failures, [], `seed ${seed}`);
  assert.ok(pairs.length * SAMPLE_DIVISOR >= proof.pairs.length, `${pairs.length} of ${proof.pairs.length} pairs re-proved (seed ${seed})`);
});
