// The process id of a running `npm start`, kept in a file so that `npm stop` can end it
// (issue #30). `MAILCONV_PID_FILE` names the file; by default `data/npm-start.pid`.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ROOT } from './ensure.mjs';

export function pidFile(env = process.env) {
  return resolve(ROOT, env.MAILCONV_PID_FILE || 'data/npm-start.pid');
}

/**
 * The pid of the `npm start` the file names, if that process is alive and is one (a pid left
 * by a crash may since belong to another program, which is then left alone); else null.
 */
export function runningStart(file = pidFile()) {
  if (!existsSync(file)) return null;
  const pid = Number(readFileSync(file, 'utf8').trim());
  if (!Number.isSafeInteger(pid) || pid <= 1) return null;
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return args.some((arg) => arg.endsWith('scripts/start.mjs')) ? pid : null;
  } catch {
    return null; // no such process
  }
}

/** Records this process as the running start; the file goes when the process exits. */
export function writePidFile(file = pidFile()) {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${process.pid}\n`);
  process.on('exit', () => {
    // Only our own: a later start may have written its pid meanwhile.
    if (existsSync(file) && readFileSync(file, 'utf8').trim() === String(process.pid)) rmSync(file, { force: true });
  });
}
