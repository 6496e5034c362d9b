import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type Migration, type MigrationProvider } from 'kysely';
import pg from 'pg';
import type { DatabaseTarget } from '../config/settings.js';

// PostgreSQL returns int8 (count(*), sums) as strings; our counters fit in a double.
pg.types.setTypeParser(20, (v) => Number(v));

/** An open database of one service, with the few operations that differ per engine. */
export interface Database<DB> {
  readonly db: Kysely<DB>;
  readonly dialect: 'sqlite' | 'postgres';
  /**
   * Runs `fn` in a transaction that may write. On SQLite it starts with `BEGIN IMMEDIATE`,
   * taking the write lock up front, so concurrent writers from other processes wait on the
   * busy timeout instead of failing a lock upgrade half-way.
   */
  writeTransaction<T>(fn: (trx: Kysely<DB>) => Promise<T>): Promise<T>;
  /** Throws when the database cannot answer a trivial query. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** Pool size for PostgreSQL. */
  maxConnections?: number;
  /** How long SQLite waits for another writer, in ms. */
  busyTimeoutMs?: number;
}

/** Opens (creating the SQLite file and its folder if needed) the database named by `target`. */
export function openDatabase<DB>(target: DatabaseTarget, options: OpenDatabaseOptions = {}): Database<DB> {
  if (target.kind === 'sqlite') {
    if (target.path !== ':memory:') mkdirSync(dirname(target.path), { recursive: true });
    const raw = new BetterSqlite3(target.path);
    raw.pragma('journal_mode = WAL');
    raw.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 10_000}`);
    raw.pragma('foreign_keys = ON');
    raw.pragma('synchronous = NORMAL');
    // Kysely prepares every query anew; reusing prepared statements by SQL text saves that
    // work on hot paths (a statement is used synchronously, so sharing one is safe).
    const statements = new Map<string, BetterSqlite3.Statement>();
    const database = {
      prepare(source: string) {
        let stmt = statements.get(source);
        if (!stmt) {
          if (statements.size >= 1000) statements.clear();
          stmt = raw.prepare(source);
          statements.set(source, stmt);
        }
        return stmt;
      },
      close: () => raw.close(),
    };
    const db = new Kysely<DB>({ dialect: new SqliteDialect({ database }) });
    return {
      db,
      dialect: 'sqlite',
      writeTransaction: (fn) =>
        db.connection().execute(async (conn) => {
          await sql`BEGIN IMMEDIATE`.execute(conn);
          try {
            const result = await fn(conn);
            await sql`COMMIT`.execute(conn);
            return result;
          } catch (err) {
            if (raw.inTransaction) await sql`ROLLBACK`.execute(conn);
            throw err;
          }
        }),
      ping: async () => {
        await sql`SELECT 1`.execute(db);
      },
      close: () => db.destroy(),
    };
  }
  const pool = new pg.Pool({ connectionString: target.url, max: options.maxConnections ?? 10 });
  // An idle client losing its server must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  // Nor a checked-out one (a transaction in flight, issue 28): pg emits its connection's
  // error on the client, which with no listener is an uncaught exception that ends the
  // process. The query in flight still rejects with that error; the pool drops the client.
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
  });
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    dialect: 'postgres',
    writeTransaction: (fn) => db.transaction().execute(fn),
    ping: async () => {
      await sql`SELECT 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}

/** Applies every pending migration of `migrations` (core plus the service's own). */
export async function migrate(db: Kysely<unknown>, migrations: Record<string, Migration>): Promise<string[]> {
  const provider: MigrationProvider = { getMigrations: async () => migrations };
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
