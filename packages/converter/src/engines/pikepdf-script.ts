/**
 * Runs one of the package's Python scripts (`python/*.py`, pikepdf on Debian's python3) in the
 * engine sandbox with the job's limits: the way every pikepdf step (title and author, the
 * signature's preparation) is started.
 */
import { dirname } from 'node:path';
import { runSandboxed, type ExecResult } from '../exec/exec.js';
import { jobLimits, packageFile, type JobContext } from './engine.js';

/**
 * Runs `python/<name>` with `args` in the job folder, `input` on its standard input (values
 * that must not show in a process list); answers the run (the caller judges its exit code).
 */
export function runPikepdfScript(name: string, args: readonly string[], job: JobContext, input?: string): Promise<ExecResult> {
  const script = packageFile(`python/${name}`);
  return runSandboxed('/usr/bin/python3', ['-I', script, ...args], {
    ...(input !== undefined ? { input } : {}),
    cwd: job.dir,
    timeoutMs: Math.min(job.timeoutMs, 60_000),
    maxFileBytes: job.maxFileBytes,
    ...jobLimits(job, 1024 ** 3),
    readOnly: [dirname(script)],
    env: { PYTHONDONTWRITEBYTECODE: '1' },
    ...(job.signal ? { signal: job.signal } : {}),
  });
}
