/**
 * The reconciliation pass (issue 28): bytes that no record owns leave the disk. A process
 * killed mid-upload leaves a file in `uploads/` with no row (the row is written after the
 * bytes); one killed mid-conversion leaves its job folder in `work/`, holding a link to (or
 * a copy of) the customer's upload, and possibly a partial file in `outputs/`. Shred and
 * retention remove what belongs to their records; this pass removes what belongs to none,
 * or to a record that is no longer live, after a grace period for work still in flight.
 * Runs at start-up and with every retention sweep (one process at a time, under the
 * sweeper's lease).
 */
import { readdir, lstat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Converter } from '@mailconv/converter';
import type { FastifyBaseLogger } from 'fastify';
import type { ConversionsRepository } from '../repositories/conversions.repository.js';
import type { UploadsRepository } from '../repositories/uploads.repository.js';
import type { FileStore } from '../storage/file-store.js';

/** What one pass removed. */
export interface ReconcileReport {
  uploads: number;
  outputs: number;
  jobFolders: number;
}

export interface ReconcileDeps {
  store: FileStore;
  converter: Converter;
  uploads: UploadsRepository;
  conversions: ConversionsRepository;
  clock: () => Date;
  /** Files and folders changed more recently than this are left alone (uploads and conversions in flight). */
  graceMs: number;
  log: FastifyBaseLogger;
}

const BATCH = 500;

/** Entries of a folder changed before `before` (ms), with their names. */
async function idleEntries(dir: string, before: number): Promise<string[]> {
  const out: string[] = [];
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const st = await lstat(join(dir, name)).catch(() => null);
    if (st && st.mtimeMs < before) out.push(name);
  }
  return out;
}

function batches<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += BATCH) out.push(items.slice(i, i + BATCH));
  return out;
}

/** The conversion id an output file is named after (`cnv_….ext` or `cnv_….a2.ext`). */
function outputOwner(name: string): string | null {
  return /^(cnv_[a-z0-9]+)\./.exec(name)?.[1] ?? null;
}

/** One reconciliation pass; answers what it removed. */
export async function reconcileStorage(deps: ReconcileDeps): Promise<ReconcileReport> {
  const now = deps.clock().getTime();
  const before = now - deps.graceMs;
  const report: ReconcileReport = { uploads: 0, outputs: 0, jobFolders: 0 };
  const nowIso = new Date(now).toISOString();

  // uploads/: a file is kept while its row exists and is not deleted.
  const uploadNames = await idleEntries(join(deps.store.root, 'uploads'), before);
  for (const batch of batches(uploadNames)) {
    const rows = new Map((await deps.uploads.byIds(batch)).map((r) => [r.id, r]));
    for (const name of batch) {
      const row = rows.get(name);
      if (row && !row.deleted_at) continue;
      await deps.store.remove(deps.store.uploadPath(name));
      report.uploads++;
    }
  }

  // outputs/: kept while it is its conversion's stored output, or the conversion still runs.
  const outputNames = await idleEntries(join(deps.store.root, 'outputs'), before);
  const owners = [...new Set(outputNames.map(outputOwner).filter((o): o is string => o !== null))];
  const conversions = new Map<string, { status: string; lease_until: string | null; output_path: string | null }>();
  for (const batch of batches(owners)) for (const r of await deps.conversions.byIds(batch)) conversions.set(r.id, r);
  for (const name of outputNames) {
    const owner = outputOwner(name);
    const row = owner ? conversions.get(owner) : undefined;
    const path = join(deps.store.root, 'outputs', name);
    if (row && ((row.status === 'completed' && row.output_path === path) || row.status === 'processing' || row.status === 'queued')) continue;
    await deps.store.remove(path);
    report.outputs++;
  }

  // work/: a job folder is kept while its conversion runs under a live lease somewhere.
  const folders = (await deps.converter.jobFolders()).filter((f) => f.changedMs < before);
  const tagged = [...new Set(folders.map((f) => f.tag).filter((t): t is string => t !== null && t.startsWith('cnv_')))];
  const live = new Set<string>();
  for (const batch of batches(tagged)) {
    for (const r of await deps.conversions.byIds(batch)) if (r.status === 'processing' && r.lease_until !== null && r.lease_until > nowIso) live.add(r.id);
  }
  for (const f of folders) {
    if (f.tag && live.has(f.tag)) continue;
    await deps.converter.removeJobFolder(f.name);
    report.jobFolders++;
  }
  if (report.uploads || report.outputs || report.jobFolders) {
    deps.log.warn({ event: 'reconcile', removed: report }, 'reconciliation removed files no live record owns (left by a killed process or a failed write)');
  }
  return report;
}
