import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createTestDatabase } from '@mailconv/platform/testing';

const run = promisify(execFile);
const SERVER = fileURLToPath(new URL('./server.js', import.meta.url));
const ADMIN = fileURLToPath(new URL('./admin.js', import.meta.url));
const WORKER = fileURLToPath(new URL('./worker.js', import.meta.url));

let url: string;
let drop: () => Promise<void>;
before(async () => ({ url, drop } = await createTestDatabase('sqlite')));
after(async () => drop());

test('the conversion server refuses bad settings, listing every problem at once', async () => {
  await assert.rejects(
    run(process.execPath, [SERVER], { env: { ...process.env, CONVERT_PORT: '70000', CONVERT_PUBLIC_BASE_URL: 'not a url', CONVERT_BODY_LIMIT_BYTES: '-1' } }),
    (err: { code: number; stderr: string }) => {
      assert.equal(err.code, 1);
      for (const name of ['CONVERT_PORT', 'CONVERT_PUBLIC_BASE_URL', 'CONVERT_BODY_LIMIT_BYTES']) assert.match(err.stderr, new RegExp(name));
      return true;
    },
  );
});

// Issue #15: a mistyped URL printed its password in the start-up error.
test('a bad URL setting is named with its rule, its value (and password) never printed', async () => {
  const secrets = { CONVERT_DATABASE_URL: 'postgress://admin:hunter2-db@db.example.test/x', CONVERT_REDIS_URL: 'redis:/:hunter2-redis@cache.example.test:6379' };
  for (const file of [SERVER, WORKER]) {
    await assert.rejects(run(process.execPath, [file], { env: { ...process.env, ...secrets, CONVERT_ROLE: 'both' } }), (err: { code: number; stdout: string; stderr: string }) => {
      assert.equal(err.code, 1, file);
      assert.match(err.stderr, /CONVERT_DATABASE_URL: must be sqlite:PATH or postgres/);
      assert.match(err.stderr, /CONVERT_REDIS_URL: must be redis:\/\/… or rediss:\/\/…/);
      assert.match(err.stderr, /CONVERT_ROLE: must be all, api or worker/);
      assert.doesNotMatch(err.stderr + err.stdout, /hunter2|example\.test/);
      return true;
    });
  }
});

test('admin CLI of the conversion service: its own accounts, plans and key prefix', async () => {
  const env = { ...process.env, CONVERT_DATABASE_URL: url };
  const { stdout } = await run(process.execPath, [ADMIN, 'create-account', '--email', 'conv@example.test', '--plan', 'pro', '--json'], { env });
  const acct = JSON.parse(stdout) as Record<string, string>;
  assert.deepEqual(Object.keys(acct), ['account_id', 'email', 'plan', 'api_key']);
  assert.match(acct.api_key!, /^cv_live_[0-9A-Za-z]{32}$/);
  assert.equal(acct.plan, 'pro');
  await assert.rejects(run(process.execPath, [ADMIN, 'create-account', '--email', 'x@example.test', '--plan', 'scale'], { env }), (err: { code: number; stderr: string }) => {
    assert.equal(err.code, 2);
    assert.match(err.stderr, /unknown plan "scale"; plans: free, starter, pro, business, api/);
    return true;
  });
});
