import { statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Gauge, type Registry } from 'prom-client';
import { AppError } from '../errors/app-error.js';

/** What a service says when its storage cannot take more (issue 28): 507, never a 500. */
export const INSUFFICIENT_STORAGE_MESSAGE = 'The service is out of storage space right now; nothing was stored. Retry later.';

/**
 * Free space of a service's folders (`data`: the SQLite database and local state;
 * `storage`: uploads and outputs), against a floor (`…_MIN_FREE_MB`). Under the floor the
 * service is not ready (`/readyz`), so a load balancer sends its work elsewhere before
 * writes start failing; uploads that cannot fit above the floor are refused before a byte
 * is read. Free space is what an unprivileged process may use (`f_bavail`), as `df` shows.
 */
export class DiskSpace {
  private readonly folders: ReadonlyMap<string, string>;

  constructor(folders: Readonly<Record<string, string>>, readonly floorBytes: number) {
    this.folders = new Map(Object.entries(folders));
  }

  /** The folders watched, by label. */
  labels(): string[] {
    return [...this.folders.keys()];
  }

  /**
   * Bytes free on the file system holding the folder labelled `label` (or, while it does not
   * exist yet — a data folder unused with PostgreSQL — its nearest existing parent's).
   */
  async free(label: string): Promise<number> {
    let path = this.folders.get(label);
    if (!path) throw new Error(`no folder labelled ${label}`);
    for (;;) {
      try {
        const s = await statfs(path);
        return s.bavail * s.bsize;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(path) === path) throw e;
        path = dirname(path);
      }
    }
  }

  /** Throws, naming the folder and the figures, when a folder is under the floor (a readiness check). */
  async check(): Promise<void> {
    for (const label of this.folders.keys()) {
      const free = await this.free(label);
      if (free < this.floorBytes) throw new Error(`${label} folder: ${free} bytes free, under the floor of ${this.floorBytes}`);
    }
  }

  /**
   * Throws 507 `insufficient_storage` when `bytes` more would leave the folder under the
   * floor: an upload whose declared length cannot fit is refused before it is read.
   */
  async assertRoom(label: string, bytes: number): Promise<void> {
    const free = await this.free(label);
    if (free - bytes < this.floorBytes) throw new AppError('insufficient_storage', INSUFFICIENT_STORAGE_MESSAGE);
  }

  /** `disk_free_bytes{folder}` and `disk_free_floor_bytes`, read at each scrape. */
  register(registry: Registry): void {
    const free = new Gauge({
      name: 'disk_free_bytes',
      help: 'Bytes free (for the service user) on the file system of each of the service\'s folders: data (database, local state), storage (uploads, outputs).',
      labelNames: ['folder'],
      registers: [registry],
      collect: async () => {
        for (const label of this.folders.keys()) {
          try {
            free.set({ folder: label }, await this.free(label));
          } catch {
            free.remove({ folder: label });
          }
        }
      },
    });
    const floor = new Gauge({ name: 'disk_free_floor_bytes', help: 'The free-space floor (…_MIN_FREE_MB) under which the service says it is not ready.', registers: [registry] });
    floor.set(this.floorBytes);
  }
}
