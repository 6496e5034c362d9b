import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { answerProblems } from './answer-problems.js';

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** A service process started by {@link startProcess}, with the JSON log line that said it was ready. */
export interface StartedProcess {
  child: ChildProcess;
  ready: Record<string, unknown>;
  /** Its latest stdout lines (at most 500), for a failing test to show what the process said. */
  lines: string[];
}

/** `--import` of the answer guard when this test process runs under it (`npm test`), else nothing. */
function answerGuardArgs(): string[] {
  return process.execArgv.filter((arg) => arg.startsWith('--import=') && arg.endsWith('/answer-guard.js'));
}

/**
 * Starts `node file` with `env` added to this process's environment and resolves once it
 * logged a JSON line with `event: "ready"` on stdout (its stderr goes to the test's).
 *
 * Under `npm test` the process loads the answer guard as the test does: every answer it gives
 * is checked against its OpenAPI document, and each mismatch it reports (a JSON line with
 * `event: "answer_mismatch"`) joins this test process's list, which fails the file.
 */
export async function startProcess(file: string, env: Record<string, string>): Promise<StartedProcess> {
  const guard = answerGuardArgs();
  const child = spawn(process.execPath, [...guard, file], { env: { ...process.env, ...(guard.length > 0 ? { MAILCONV_ANSWER_GUARD_REPORT: 'stdout' } : {}), ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  const lines: string[] = [];
  const ready = await new Promise<Record<string, unknown>>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line);
      if (lines.length > 500) lines.shift();
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      if (entry.event === 'ready') resolve(entry);
      if (entry.event === 'answer_mismatch' && Array.isArray(entry.problems)) answerProblems.push(...entry.problems.map((p) => `${file}: ${String(p)}`));
    });
    child.once('exit', (code) => reject(new Error(`${file} exited early with ${code}`)));
  });
  return { child, ready, lines };
}

/** Sends `signal` and resolves with the exit code once the process is gone. */
export async function stopProcess(child: ChildProcess, signal: NodeJS.Signals): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill(signal);
  return exited;
}
