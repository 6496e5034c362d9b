/**
 * What an engine writes is hostile input (issue 21). The sandbox keeps an engine from
 * reading the host, but the service reads the engine's files afterwards with its own,
 * wider rights: a compromised engine that leaves a symlink to the database, a hard link,
 * a FIFO (a read that never ends) or a device node as its "output" would make the service
 * read them for it. Every file the service reads after an engine ran goes through here:
 *
 * - the path must lie inside the job folder (no `..`, no absolute escape);
 * - no folder on the way from the job folder to it may be a symlink;
 * - it is opened with `O_NOFOLLOW | O_NONBLOCK` and checked on the open descriptor: a
 *   regular file, one link, the same inode `lstat` saw, `/proc/self/fd` resolving to the
 *   path asked for, and owned by the sandbox's user or, for what the service wrote itself
 *   (in-process engines: sharp, the QOI and data workers, text the service assembles), by the
 *   service, as the service left it ({@link serviceFileUntouched}).
 *
 * Anything else fails the conversion with `conversion_failed` (the client learns nothing
 * more) and is reported once as a security event through the job's `onSecurityEvent`.
 */
import { constants as fs, type Stats } from 'node:fs';
import { lstat, open, readlink, realpath, rename, rm, type FileHandle } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ConversionError, failed } from '../errors.js';
import { sandboxCapabilities } from '../exec/exec.js';

/** Why an engine's file was refused. */
export type OutputViolation = 'escape' | 'symlink' | 'hardlink' | 'special_file' | 'foreign_owner' | 'swapped';

/** One refused file, as the service logs and counts it (no content, no client data). */
export interface SecurityEvent {
  readonly kind: OutputViolation;
  /** The engine whose file it was (`qpdf`, `fontforge`, …). */
  readonly engine: string;
  /** The file's path relative to the job folder (or the raw path when it escapes). */
  readonly path: string;
  readonly detail: string;
}

/** The part of a job the guard needs. */
export interface GuardedJob {
  readonly dir: string;
  readonly onSecurityEvent?: (event: SecurityEvent) => void;
}

/** A refused engine file: `conversion_failed` to the client, never retried on another route. */
export class UnsafeOutputError extends ConversionError {
  constructor(readonly event: SecurityEvent) {
    super('conversion_failed', 'The conversion produced an output the service does not accept; it was stopped.', {
      detail: `security: ${event.engine} left ${event.kind} at ${event.path} (${event.detail})`,
    });
  }
}

/** An opened engine file: read it through `handle` only, then close it. */
export interface OpenedOutput {
  readonly handle: FileHandle;
  readonly size: number;
  /** The checked file's identity and owner, for {@link moveEngineOutput}. */
  readonly dev: number;
  readonly ino: number;
  readonly uid: number;
}

const OPEN_FLAGS = fs.O_RDONLY | fs.O_NOFOLLOW | fs.O_NONBLOCK | fs.O_NOCTTY;

function refuse(job: GuardedJob, engine: string, kind: OutputViolation, path: string, detail: string): never {
  const event: SecurityEvent = { kind, engine, path, detail };
  job.onSecurityEvent?.(event);
  throw new UnsafeOutputError(event);
}

/**
 * Whether a file of the service's own uid is as the service left it (issue 45). Where
 * engines run as a uid of their own they cannot make such a file: what an engine hands over
 * as its output must be its user's. One of the service's files can still sit there because
 * the service wrote it (an in-process step) or because an engine renamed or linked one the
 * service made (an input, an earlier step's output) to where its output is expected. A
 * rename, a link or a mode change sets the file's change time (ctime) to the moment it
 * happened; only a write sets its modification time (mtime) too, and an engine may not
 * write the service's files. So a file whose ctime is still its mtime was last touched by a
 * write of the service's, and one whose ctime moved on was not. (Both come from the same
 * clock tick: a rename within the tick of the service's own last write, a race an engine
 * cannot aim at, would pass.) Where engines keep the service's uid nothing tells the two
 * apart, and any file of that uid is taken.
 */
async function serviceFileUntouched(handle: FileHandle): Promise<boolean> {
  const st = await handle.stat({ bigint: true });
  return st.ctimeNs === st.mtimeNs;
}

/** Why a file's owner is refused, or null when it may be read. */
async function ownerProblem(handle: FileHandle, uid: number): Promise<string | null> {
  const sandboxUid = sandboxCapabilities().sandbox_uid;
  if (sandboxUid !== null && uid === sandboxUid) return null;
  if (uid !== (process.getuid?.() ?? 0)) return `owned by uid ${uid}`;
  if (sandboxUid === null || (await serviceFileUntouched(handle))) return null;
  return `owned by the service (uid ${uid}), not the engines' user (uid ${sandboxUid}), and moved, linked or changed since the service wrote it`;
}

function kindOf(st: Stats): string {
  if (st.isSymbolicLink()) return 'symlink';
  if (st.isFIFO()) return 'FIFO';
  if (st.isSocket()) return 'socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'device node';
  if (st.isDirectory()) return 'folder';
  return 'special file';
}

/**
 * Opens an engine's file for reading after checking it as above. Answers `null` when the
 * file does not exist (the caller decides whether that is "no output"); throws
 * {@link UnsafeOutputError} for anything unsafe.
 */
export async function openEngineOutput(path: string, job: GuardedJob, engine: string): Promise<OpenedOutput | null> {
  const root = resolve(job.dir);
  const abs = resolve(path);
  const rel = relative(root, abs);
  if (rel === '' || rel.startsWith(`..${sep}`) || rel === '..' || isAbsolute(rel)) refuse(job, engine, 'escape', path, 'outside the job folder');
  // Every folder between the job folder and the file: real folders, never links.
  const parts = rel.split(sep);
  let dir = root;
  for (const part of parts.slice(0, -1)) {
    dir = join(dir, part);
    const st = await lstat(dir).catch(() => null);
    if (!st) return null;
    if (!st.isDirectory()) refuse(job, engine, st.isSymbolicLink() ? 'symlink' : 'special_file', rel, `${part} on the way is a ${kindOf(st)}`);
  }
  const seen = await lstat(abs).catch(() => null);
  if (!seen) return null;
  if (seen.isSymbolicLink()) refuse(job, engine, 'symlink', rel, 'the file is a symlink');
  // Never open a FIFO, socket or device: opening alone can block or act on hardware.
  if (!seen.isFile()) refuse(job, engine, 'special_file', rel, `the file is a ${kindOf(seen)}`);
  let handle: FileHandle;
  try {
    handle = await open(abs, OPEN_FLAGS);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'ELOOP') refuse(job, engine, 'symlink', rel, 'replaced by a symlink while checked');
    throw e;
  }
  try {
    const st = await handle.stat();
    if (st.ino !== seen.ino || st.dev !== seen.dev) refuse(job, engine, 'swapped', rel, 'the file changed between the checks');
    if (!st.isFile()) refuse(job, engine, 'special_file', rel, `the file is a ${kindOf(st)}`);
    if (st.nlink !== 1) refuse(job, engine, 'hardlink', rel, `the file has ${st.nlink} links`);
    const owner = await ownerProblem(handle, st.uid);
    if (owner) refuse(job, engine, 'foreign_owner', rel, owner);
    // What the descriptor really is: a folder swapped for a link after the walk shows here.
    const real = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => null);
    if (real !== null && real !== abs && real !== join(await realpath(root), rel)) refuse(job, engine, 'escape', rel, 'the open file resolves outside the job folder');
    return { handle, size: st.size, dev: st.dev, ino: st.ino, uid: st.uid };
  } catch (e) {
    await handle.close();
    throw e;
  }
}

/**
 * Checks an engine's output file without keeping it open; answers its size. A missing (or,
 * unless `allowEmpty`, empty) file is "no output" (`conversion_failed`).
 */
export async function acceptEngineOutput(path: string, job: GuardedJob, engine: string, opts: { allowEmpty?: boolean } = {}): Promise<number> {
  const opened = await openEngineOutput(path, job, engine);
  if (!opened) throw failed('The conversion produced no output.', `${engine} wrote no output`);
  await opened.handle.close();
  if (opened.size === 0 && !opts.allowEmpty) throw failed('The conversion produced no output.', `${engine} wrote an empty output`);
  return opened.size;
}

/** Reads a (small) text file an engine wrote, through the guard; `null` when it is missing. */
export async function readEngineText(path: string, job: GuardedJob, engine: string): Promise<string | null> {
  const opened = await openEngineOutput(path, job, engine);
  if (!opened) return null;
  try {
    return await opened.handle.readFile('utf8');
  } finally {
    await opened.handle.close();
  }
}

/**
 * Writes a file of the service's own into a job folder where engines have run: whatever an
 * engine left under that name (a symlink to a host file, a hard link to an upload) is
 * removed first and the file is created anew (`O_EXCL`, which never follows a link), so
 * the service never writes through an engine's link.
 */
export async function writeJobFile(path: string, data: string | Uint8Array, mode = 0o644): Promise<void> {
  await rm(path, { force: true });
  const handle = await open(path, fs.O_WRONLY | fs.O_CREAT | fs.O_EXCL | fs.O_NOFOLLOW, mode);
  try {
    await handle.writeFile(data);
  } finally {
    await handle.close();
  }
}

/** Copies an engine's file (checked by the guard) to a new file of the service's own at `to`. */
export async function copyEngineOutput(from: string, to: string, job: GuardedJob, engine: string): Promise<void> {
  const opened = await openEngineOutput(from, job, engine);
  if (!opened) throw failed('The conversion produced no output.', `${engine} wrote no output`);
  let dest: FileHandle;
  try {
    await rm(to, { force: true });
    dest = await open(to, fs.O_WRONLY | fs.O_CREAT | fs.O_EXCL | fs.O_NOFOLLOW, 0o644);
  } catch (e) {
    await opened.handle.close();
    throw e;
  }
  await pipeline(opened.handle.createReadStream({ autoClose: true }), dest.createWriteStream({ autoClose: true }));
}

/**
 * Moves an engine's file, opened and checked by {@link openEngineOutput}, to `to` (a folder
 * of the service's, out of every sandbox's reach): a rename, then `to` is checked to be the
 * very file that was checked and read (same inode, one link) — anything else is removed and
 * refused. Answers false when `to` is on another file system (the caller copies instead).
 */
export async function moveEngineOutput(from: string, to: string, opened: OpenedOutput, job: GuardedJob): Promise<boolean> {
  try {
    await rename(from, to);
  } catch (e) {
    // Another file system, or a folder an engine made (the service may not write in it): copy.
    if (['EXDEV', 'EACCES', 'EPERM'].includes((e as NodeJS.ErrnoException).code ?? '')) return false;
    throw e;
  }
  const moved = await lstat(to).catch(() => null);
  if (!moved || !moved.isFile() || moved.ino !== opened.ino || moved.dev !== opened.dev || moved.nlink !== 1) {
    await rm(to, { force: true });
    refuse(job, 'output', 'swapped', relative(resolve(job.dir), resolve(from)), 'the file changed between the checks and the move');
  }
  return true;
}
