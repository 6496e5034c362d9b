import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TurnBatcher } from './turn-batcher.js';

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('TurnBatcher', () => {
  test('calls of one turn are grouped by key and run once per group, answers in call order', async () => {
    const runs: Array<[string, number[]]> = [];
    const batcher = new TurnBatcher<number, string>(async (key, items) => {
      runs.push([key, items]);
      return items.map((i) => `${key}:${i}`);
    });
    const answers = await Promise.all([batcher.add('a', 1), batcher.add('b', 2), batcher.add('a', 3), batcher.add('a', 4)]);
    assert.deepEqual(answers, ['a:1', 'b:2', 'a:3', 'a:4']);
    assert.deepEqual(runs, [
      ['a', [1, 3, 4]],
      ['b', [2]],
    ]);
  });

  test('a call made after its group started runs in a new group (never reuses an answer read before it was asked)', async () => {
    let version = 0;
    const seen: number[][] = [];
    const batcher = new TurnBatcher<number, number>(async (_key, items) => {
      seen.push(items);
      const v = version;
      await nextTurn();
      return items.map(() => v);
    });
    const first = batcher.add('k', 1);
    await nextTurn(); // the first group has started reading
    version = 1; // a change committed after it read, before the second call
    const second = batcher.add('k', 2);
    assert.equal(await first, 0);
    assert.equal(await second, 1);
    assert.deepEqual(seen, [[1], [2]]);
  });

  test('a failing run rejects every call of its group and only those; a wrong result count is an error', async () => {
    const batcher = new TurnBatcher<number, number>(async (key, items) => {
      if (key === 'bad') throw new Error('database gone');
      if (key === 'short') return items.slice(1);
      return items;
    });
    const results = await Promise.allSettled([batcher.add('bad', 1), batcher.add('ok', 2), batcher.add('bad', 3), batcher.add('short', 4), batcher.add('short', 5)]);
    assert.deepEqual(
      results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message)),
      ['database gone', 2, 'database gone', 'TurnBatcher: 1 results for 2 calls', 'TurnBatcher: 1 results for 2 calls'],
    );
  });

  test('a run that throws synchronously rejects its calls instead of escaping', async () => {
    const batcher = new TurnBatcher<number, number>(() => {
      throw new Error('sync');
    });
    await assert.rejects(batcher.add('k', 1), /sync/);
  });
});
