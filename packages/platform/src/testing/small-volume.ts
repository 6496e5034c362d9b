import { execFileSync } from 'node:child_process';
import { mkdtemp, open, rm, statfs } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A small tmpfs mounted by a test, that it fills up and frees again (issue 28). */
export interface SmallVolume {
  readonly path: string;
  /** Bytes free on it (for an unprivileged process, as `df` shows). */
  free(): Promise<number>;
  /** Writes a filler file (outside the service's folders) until at most `leaveBytes` are free. */
  fill(leaveBytes: number): Promise<void>;
  /** Removes the filler: the space is back. */
  drain(): Promise<void>;
  /** Unmounts it and removes the mount point. */
  unmount(): Promise<void>;
}

/**
 * Mounts a tmpfs of `sizeBytes` on a new folder: a disk that really fills up, for the
 * full-disk tests. Mounting needs root, which CI has; without it this throws, saying so —
 * the test fails, it does not skip. Bounded by construction: the volume is small, in memory.
 */
export async function mountSmallVolume(sizeBytes: number): Promise<SmallVolume> {
  if (process.getuid?.() !== 0) {
    throw new Error('the full-disk tests mount small tmpfs volumes, which needs root: run the suite as root (CI does)');
  }
  const path = await mkdtemp(join(tmpdir(), 'small-volume-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes},mode=0755`, 'tmpfs', path], { stdio: 'pipe' });
  const filler = join(path, '.filler');
  const free = async () => {
    const s = await statfs(path);
    return s.bavail * s.bsize;
  };
  return {
    path,
    free,
    async fill(leaveBytes) {
      const handle = await open(filler, 'a');
      try {
        const block = Buffer.alloc(64 * 1024, 0xa5);
        for (let left = (await free()) - leaveBytes; left > 0; left -= block.length) {
          try {
            await handle.write(block, 0, Math.min(block.length, left));
          } catch (e) {
            if ((e as NodeJS.ErrnoException).code === 'ENOSPC') return;
            throw e;
          }
        }
      } finally {
        await handle.close();
      }
    },
    async drain() {
      await rm(filler, { force: true });
    },
    async unmount() {
      execFileSync('umount', ['-l', path], { stdio: 'pipe' });
      await rm(path, { recursive: true, force: true });
    },
  };
}
