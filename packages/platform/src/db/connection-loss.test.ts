// A lost PostgreSQL connection in the middle of a transaction (issue 28): the transaction
// fails as an error of its caller, the process does not crash (no uncaught exception), and
// the next query works once the server is reachable again. PostgreSQL is reached through a
// TCP relay of the test's own on loopback, which it cuts and restores (the machine's server
// is never stopped). Bounded: every wait has a deadline.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { openDatabase, type Database } from './database.js';
import { createTestDatabase, testBackends } from '../testing/test-database.js';
import { startTcpRelay, type TcpRelay } from '../testing/tcp-relay.js';

let relay: TcpRelay | undefined;
let target: URL;
let drop: () => Promise<void> = async () => undefined;
const uncaught: unknown[] = [];
const onUncaught = (err: unknown) => uncaught.push(err);
const cut = () => relay?.cut();

before(async () => {
  if (!testBackends().includes('postgres')) return;
  const db = await createTestDatabase('postgres');
  drop = db.drop;
  target = new URL(db.url);
  relay = await startTcpRelay(target.hostname, Number(target.port || 5432));
  process.on('uncaughtException', onUncaught);
});

after(async () => {
  process.off('uncaughtException', onUncaught);
  await relay?.close();
  await drop();
});

test('PostgreSQL dropping mid-transaction fails the transaction, never the process; the next query reconnects', { skip: !testBackends().includes('postgres'), timeout: 60_000 }, async () => {
  const database: Database<{ t: { id: number } }> = openDatabase({ kind: 'postgres', url: relay!.via(target.toString()) }, { maxConnections: 2 });
  try {
    await sql`CREATE TABLE t (id integer)`.execute(database.db);
    // A transaction holding its client while the path to the server dies under it.
    const inFlight = database.writeTransaction(async (trx) => {
      await sql`INSERT INTO t VALUES (1)`.execute(trx);
      cut();
      await sleep(200);
      await sql`INSERT INTO t VALUES (2)`.execute(trx);
    });
    await assert.rejects(inFlight, 'the transaction fails as an error of its caller');
    // An idle client of the pool loses its server too.
    await sql`SELECT 1`.execute(database.db);
    cut();
    await sleep(300);
    assert.deepEqual(uncaught, [], 'no uncaught exception');
    // Recovery without a restart: the pool makes a new connection through the relay.
    let rows: { n: number }[] = [];
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await sleep(100)) {
      try {
        rows = (await sql<{ n: number }>`SELECT count(*)::int AS n FROM t`.execute(database.db)).rows;
        break;
      } catch {
        // the dead client's turn: the next try gets a fresh one
      }
    }
    assert.deepEqual(rows, [{ n: 0 }], 'the cut transaction left nothing behind');
    assert.deepEqual(uncaught, []);
  } finally {
    await database.close();
  }
});
