/**
 * Runs one of the package's pikepdf scripts (`python/*.py`, Debian's python3-pikepdf on
 * qpdf) in the engine sandbox under the job's limits: the PDF operations that change a
 * PDF's objects without re-distilling its pages (metadata, PDF/UA's catalog entries).
 */
import { dirname } from 'node:path';
import { jobLimits, packageFile, type JobContext } from './engines/engine.js';
import { runSandboxed, type ExecResult } from './exec/exec.js';

/** Runs `python/<name>` with `args` (Debian's Python, isolated, at most 60 s and 1 GiB). */
export function runPikepdfScript(name: string, args: readonly string[], job: JobContext): Promise<ExecResult> {
  const script = packageFile(`python/${name}`);
  return runSandboxed('/usr/bin/python3', ['-I', script, ...args], {
    cwd: job.dir,
    timeoutMs: Math.min(job.timeoutMs, 60_000),
    maxFileBytes: job.maxFileBytes,
    ...jobLimits(job, 1024 ** 3),
    readOnly: [dirname(script)],
    env: { PYTHONDONTWRITEBYTECODE: '1' },
    ...(job.signal ? { signal: job.signal } : {}),
  });
}
