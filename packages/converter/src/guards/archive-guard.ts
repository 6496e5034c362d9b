/**
 * Bomb and traversal checks for archives before they are unpacked (issue 12, the zip-bomb
 * guards of issue #13 applied to every archive format): the listing `bsdtar -tv` gives
 * (libarchive decompresses tar.gz/bz2/xz streams to list them, so their sizes are real) is
 * held to the entry count, the expanded size and the expansion ratio; an entry with an
 * absolute path or a `..` step, or a link pointing out of the archive, refuses the file.
 */
import { stat } from 'node:fs/promises';
import { failed } from '../errors.js';
import { runSandboxed } from '../exec/exec.js';
import { jobLimits, type JobContext } from '../engines/engine.js';
import type { InputFacts, InputLimits } from './input-guard.js';

const BSDTAR = '/usr/bin/bsdtar';
/** `mode links owner group size month day time-or-year name`, as bsdtar's verbose listing prints it. */
const LINE = /^(\S)\S{9}\S?\s+\d+\s+\S+\s+\S+\s+(\d+)\s+\S{3}\s+\d{1,2}\s+[\d:]{4,5}\s(.*)$/;

/** Whether an archive member path escapes the folder it is unpacked into. */
export function escapes(path: string): boolean {
  return path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path) || path.split(/[\\/]/).includes('..');
}

/** Checks an archive's listing against `limits`; throws `conversion_failed` naming the limit. */
export async function inspectArchive(path: string, ext: string, limits: InputLimits, job: JobContext): Promise<InputFacts> {
  const r = await runSandboxed(BSDTAR, ['-tvf', path], {
    cwd: job.dir,
    timeoutMs: Math.min(job.timeoutMs, 60_000),
    ...jobLimits(job, 512 * 1024 ** 2),
    // ~100 bytes a line: the entry cap with room; past it the listing is cut and refused below.
    maxStdoutBytes: Math.max(1024 ** 2, limits.maxArchiveEntries * 400),
    ...(job.signal ? { signal: job.signal } : {}),
  });
  if (r.stdoutOverflow) throw failed(`The ${ext} file holds more than ${limits.maxArchiveEntries} entries, over what a conversion accepts.`);
  if (r.timedOut) throw failed(`The ${ext} file takes too long to list; it was stopped.`, 'bsdtar -t timed out');
  if (r.exitCode !== 0) throw failed(`The ${ext} file is damaged or not an archive.`, `bsdtar -t exit ${r.exitCode}: ${r.stderr.slice(-300)}`);
  const lines = r.stdout.toString('utf8').split('\n').filter((l) => l !== '');
  let expanded = 0;
  for (const line of lines) {
    const m = LINE.exec(line);
    if (!m) throw failed(`The ${ext} file has an entry that cannot be listed.`, `unparsed listing line: ${line.slice(0, 200)}`);
    const [, type, size, rest] = m as unknown as [string, string, string, string];
    const [name, target] = type === 'l' ? rest.split(' -> ') : type === 'h' ? rest.split(' link to ') : [rest];
    if (escapes(name ?? '') || (target !== undefined && (type === 'h' ? escapes(target) : target.startsWith('/') || escapes(target)))) {
      throw failed(`The ${ext} file has an entry that points outside the archive (${type === 'l' || type === 'h' ? 'a link' : 'an absolute or ../ path'}); such files are refused.`);
    }
    expanded += Number(size);
  }
  if (lines.length > limits.maxArchiveEntries) throw failed(`The ${ext} file holds more than ${limits.maxArchiveEntries} entries, over what a conversion accepts.`);
  if (!lines.length) throw failed(`The ${ext} file is empty: there is nothing to repack.`);
  if (expanded > limits.maxArchiveBytes) throw failed(`The ${ext} file expands to more than ${limits.maxArchiveBytes} bytes, over what a conversion accepts.`);
  const { size } = await stat(path);
  if (expanded > 50 * 1024 ** 2 && expanded / Math.max(1, size) > limits.maxArchiveRatio) {
    throw failed(`The ${ext} file expands ${Math.round(expanded / size)} times (${expanded} bytes from ${size}), over the ratio of ${limits.maxArchiveRatio} a conversion accepts.`);
  }
  return { entries: lines.length, expanded_bytes: expanded };
}
