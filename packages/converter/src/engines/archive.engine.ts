/**
 * Archives repacked from one format to another with libarchive's `bsdtar`: unpacked into a
 * folder of the job (after `guards/archive-guard.ts` has checked the listing; bsdtar itself
 * refuses absolute and `..` paths and writing through links, and the sandbox shows it only the
 * job's folder), then packed again with the member names cleaned as a download's name is (no
 * control or bidi characters, issue #45). Never extracted for the caller.
 */
import { mkdir, readdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { failed } from '../errors.js';
import { ownForSandbox } from '../exec/exec.js';
import { safeFilename, uniqueName } from '../filenames.js';
import { checkUnpackedTree } from '../guards/archive-guard.js';
import { probeBinaries, runStep, type Engine, type EngineProbe, type Step } from './engine.js';

const BSDTAR = '/usr/bin/bsdtar';
const FIND = '/usr/bin/find';
const CHMOD = '/usr/bin/chmod';
/** The walk of an unpacked tree stops here (the listing's own cap, configurable, is checked first). */
const UNPACKED_ENTRY_CAP = 1_000_000;
/** bsdtar's write options per target. */
const WRITE: Readonly<Record<string, readonly string[]>> = {
  zip: ['--format', 'zip'],
  '7z': ['--format', '7zip'],
  tar: ['--format', 'pax'],
  tgz: ['--format', 'pax', '-z'],
  tbz2: ['--format', 'pax', '-j'],
  txz: ['--format', 'pax', '-J'],
  cpio: ['--format', 'newc'],
  iso: ['--format', 'iso9660'],
};
const FORMATS = Object.keys(WRITE);

/**
 * Unpacks the step's archive into a new folder of the job (`name`), in the sandbox: no
 * owners, special permission bits, ACLs or extended attributes from the archive; what lands
 * on disk is checked again (links that leave the tree, special files). Answers the folder.
 */
export async function unpackArchive(step: Step, name: string): Promise<string> {
  const tree = join(step.job.dir, name);
  await mkdir(tree);
  await ownForSandbox(tree);
  await runStep(step, BSDTAR, ['-x', '--no-same-owner', '--no-same-permissions', '--no-acls', '--no-xattrs', '--no-fflags', '-f', step.input, '-C', tree]);
  // The members keep the archive's modes less the umask: Python's zipfile writes 0600, so an
  // unprivileged service (in the engine user's group) could not read or list what the engine
  // user unpacked (issue #45). Opened to the group by the engine user, in the sandbox: files
  // readable and folders open (chmod -R opens a folder before it walks into it), then folders
  // writable (the service renames in them). The tree's own folder is the service's, so only
  // what is in it; links are left alone (chmod follows a link it is given, not one it meets).
  await runStep(step, FIND, [tree, '-mindepth', '1', '-maxdepth', '1', '!', '-type', 'l', '-exec', CHMOD, '-R', 'u+rX,g+rX', '--', '{}', '+']);
  await runStep(step, FIND, [tree, '-mindepth', '1', '-type', 'd', '-exec', CHMOD, 'u+w,g+w', '--', '{}', '+']);
  // What bsdtar unpacked is the archive's, hence hostile: checked again as it lies on disk.
  await checkUnpackedTree(tree, step.from, UNPACKED_ENTRY_CAP);
  return tree;
}

/** The archive engine. */
export class ArchiveEngine implements Engine {
  readonly name = 'bsdtar';
  readonly reads = FORMATS;
  readonly writes = FORMATS;

  tradesQualityForSize(): boolean {
    return false;
  }

  probe(): Promise<EngineProbe> {
    return probeBinaries(this.name, [BSDTAR], ['--version'], /bsdtar (\S+)/);
  }

  async convert(step: Step): Promise<void> {
    const tree = await unpackArchive(step, `unpacked-${step.to}`);
    await cleanEntryNames(tree);
    const names = (await readdir(tree)).sort();
    if (!names.length) throw failed(`The ${step.from} file holds nothing to repack.`);
    await this.pack(step, tree, names);
  }

  /** Packs the named files of `dir` into `step.output`, in the format of `step.to`. */
  async pack(step: Step, dir: string, names: readonly string[]): Promise<void> {
    // "./name" keeps names starting with "-" or "@" from being read as options; -s strips it again.
    await runStep(step, BSDTAR, ['-c', ...(WRITE[step.to] ?? []), '-f', step.output, '-s', ',^\\./,,', '-C', dir, ...names.map((n) => `./${n}`)]);
  }
}

/**
 * Renames, folder by folder, every entry of an unpacked tree whose name the download cleaner
 * changes (issue #45); one that cleans to a name already there gets ` (2)`, … so that no
 * member is lost. Nothing is overwritten: every name on disk counts as taken.
 */
async function cleanEntryNames(dir: string): Promise<void> {
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const taken = new Set(entries.map((e) => e.name.toLowerCase()));
  for (const entry of entries) {
    let name = entry.name;
    const clean = safeFilename(name);
    if (clean !== name) {
      name = uniqueName(clean, taken);
      await rename(join(dir, entry.name), join(dir, name));
    }
    if (entry.isDirectory()) await cleanEntryNames(join(dir, name));
  }
}
