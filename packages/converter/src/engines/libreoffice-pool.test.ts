// The warm pool's supervision: restart after a crash, kill and restart after a hang,
// recycling after N conversions, a bounded queue, and nothing left running after close.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ConversionError } from '../errors.js';
import { descendants, SANDBOX_UID } from '../exec/exec.js';
import { fixture, processGone, scratchDir } from '../testing/tools.js';
import { LibreOfficePool } from './libreoffice-pool.js';

let dir: string;
let pool: LibreOfficePool;
let n = 0;

const job = () => ({ input: fixture('sample.docx'), output: join(dir, `out-${n++}.pdf`), filter: 'writer_pdf_Export' });
const isPdf = async (path: string) => (await readFile(path)).subarray(0, 5).toString() === '%PDF-';

before(async () => {
  dir = await scratchDir('conv-pool-');
  pool = new LibreOfficePool({ workDir: join(dir, 'lo'), instances: 1, maxConversionsPerInstance: 3, maxQueue: 1 });
  await pool.start();
});
after(async () => {
  const pids = pool.pids();
  await pool.close();
  for (const pid of pids) assert.equal(processGone(pid), true, `soffice ${pid} left running`);
  await rm(dir, { recursive: true, force: true });
});

test('soffice runs sandboxed: its own view of the filesystem, an unprivileged user, memory and CPU caps (#13)', async () => {
  const [outer] = pool.pids();
  assert.ok(outer);
  // The engine itself sits below bubblewrap; find it by its command line.
  const soffice = descendants(outer).find((p) => {
    try {
      return readFileSync(`/proc/${p}/cmdline`, 'utf8').startsWith('/usr/lib/libreoffice/program/soffice.bin');
    } catch {
      return false;
    }
  });
  assert.ok(soffice, 'soffice.bin not found under the sandbox');
  const limits = readFileSync(`/proc/${soffice}/limits`, 'utf8');
  assert.match(limits, new RegExp(`Max data size\\s+${3 * 1024 ** 3}\\s`));
  assert.match(limits, /Max cpu time\s+\d+\s/);
  if (process.getuid?.() === 0) {
    assert.match(readFileSync(`/proc/${soffice}/status`, 'utf8'), new RegExp(`^Uid:\\s+${SANDBOX_UID}\\s`, 'm'));
    // What soffice sees as "/" (the host reads it through /proc/PID/root): no passwd, no home, no test folder but its own.
    const root = `/proc/${soffice}/root`;
    assert.equal(existsSync(`${root}/etc/passwd`), false);
    assert.equal(existsSync(`${root}/home`), false);
    assert.equal(existsSync(`${root}${fixture('sample.docx')}`), false);
    assert.equal(existsSync(`${root}/usr/lib/libreoffice/program/soffice.bin`), true);
  }
});

test('an instance killed from outside is restarted and the pool keeps converting', async () => {
  const first = job();
  await pool.convert(first, 30_000);
  assert.ok(await isPdf(first.output));
  const [pid] = pool.pids();
  assert.ok(pid);
  process.kill(pid, 'SIGKILL');
  // The next job waits for the restarted instance instead of failing.
  const next = job();
  await pool.convert(next, 60_000);
  assert.ok(await isPdf(next.output));
  const [newPid] = pool.pids();
  assert.ok(newPid && newPid !== pid);
  assert.equal(processGone(pid), true);
  assert.ok(pool.stats.restarts >= 1);
});

test('a conversion past its time-out kills the instance, fails the job, and the pool recovers', async () => {
  const [pid] = pool.pids();
  await assert.rejects(pool.convert(job(), 1), (e: unknown) => e instanceof ConversionError && e.code === 'conversion_failed' && /too long/.test(e.message));
  const next = job();
  await pool.convert(next, 60_000);
  assert.ok(await isPdf(next.output));
  assert.ok(pid && processGone(pid));
  assert.ok(pool.stats.timeouts >= 1);
});

test('instances are recycled after N conversions; a full queue is refused', async () => {
  const before = pool.stats.recycles;
  for (let i = 0; i < 3; i++) await pool.convert(job(), 30_000);
  assert.ok(pool.stats.recycles > before);
  // maxQueue 1: of three jobs sent at once, one waits in the queue and at most one runs,
  // so at least one is refused at once; the accepted ones complete.
  const results = await Promise.allSettled([0, 1, 2].map(() => pool.convert(job(), 30_000)));
  const refused = results.filter((r) => r.status === 'rejected' && r.reason instanceof ConversionError && r.reason.code === 'service_unavailable');
  const done = results.filter((r) => r.status === 'fulfilled');
  assert.ok(refused.length >= 1, 'nothing was refused');
  assert.ok(done.length >= 1, 'nothing completed');
  assert.equal(refused.length + done.length, 3);
});

test('a job that makes soffice pass the memory ceiling is killed, and the pool recovers', async () => {
  // A ceiling below an idle soffice's footprint: the first sample already trips it.
  const tight = new LibreOfficePool({ workDir: join(dir, 'lo-tight'), instances: 1, killRssBytes: 10 * 1024 * 1024 });
  try {
    await tight.start();
    const [pid] = tight.pids();
    await assert.rejects(tight.convert(job(), 30_000), (e: unknown) => e instanceof ConversionError && e.code === 'conversion_failed' && /memory/.test(e.message));
    assert.ok(pid && processGone(pid));
  } finally {
    await tight.close();
  }
});

test('a job waiting in the queue longer than maxQueueWaitMs is refused', async () => {
  const impatient = new LibreOfficePool({ workDir: join(dir, 'lo-impatient'), instances: 1, maxQueueWaitMs: 1 });
  try {
    await impatient.start();
    // The first job takes the only instance at once; the second waits and gives up.
    const [first, second] = await Promise.allSettled([impatient.convert(job(), 30_000), impatient.convert(job(), 30_000)]);
    assert.equal(first?.status, 'fulfilled');
    assert.ok(second?.status === 'rejected' && second.reason instanceof ConversionError && second.reason.code === 'service_unavailable');
  } finally {
    await impatient.close();
  }
});
