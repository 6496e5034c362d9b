import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@mailconv/platform';
import { loadEmailConfig } from './config.js';
import { emailPlans } from './plans.js';

test('defaults: 127.0.0.1:8080, a SQLite file in the data folder, URLs from host and port', () => {
  const c = loadEmailConfig({}, '/srv/app');
  assert.equal(c.host, '127.0.0.1');
  assert.equal(c.port, 8080);
  assert.deepEqual(c.database, { kind: 'sqlite', path: '/srv/app/data/email/email.db' });
  assert.equal(c.publicBaseUrl, 'http://127.0.0.1:8080');
  assert.equal(c.trustProxy, false);
  assert.equal(c.bodyLimitBytes, 1_048_576);
});

test('EMAIL_DATABASE_URL moves the service to PostgreSQL; other settings apply as written', () => {
  const c = loadEmailConfig(
    { EMAIL_DATABASE_URL: 'postgres://u@db:5432/email', EMAIL_PORT: '9000', EMAIL_PUBLIC_BASE_URL: 'https://verify.example.test/', EMAIL_TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' },
    '/srv/app',
  );
  assert.deepEqual(c.database, { kind: 'postgres', url: 'postgres://u@db:5432/email' });
  assert.equal(c.port, 9000);
  assert.equal(c.publicBaseUrl, 'https://verify.example.test');
  assert.deepEqual(c.trustProxy, ['10.0.0.0/8', '127.0.0.1']);
  assert.equal(loadEmailConfig({ EMAIL_TRUST_PROXY: '2' }).trustProxy, 2);
});

test('a plans file changes plans field by field and is validated', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plans-'));
  const good = join(dir, 'good.json');
  writeFileSync(good, JSON.stringify({ plans: { free: { monthlyQuota: 1000 }, enterprise: { name: 'Enterprise', monthlyQuota: 1_000_000, rateLimitRpm: 5000, batchCap: 10_000, features: { smtp: true, webhooks: true, catch_all: true } } } }));
  const plans = emailPlans(good);
  assert.equal(plans.get('free')?.monthlyQuota, 1000);
  assert.equal(plans.get('free')?.batchCap, 100, 'unchanged fields keep their defaults');
  assert.equal(plans.get('enterprise')?.name, 'Enterprise');
  const bad = join(dir, 'bad.json');
  writeFileSync(bad, JSON.stringify({ plans: { free: { monthlyQuota: -1 }, huge: { name: 'H', monthlyQuota: 1, rateLimitRpm: 1, batchCap: 20_000, features: { smtp: true, webhooks: true, catch_all: true } } } }));
  assert.throws(() => emailPlans(bad), (err: unknown) => err instanceof ConfigError && err.problems.length === 2 && /batchCap/.test(err.message) && /monthlyQuota/.test(err.message));
  const broken = join(dir, 'broken.json');
  writeFileSync(broken, '{ plans: ');
  assert.throws(() => emailPlans(broken), ConfigError);
});

test('SMTP egresses: proxies and local addresses become the prober\'s egresses; a bad one is refused without its password', () => {
  // Settings are only read here (no engine is built), so the proxy's address is never dialled.
  const smtp = { EMAIL_SMTP_HELO: 'probe.example.com', EMAIL_SMTP_FROM: 'probe@example.com' };
  const c = loadEmailConfig({ ...smtp, EMAIL_SMTP_PROXIES: 'socks5://u:s3cret@10.0.0.5:1080?helo=out1.example.com', EMAIL_SMTP_SOURCE_ADDRESSES: '203.0.113.5' }, '/srv/app');
  assert.deepEqual(c.smtp?.egresses.map((e) => [e.name, e.helo ?? null]), [['socks5://10.0.0.5:1080', 'out1.example.com'], ['source:203.0.113.5', null]]);
  assert.deepEqual(loadEmailConfig(smtp, '/srv/app').smtp?.egresses, [], 'none: straight from this host');
  assert.throws(
    () => loadEmailConfig({ ...smtp, EMAIL_SMTP_PROXIES: 'socks5://u:s3cret@10.0.0.5' }, '/srv/app'),
    (err: unknown) => err instanceof ConfigError && /EMAIL_SMTP_PROXIES/.test(err.message) && !err.message.includes('s3cret'),
  );
});

test('SMTP self-check settings (issue 23): probe host, block lists (defaults, none), interval; bad values refused', () => {
  const smtp = { EMAIL_SMTP_HELO: 'probe.example.com', EMAIL_SMTP_FROM: 'probe@example.com' };
  const defaults = loadEmailConfig(smtp, '/srv/app').smtp?.selfCheck;
  assert.deepEqual(defaults, { probeHost: null, blocklists: ['zen.spamhaus.org', 'bl.spamcop.net', 'b.barracudacentral.org'], intervalMs: 300_000 });
  const set = loadEmailConfig({ ...smtp, EMAIL_SMTP_PROBE_HOST: 'mx.example.net', EMAIL_SMTP_BLOCKLISTS: 'Zen.Example, bl.example', EMAIL_SMTP_CHECK_INTERVAL_MS: '0' }, '/srv/app').smtp?.selfCheck;
  assert.deepEqual(set, { probeHost: { host: 'mx.example.net', port: 25 }, blocklists: ['zen.example', 'bl.example'], intervalMs: 0 });
  assert.deepEqual(loadEmailConfig({ ...smtp, EMAIL_SMTP_PROBE_HOST: '[::1]:2525', EMAIL_SMTP_BLOCKLISTS: 'none' }, '/srv/app').smtp?.selfCheck.probeHost, { host: '::1', port: 2525 });
  assert.deepEqual(loadEmailConfig({ ...smtp, EMAIL_SMTP_BLOCKLISTS: 'none' }, '/srv/app').smtp?.selfCheck.blocklists, []);
  for (const [name, value] of [['EMAIL_SMTP_PROBE_HOST', 'mx.example.net:99999'], ['EMAIL_SMTP_PROBE_HOST', 'a b'], ['EMAIL_SMTP_BLOCKLISTS', 'zen,not a zone'], ['EMAIL_SMTP_CHECK_INTERVAL_MS', '-1']] as const) {
    assert.throws(() => loadEmailConfig({ ...smtp, [name]: value }, '/srv/app'), (err: unknown) => err instanceof ConfigError && err.message.includes(name), `${name}=${value}`);
  }
});

test('EMAIL_SMTP_PROVIDER_LIMITS (issue 23): JSON or a file over the built-in table; a bad one is refused at start-up naming the problem', () => {
  const smtp = { EMAIL_SMTP_HELO: 'probe.example.com', EMAIL_SMTP_FROM: 'probe@example.com' };
  assert.equal(loadEmailConfig(smtp, '/srv/app').smtp?.providerLimits, null, 'unset: the built-in table');
  const inline = loadEmailConfig({ ...smtp, EMAIL_SMTP_PROVIDER_LIMITS: '{"google":{"sessions":2},"default":{"sessionsPerHost":3}}' }, '/srv/app').smtp?.providerLimits;
  assert.equal(inline?.rules.google?.limits?.sessions, 2);
  assert.equal(inline?.defaults.sessionsPerHost, 3);
  const dir = mkdtempSync(join(tmpdir(), 'email-limits-'));
  const file = join(dir, 'limits.json');
  writeFileSync(file, JSON.stringify({ gmx: { backoffMs: 1000, backoffMaxMs: 2000 } }));
  assert.equal(loadEmailConfig({ ...smtp, EMAIL_SMTP_PROVIDER_LIMITS: file }, '/srv/app').smtp?.providerLimits?.rules.gmx?.limits?.backoffMaxMs, 2000);
  for (const [value, problem] of [
    ['{"google":{"sessions":"many"}}', /EMAIL_SMTP_PROVIDER_LIMITS.*google\.sessions: must be a whole number/],
    ['{"gogle":{}}', /EMAIL_SMTP_PROVIDER_LIMITS.*unknown provider "gogle"/],
    [join(dir, 'missing.json'), /EMAIL_SMTP_PROVIDER_LIMITS.*cannot read the file/],
  ] as const) {
    assert.throws(
      () => loadEmailConfig({ ...smtp, EMAIL_SMTP_PROVIDER_LIMITS: value }, '/srv/app'),
      (err: unknown) => err instanceof ConfigError && problem.test(err.message.replaceAll('\n', ' ')),
    );
  }
});
