/**
 * The committed proof of every listed pair (`proven-pairs.json`, written by `npm run matrix`):
 * a pair is listed and routed only when a real sample was converted along the recorded engine
 * chain and an independent tool accepted the output (issue 12).
 */
import { readFile } from 'node:fs/promises';
import { packageFile } from './engines/engine.js';
import type { ProvenPairs } from './registry.js';

/** One proven pair. */
export interface ProvenPair {
  readonly from: string;
  readonly to: string;
  /** Engines of the route that was proved, in order (more than one = a chain). */
  readonly engines: readonly string[];
  /** The intermediate format of a chain. */
  readonly via?: string;
  /** Conversion time of the slowest sample, in ms (noisy: a shared machine). */
  readonly ms: number;
  /** Output size of the generated sample, in bytes. */
  readonly bytes: number;
  /** What the independent tool said (e.g. `pdfinfo: 1 page`, `file: image/png`). */
  readonly check: string;
}

/** A pair that was tried and failed, with the reason. */
export interface FailedPair {
  readonly from: string;
  readonly to: string;
  readonly engines: readonly string[];
  readonly reason: string;
}

/** The file's shape. */
export interface ProofFile {
  readonly generated_at: string;
  readonly duration_s: number;
  readonly concurrency: number;
  /** Engine versions at proof time. */
  readonly engines: Readonly<Record<string, string | null>>;
  /** Source formats without a sample (their pairs were not tried). */
  readonly no_sample: readonly string[];
  readonly totals: { readonly candidates: number; readonly proven: number; readonly failed: number; readonly untried: number };
  readonly pairs: readonly ProvenPair[];
  readonly failed: readonly FailedPair[];
}

/** Where the package keeps its proof. */
export const PROOF_FILE = packageFile('proven-pairs.json');

/** Reads a proof file (the package's own by default). */
export async function readProof(path: string = PROOF_FILE): Promise<ProofFile> {
  return JSON.parse(await readFile(path, 'utf8')) as ProofFile;
}

/** The proof as the registry uses it: pair key → engine chain. */
export function provenPairs(proof: Pick<ProofFile, 'pairs'>): ProvenPairs {
  return new Map(proof.pairs.map((p) => [`${p.from}>${p.to}`, p.engines]));
}
