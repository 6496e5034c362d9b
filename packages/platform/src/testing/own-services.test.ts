import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import pg from 'pg';
import { isDependencyUnavailable } from '../db/errors.js';
import { openDatabase } from '../db/database.js';
import { parseDatabaseUrl } from '../config/settings.js';
import { startOwnPostgres, startOwnRedis } from './own-services.js';
import { createTestDatabase } from './test-database.js';

const failure = async (p: Promise<unknown>): Promise<unknown> => p.then(() => assert.fail('expected a failure'), (err: unknown) => err);

// The fault tests' fixture (issue #15): a server of the test's own can be stopped and started
// again on the same port, and what a client sees meanwhile is classed as "unavailable".
test('own PostgreSQL: a pool rides a fast shutdown and restart; the errors meanwhile are "dependency unavailable", a bad query is not', { timeout: 90_000 }, async () => {
  const server = await startOwnPostgres();
  try {
    const db = await createTestDatabase('postgres', server.url);
    const target = parseDatabaseUrl(db.url, '.');
    const database = openDatabase(target);
    try {
      await database.ping();
      const bad = await failure(new pg.Client({ connectionString: db.url }).connect().then((c) => c.query('SELECT * FROM no_such_table').finally(() => c.end())));
      assert.equal(isDependencyUnavailable(bad), false, 'a wrong query is a bug, not an outage');
      await server.stop();
      const down = await failure(database.ping());
      assert.ok(isDependencyUnavailable(down), `classed as unavailable: ${String(down)}`);
      await server.start();
      // The pool dropped its dead connections: the next query opens a new one.
      let ok = false;
      for (let i = 0; i < 20 && !ok; i++) ok = await database.ping().then(() => true, () => false);
      assert.ok(ok, 'the pool reconnects once the server is back');
    } finally {
      await database.close();
      await db.drop();
    }
  } finally {
    await server.close();
  }
});

test('own Redis: stopped, a fail-fast client errors at once with "unavailable"; started again (empty), it reconnects', { timeout: 30_000 }, async () => {
  const server = await startOwnRedis();
  const client = new Redis(server.url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, retryStrategy: () => 100 });
  client.on('error', () => undefined);
  try {
    if (client.status !== 'ready') await new Promise((r) => client.once('ready', r));
    await client.set('k', 'v');
    await server.stop();
    const down = await failure(client.get('k'));
    assert.ok(isDependencyUnavailable(down), `classed as unavailable: ${String(down)}`);
    await server.start();
    for (let i = 0; i < 50 && client.status !== 'ready'; i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(await client.get('k'), null, 'nothing persisted (--save "")');
  } finally {
    client.disconnect();
    await server.close();
  }
});
