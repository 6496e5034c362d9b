import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { ConfigError, parseDatabaseUrl, parseSettings, redactUrlCredentials, setting } from './settings.js';

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

// Issue #15: a mistyped database or Redis URL printed its password.
test('URLs and secrets are never quoted back, only named with the rule', () => {
  const secretSchema = z.object({ X_REDIS_URL: setting.redisUrl(), X_API_TOKEN: z.string().min(40, 'must be at least 40 characters'), X_HOST: z.string().regex(/^[a-z.]+$/, 'must be a host name') });
  assert.throws(
    () => parseSettings(secretSchema, { X_REDIS_URL: 'http://:pw-one@h:6379', X_API_TOKEN: 'pw-two', X_HOST: 'user:pw-three@h' }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /X_REDIS_URL: must be redis/);
      assert.match(err.message, /X_API_TOKEN: must be at least 40 characters/);
      assert.match(err.message, /X_HOST: must be a host name/);
      assert.doesNotMatch(err.message, /pw-/);
      return true;
    },
  );
  assert.throws(() => parseDatabaseUrl('mysql://u:pw-four@h/db', '/srv'), (err: Error) => !/pw-four/.test(err.message));
  assert.equal(redactUrlCredentials('connect to postgres://u:pw@h:5432/db failed; redis://:pw@r ok'), 'connect to postgres://[redacted]@h:5432/db failed; redis://[redacted]@r ok');
});

test('database URLs resolve relative SQLite paths against the base folder', () => {
  assert.deepEqual(parseDatabaseUrl('sqlite:data/a.db', '/srv'), { kind: 'sqlite', path: '/srv/data/a.db' });
  assert.deepEqual(parseDatabaseUrl('sqlite:/var/a.db', '/srv'), { kind: 'sqlite', path: '/var/a.db' });
  assert.deepEqual(parseDatabaseUrl('sqlite::memory:', '/srv'), { kind: 'sqlite', path: ':memory:' });
  assert.deepEqual(parseDatabaseUrl('postgres://u@h/db', '/srv'), { kind: 'postgres', url: 'postgres://u@h/db' });
  assert.throws(() => parseDatabaseUrl('mysql://h/db', '/srv'), ConfigError);
});

test('durations: whole seconds or a unit, 0 allowed, the default when unset, nonsense and too long refused', () => {
  const schema = z.object({ TTL: setting.duration(86_400_000, 30 * 86_400_000) });
  assert.equal(parseSettings(schema, {}).TTL, 86_400_000);
  assert.equal(parseSettings(schema, { TTL: '' }).TTL, 86_400_000);
  assert.equal(parseSettings(schema, { TTL: '0' }).TTL, 0);
  assert.equal(parseSettings(schema, { TTL: '90' }).TTL, 90_000);
  assert.equal(parseSettings(schema, { TTL: '30m' }).TTL, 1_800_000);
  assert.equal(parseSettings(schema, { TTL: '24H' }).TTL, 86_400_000);
  assert.equal(parseSettings(schema, { TTL: '7d' }).TTL, 7 * 86_400_000);
  for (const bad of ['-1', '1.5h', '1w', 'day', '24 hours']) assert.throws(() => parseSettings(schema, { TTL: bad }), /TTL: must be a length of time/, bad);
  assert.throws(() => parseSettings(schema, { TTL: '31d' }), /TTL: must be at most 30 days/);
});
