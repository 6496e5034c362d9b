import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JobQueue } from './job-queue.js';

/** A job that records its start and ends when the test says so. */
function gate(log: string[], name: string) {
  let open!: () => void;
  const done = new Promise<void>((resolve) => (open = resolve));
  return { run: async () => { log.push(`start ${name}`); await done; log.push(`end ${name}`); }, open };
}

const tick = () => new Promise((r) => setImmediate(r));

test('JobQueue: per-account limit, global limit, and an account at its limit does not block others', async () => {
  const log: string[] = [];
  const q = new JobQueue(2);
  const a1 = gate(log, 'a1');
  const a2 = gate(log, 'a2');
  const b1 = gate(log, 'b1');
  const c1 = gate(log, 'c1');
  q.push('a', 1, a1.run);
  q.push('a', 1, a2.run);
  q.push('b', 4, b1.run);
  q.push('c', 4, c1.run);
  await tick();
  assert.deepEqual(log, ['start a1', 'start b1'], 'a2 waits for a1 (plan limit 1); c1 waits for a slot (2 at once)');
  assert.deepEqual(q.stats(), { running: 2, waiting: 2 });
  b1.open();
  await tick();
  assert.deepEqual(log.slice(2), ['end b1', 'start c1'], 'the freed slot goes to c, not to a (still at its limit)');
  a1.open();
  await tick();
  assert.deepEqual(log.slice(4), ['end a1', 'start a2']);
  a2.open();
  c1.open();
  await q.drain();
  assert.deepEqual(q.stats(), { running: 0, waiting: 0 });
});
