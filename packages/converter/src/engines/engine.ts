/**
 * What every engine is: a name, what it reads and writes, a probe of its binaries, and a
 * `convert` for one step (one input file to one output file in the job's folder).
 */
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { failed, type ConversionError } from '../errors.js';
import { installHint } from './engine-packages.js';
import { DEFAULT_MAX_MEMORY_BYTES, lastLine, ownForSandbox, runSandboxed, type ExecResult } from '../exec/exec.js';
import type { SecurityEvent } from '../guards/output-guard.js';
import type { ConversionOptions } from '../options.js';

/** An engine's start-up probe, as `/readyz` reports it. */
export interface EngineProbe {
  readonly engine: string;
  readonly available: boolean;
  readonly version: string | null;
  /** Binaries (or modules) that are missing; the engine is disabled when any is. */
  readonly missing: readonly string[];
  /** Everything the probe looked for: paths, and npm modules as `npm:<name>` (keys of ENGINE_PACKAGES). */
  readonly requires: readonly string[];
  readonly warning?: string;
}

/** What one of a remote page's sub-resources answered (the service fetched it through its egress guard). */
export type RemoteAnswer =
  | { readonly ok: true; readonly status: number; readonly headers: Readonly<Record<string, string>>; readonly body: Buffer }
  | { readonly ok: false; readonly reason: string };

/**
 * A page that came from a URL (issue 22): the browser opens it at its own address so that its
 * relative links resolve, and asks `fetch` for every http(s) sub-resource. The engine never
 * reaches a network itself: `fetch` is the service's, behind its egress guard and budgets.
 */
export interface RemotePage {
  /** The address the page was fetched from, after redirects. */
  readonly url: string;
  readonly fetch: (url: string, signal: AbortSignal) => Promise<RemoteAnswer>;
}

/** Per-job settings every step shares. */
export interface JobContext {
  /** The job's own folder (working directory and HOME of every process). */
  readonly dir: string;
  readonly timeoutMs: number;
  /** RLIMIT_FSIZE for engine processes. */
  readonly maxFileBytes: number;
  /** Images: largest decoded pixel count (pixel-bomb guard). */
  readonly maxInputPixels: number;
  /** Memory cap of every engine process (RLIMIT_DATA); default 2 GiB. */
  readonly maxMemoryBytes?: number;
  /** CPU-time cap of every engine process, in seconds; default the time-out's seconds. */
  readonly maxCpuSeconds?: number;
  readonly signal?: AbortSignal;
  /** Told when an engine leaves a file the service refuses to read (guards/output-guard.ts). */
  readonly onSecurityEvent?: (event: SecurityEvent) => void;
  /** The source is a page fetched from a URL: its sub-resources come through the service (issue 22). */
  readonly remotePage?: RemotePage;
  /** What the engines counted for the record: requests a page made that were refused (issue 22). */
  readonly counts?: { blockedRequests: number; redactedAreas?: number };
}

/** One step of a conversion. */
export interface Step {
  readonly input: string;
  readonly from: string;
  readonly to: string;
  readonly output: string;
  readonly options: ConversionOptions;
  /** The quality to use for this attempt (1–100), from the options or the size ladder. */
  readonly quality: number;
  /** True when the caller set a quality, a preset or a size cap: lossless formats may then be quantised. */
  readonly qualityRequested: boolean;
  readonly job: JobContext;
}

/** A conversion engine. */
export interface Engine {
  readonly name: string;
  /** Extensions it reads. */
  readonly reads: readonly string[];
  /** Extensions it writes. */
  readonly writes: readonly string[];
  /** Whether it does this pair (default: every non-identity pair of reads × writes). */
  supports?(from: string, to: string): boolean;
  /**
   * Its pairs are never a hop of a chain (issue 25): it describes or takes apart the very file
   * it is given (a PDF's facts, its images), which a document made into one on the way is not.
   */
  readonly directOnly?: boolean;
  /** Whether a lower `quality` makes a smaller output of this target (for `max_output_bytes`). */
  tradesQualityForSize(to: string): boolean;
  probe(): Promise<EngineProbe>;
  /** Resolves with the name of the variant that did the work when it is not the engine's usual one (a fallback). */
  convert(step: Step): Promise<string | undefined | void>;
  /** Stops long-lived processes. */
  close?(): Promise<void>;
}

/** Files shipped with the package (policy.xml, the UNO bridge, pandoc's reference.odt). */
export function packageFile(rel: string): string {
  // dist/engines/engine.js → package root
  return fileURLToPath(new URL(`../../${rel}`, import.meta.url));
}

/** Runs an engine binary for a step; throws `conversion_failed` on a non-zero exit, time-out or abort. */
export async function runStep(
  step: Step,
  command: string,
  args: readonly string[],
  extra: { env?: Record<string, string>; maxStdoutBytes?: number; maxMemoryBytes?: number; readOnly?: readonly string[]; okExitCodes?: readonly number[] } = {},
): Promise<ExecResult> {
  const limits = jobLimits(step.job, extra.maxMemoryBytes);
  const r = await runSandboxed(command, args, {
    cwd: step.job.dir,
    timeoutMs: step.job.timeoutMs,
    maxFileBytes: step.job.maxFileBytes,
    ...limits,
    ...(step.job.signal ? { signal: step.job.signal } : {}),
    ...(extra.env ? { env: extra.env } : {}),
    ...(extra.maxStdoutBytes ? { maxStdoutBytes: extra.maxStdoutBytes } : {}),
    ...(extra.readOnly ? { readOnly: extra.readOnly } : {}),
  });
  const name = command.split('/').pop() ?? 'engine';
  if (!(r.exitCode !== null && (r.exitCode === 0 || extra.okExitCodes?.includes(r.exitCode))) || r.timedOut || r.aborted) {
    throw runFailure(r, name, `The ${step.from} file could not be converted to ${step.to}.`, limits);
  }
  return r;
}

/**
 * A new folder in the job folder that the sandboxed engines may write (`name-XXXXXX`: a second
 * attempt of the same step, a fallback route or a lower quality, gets a folder of its own).
 */
export async function sandboxFolder(job: JobContext, name: string): Promise<string> {
  const dir = await mkdtemp(join(job.dir, `${name}-`));
  await ownForSandbox(dir);
  return dir;
}

/** The memory and CPU caps of a job's engine runs (the lower of the job's and the engine's memory cap). */
export function jobLimits(job: JobContext, engineMemory?: number): { maxMemoryBytes: number; maxCpuSeconds: number } {
  const caps = [job.maxMemoryBytes, engineMemory].filter((n): n is number => typeof n === 'number' && n > 0);
  return {
    maxMemoryBytes: caps.length ? Math.min(...caps) : DEFAULT_MAX_MEMORY_BYTES,
    maxCpuSeconds: job.maxCpuSeconds ?? Math.ceil(job.timeoutMs / 1000),
  };
}

/** Out-of-memory as engines report it: C++ `bad_alloc`, glibc, GHC's RTS, Python, Ghostscript, Rust (Typst). */
const OUT_OF_MEMORY = /bad_alloc|memory allocation of \d+ bytes failed|out of memory|cannot allocate|memory exhausted|unable to commit|MemoryError|heap overflow|failed to allocate|VMerror/i;

/**
 * A failed run as a {@link ConversionError} with a message that names the cause (cancelled,
 * time-out, memory cap, CPU cap) and no path or version; the engine's own words go to
 * `detail` (logs only).
 */
export function runFailure(r: ExecResult, name: string, fallback: string, limits: { maxMemoryBytes: number; maxCpuSeconds: number }): ConversionError {
  const detail = `${name} exit ${r.exitCode ?? r.signal}: ${lastLine(r.stderr)}`;
  if (r.aborted) return failed('The conversion was cancelled.', `${name} aborted`);
  if (r.timedOut) return failed('The conversion took too long and was stopped.', `${name} timed out after ${r.durationMs} ms`);
  if (OUT_OF_MEMORY.test(r.stderr)) {
    return failed(`The file needs more memory to convert than the ${Math.round(limits.maxMemoryBytes / 1024 ** 2)} MiB allowed per conversion; it was stopped.`, detail);
  }
  // 128 + SIGXCPU (24) or SIGKILL (9): RLIMIT_CPU (the run was not timed out nor cancelled by us).
  if (r.exitCode === 152 || r.exitCode === 137 || r.signal === 'SIGXCPU' || r.signal === 'SIGKILL') {
    return failed(`The file needs more processing than the ${limits.maxCpuSeconds} s of CPU time allowed per conversion; it was stopped.`, detail);
  }
  return failed(fallback, detail);
}

/** Probes binaries: all must exist; the version comes from the first one's output. */
/**
 * A number a tool printed about a hostile file (ffprobe's JSON gives numbers and numeric
 * strings): finite and above 0, else undefined.
 */
export function positiveNumber(v: unknown): number | undefined {
  const n = typeof v === 'number' || typeof v === 'string' ? Number(v) : NaN;
  return Number.isFinite(n) && n > 0 ? n : undefined;
}

export async function probeBinaries(
  engine: string,
  binaries: readonly string[],
  versionArgs: readonly string[],
  versionPattern: RegExp,
): Promise<EngineProbe> {
  const { access, constants } = await import('node:fs/promises');
  const missing: string[] = [];
  for (const b of binaries) {
    try {
      await access(b, constants.X_OK);
    } catch {
      missing.push(b);
    }
  }
  if (missing.length) return missingProbe(engine, binaries, missing);
  const r = await runSandboxed(binaries[0] as string, versionArgs, { cwd: '/', timeoutMs: 15_000 });
  const text = `${r.stdout.toString('utf8')}\n${r.stderr}`;
  const m = versionPattern.exec(text);
  return { engine, available: true, version: m?.[1] ?? null, missing: [], requires: binaries };
}

/** A disabled engine's probe: what is missing and which package brings it (engine-packages.ts). */
export function missingProbe(engine: string, requires: readonly string[], missing: readonly string[], why = `missing ${missing.join(', ')}`): EngineProbe {
  const hint = installHint(missing);
  return { engine, available: false, version: null, missing, requires, warning: `${engine} disabled: ${why}${hint ? `; ${hint}` : ''}` };
}
