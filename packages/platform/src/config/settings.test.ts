import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { ConfigError, parseDatabaseUrl, parseSettings, setting } from './settings.js';

const schema = z.object({
  X_PORT: setting.port(8080),
  X_FLAG: setting.bool(false),
  X_DATABASE_URL: setting.databaseUrl(),
  X_BASE: setting.httpUrl(),
});

test('defaults apply and empty values count as unset', () => {
  const s = parseSettings(schema, { X_PORT: '', X_FLAG: 'yes' });
  assert.deepEqual(s, { X_PORT: 8080, X_FLAG: true });
});

test('every problem is reported at once, naming the setting and the value', () => {
  assert.throws(
    () => parseSettings(schema, { X_PORT: 'eighty', X_FLAG: 'maybe', X_DATABASE_URL: 'mysql://x', X_BASE: 'ftp://a' }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.equal(err.problems.length, 4);
      assert.match(err.message, /X_PORT: .*"eighty"/);
      assert.match(err.message, /X_FLAG: must be true or false/);
      assert.match(err.message, /X_DATABASE_URL: must be sqlite:PATH or postgres/);
      assert.match(err.message, /X_BASE: must be an absolute http\(s\) URL/);
      return true;
    },
  );
});

test('database URLs resolve relative SQLite paths against the base folder', () => {
  assert.deepEqual(parseDatabaseUrl('sqlite:data/a.db', '/srv'), { kind: 'sqlite', path: '/srv/data/a.db' });
  assert.deepEqual(parseDatabaseUrl('sqlite:/var/a.db', '/srv'), { kind: 'sqlite', path: '/var/a.db' });
  assert.deepEqual(parseDatabaseUrl('sqlite::memory:', '/srv'), { kind: 'sqlite', path: ':memory:' });
  assert.deepEqual(parseDatabaseUrl('postgres://u@h/db', '/srv'), { kind: 'postgres', url: 'postgres://u@h/db' });
  assert.throws(() => parseDatabaseUrl('mysql://h/db', '/srv'), ConfigError);
});
