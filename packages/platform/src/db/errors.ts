/** True when `err` is a unique-constraint violation from SQLite or PostgreSQL. */
export function isUniqueViolation(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as { code?: unknown }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** SQLSTATE classes and codes that mean "the server is not there right now", not "this query is wrong". */
const PG_UNAVAILABLE = /^(08|57P0[1-3]|53300)/;
/** Socket errors of a server that is down or restarting. */
const NET_UNAVAILABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTCONN']);
/** What pg and ioredis say when their connection went away under a query or command. */
const GONE_MESSAGES = [/^Connection terminated/, /connection error and is not queryable/, /^Connection is closed\.?$/, /enableOfflineQueue options is false/, /^Reached the max retries per request limit/];

/**
 * True when `err` says a dependency (PostgreSQL, Redis) is down or restarting — a refused
 * or cut connection, an admin shutdown, "starting up" — rather than a bug: the request may
 * well succeed once it is back, so the HTTP layer answers 503 with `Retry-After`.
 */
export function isDependencyUnavailable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; message?: unknown; errors?: unknown };
  if (typeof e.code === 'string' && (NET_UNAVAILABLE.has(e.code) || (/^[0-9A-Z]{5}$/.test(e.code) && PG_UNAVAILABLE.test(e.code)))) return true;
  if (typeof e.message === 'string' && GONE_MESSAGES.some((m) => m.test(e.message as string))) return true;
  // Node reports a refused connection to several addresses as an AggregateError.
  return Array.isArray(e.errors) && e.errors.length > 0 && e.errors.every(isDependencyUnavailable);
}

/** Node's, SQLite's and PostgreSQL's codes for "the disk (or the quota on it) is full". */
const FULL_CODES = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL', '53100']);

/**
 * True when `err` (or an error it wraps) says the disk is full: a write to the storage
 * folder (`ENOSPC`), SQLite's `database or disk is full`, PostgreSQL's `disk_full`. The
 * HTTP layer answers 507 `insufficient_storage`, not a 500 (issue 28).
 */
export function isStorageFull(err: unknown): boolean {
  for (let e = err, depth = 0; typeof e === 'object' && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && FULL_CODES.has(code)) return true;
  }
  return false;
}
