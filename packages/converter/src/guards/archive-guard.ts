/**
 * Bomb and traversal checks for archives before they are unpacked (issue 12, the zip-bomb
 * guards of issue #13 applied to every archive format). The listing is structured data,
 * never text split at `" -> "` (issue 21: a name holding that string hid a symlink): libarchive,
 * the library bsdtar is built on, reads the archive in the sandbox and writes one JSON object
 * per entry (`python/archive-list.py`; it decompresses tar.gz/bz2/xz streams to list them, so
 * their sizes are real). The listing is held to the entry count, the expanded size and the
 * expansion ratio; an entry with an absolute path or a `..` step, a link pointing out of the
 * archive, or a special file (FIFO, device, socket) refuses the file.
 */
import { lstat, readdir, readlink, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { failed } from '../errors.js';
import { runSandboxed } from '../exec/exec.js';
import { jobLimits, packageFile, type JobContext } from '../engines/engine.js';
import type { InputFacts, InputLimits } from './input-guard.js';

const PYTHON = '/usr/bin/python3';

/** One entry as archive-list.py writes it. */
interface ListedEntry {
  readonly path: string;
  readonly type: 'file' | 'dir' | 'symlink' | 'hardlink' | 'fifo' | 'char' | 'block' | 'socket' | 'other';
  readonly size: number | null;
  readonly link: string | null;
  readonly more?: boolean;
}

/** Whether an archive member path escapes the folder it is unpacked into. */
export function escapes(path: string): boolean {
  return path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path) || path.split(/[\\/]/).includes('..');
}

/**
 * What archivers add beside the files a person put in (macOS resource forks and Finder
 * data, Windows thumbnails): not counted or converted as files of a batch.
 */
export function isArchiverJunk(path: string): boolean {
  const parts = path.split(/[\\/]/).filter((p) => p !== '' && p !== '.');
  const name = parts[parts.length - 1] ?? '';
  return parts[0] === '__MACOSX' || name === '.DS_Store' || name === 'Thumbs.db' || name === 'desktop.ini' || name.startsWith('._');
}

/** Checks an archive's listing against `limits`; throws `conversion_failed` naming the limit. */
export async function inspectArchive(path: string, ext: string, limits: InputLimits, job: JobContext): Promise<InputFacts> {
  const script = packageFile('python/archive-list.py');
  const r = await runSandboxed(PYTHON, ['-I', script, path, String(limits.maxArchiveEntries)], {
    cwd: job.dir,
    timeoutMs: Math.min(job.timeoutMs, 60_000),
    ...jobLimits(job, 512 * 1024 ** 2),
    readOnly: [dirname(script)],
    env: { PYTHONDONTWRITEBYTECODE: '1' },
    // ~100 bytes an entry: the entry cap with room; past it the listing is cut and refused below.
    maxStdoutBytes: Math.max(1024 ** 2, limits.maxArchiveEntries * 400),
    ...(job.signal ? { signal: job.signal } : {}),
  });
  if (r.stdoutOverflow) throw failed(`The ${ext} file holds more than ${limits.maxArchiveEntries} entries, over what a conversion accepts.`);
  if (r.timedOut) throw failed(`The ${ext} file takes too long to list; it was stopped.`, 'archive-list timed out');
  if (r.exitCode !== 0) throw failed(`The ${ext} file is damaged or not an archive.`, `archive-list exit ${r.exitCode}: ${r.stderr.slice(-300)}`);
  const entries: ListedEntry[] = [];
  for (const line of r.stdout.toString('utf8').split('\n')) {
    if (line === '') continue;
    let entry: ListedEntry;
    try {
      entry = JSON.parse(line) as ListedEntry;
    } catch {
      throw failed(`The ${ext} file has an entry that cannot be listed.`, `unparsed listing line: ${line.slice(0, 200)}`);
    }
    if (entry.more) throw failed(`The ${ext} file holds more than ${limits.maxArchiveEntries} entries, over what a conversion accepts.`);
    entries.push(entry);
  }
  let expanded = 0;
  let files = 0;
  let links = 0;
  for (const entry of entries) {
    const isLink = entry.type === 'symlink' || entry.type === 'hardlink';
    if (escapes(entry.path) || (isLink && (entry.link === null || escapes(entry.link)))) {
      throw failed(`The ${ext} file has an entry that points outside the archive (${isLink ? 'a link' : 'an absolute or ../ path'}); such files are refused.`);
    }
    if (!['file', 'dir', 'symlink', 'hardlink'].includes(entry.type)) {
      throw failed(`The ${ext} file holds a special file (a FIFO, device or socket); such files are refused.`, `entry type ${entry.type}`);
    }
    expanded += entry.size ?? 0;
    if (isLink) links += 1;
    else if (entry.type === 'file' && !isArchiverJunk(entry.path)) files += 1;
  }
  if (!entries.length) throw failed(`The ${ext} file is empty: there is nothing to repack.`);
  if (expanded > limits.maxArchiveBytes) throw failed(`The ${ext} file expands to more than ${limits.maxArchiveBytes} bytes, over what a conversion accepts.`);
  const { size } = await stat(path);
  if (expanded > 50 * 1024 ** 2 && expanded / Math.max(1, size) > limits.maxArchiveRatio) {
    throw failed(`The ${ext} file expands ${Math.round(expanded / size)} times (${expanded} bytes from ${size}), over the ratio of ${limits.maxArchiveRatio} a conversion accepts.`);
  }
  return { entries: entries.length, expanded_bytes: expanded, files, links };
}

/**
 * The tree an archive was unpacked into, checked as the engine left it (a second look,
 * after the listing's): only folders, regular files and symlinks that stay inside it.
 * Reads names and link targets without following anything.
 */
export async function checkUnpackedTree(root: string, ext: string, maxEntries: number): Promise<void> {
  let seen = 0;
  const walk = async (dir: string, depth: number): Promise<void> => {
    for (const name of await readdir(dir)) {
      if (++seen > maxEntries) throw failed(`The ${ext} file holds more than ${maxEntries} entries, over what a conversion accepts.`);
      const path = join(dir, name);
      const st = await lstat(path);
      if (st.isDirectory()) await walk(path, depth + 1);
      else if (st.isSymbolicLink()) {
        const target = await readlink(path);
        // `depth` folders deep: a relative link may climb that many steps and no more.
        const climbs = target.split('/').filter((s) => s === '..').length;
        if (target.startsWith('/') || climbs > depth) throw failed(`The ${ext} file has an entry that points outside the archive (a link); such files are refused.`, `unpacked link ${name} -> ${target.slice(0, 100)}`);
      } else if (!st.isFile()) throw failed(`The ${ext} file holds a special file (a FIFO, device or socket); such files are refused.`, `unpacked ${name}`);
    }
  };
  await walk(root, 0);
}
