import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Kysely, SqliteDialect, sql } from 'kysely';
import BetterSqlite3 from 'better-sqlite3';
import { reusableQuery } from './reusable-query.js';

interface T {
  t: { a: string; n: number };
}

test('a reusable query compiles once and binds each call’s values in the right slots', async () => {
  const db = new Kysely<T>({ dialect: new SqliteDialect({ database: new BetterSqlite3(':memory:') }) });
  await sql`create table t (a text, n integer)`.execute(db);
  await db.insertInto('t').values([{ a: 'x', n: 1 }, { a: 'x', n: 5 }, { a: 'y', n: 7 }]).execute();
  let builds = 0;
  const q = reusableQuery(
    (v: { a: string; min: number }) => {
      builds += 1;
      return db.selectFrom('t').select('n').where('a', '=', v.a).where('n', '>=', v.min).where('n', '<', 100).orderBy('n');
    },
    { a: '\u0000a', min: -1_000_001 },
  );
  assert.deepEqual((await db.executeQuery(q({ a: 'x', min: 2 }))).rows, [{ n: 5 }]);
  assert.deepEqual((await db.executeQuery(q({ a: 'y', min: 0 }))).rows, [{ n: 7 }]);
  assert.deepEqual((await db.executeQuery(q({ a: 'x', min: 0 }))).rows, [{ n: 1 }, { n: 5 }]);
  assert.equal(builds, 1);
  const missing = reusableQuery((v: { a: string; b: number }) => db.selectFrom('t').select('n').where('a', '=', v.a), { a: '\u0000a', b: -1 });
  assert.throws(() => missing({ a: 'x', b: 1 }), /sentinel\(s\) b not found/);
  await db.destroy();
});
