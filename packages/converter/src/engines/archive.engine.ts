/**
 * Archives repacked from one format to another with libarchive's `bsdtar`: unpacked into a
 * folder of the job (after `guards/archive-guard.ts` has checked the listing; bsdtar itself
 * refuses absolute and `..` paths and writing through links, and the sandbox shows it only the
 * job's folder), then packed again with the same member names. Never extracted for the caller.
 */
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { failed } from '../errors.js';
import { ownForSandbox } from '../exec/exec.js';
import { checkUnpackedTree } from '../guards/archive-guard.js';
import { probeBinaries, runStep, type Engine, type EngineProbe, type Step } from './engine.js';

const BSDTAR = '/usr/bin/bsdtar';
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
