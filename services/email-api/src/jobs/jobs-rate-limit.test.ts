import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openServiceCore } from '@mailconv/platform';
import { createTestDatabase, testBackends } from '@mailconv/platform/testing';
import { D, startRateLimitPeer, useRig, type RateLimitPeer, type RateLimitStyle } from '@mailconv/test-rig';
import { buildApp, EMAIL_KEY_PREFIX } from '../app.js';
import { loadEmailConfig } from '../config.js';
import { EMAIL_MIGRATIONS } from '../db/migrations.js';
import type { EmailTables } from '../db/schema.js';
import { jobsEnv } from './jobs.test-support.js';

// Issue 49: a bulk job rides out a mail server's rate limit. The peer answers 5 RCPTs in any
// 2 s (Gmail's is 5 in 10 s, shortened), then its rate-limit reply; the job's addresses all
// go to it (valid.test's MX address, the peer's port). alice and bob exist, the rest do not.
const COOLDOWN_MS = 1500;
const EMAILS = [`alice@${D.valid}`, `bob@${D.valid}`, ...Array.from({ length: 10 }, (_, i) => `nobody${i}@${D.valid}`)];

interface Run {
  job: { status: string; valid: number; invalid: number; unknown: number };
  results: Array<{ email: string; status: string; reason: string | null }>;
  attempts: number[];
  peer: RateLimitPeer;
  ms: number;
  /** `email_smtp_rate_limited_total` by provider after the job, and the most MX hosts `email_smtp_cooldown_hosts` showed while it ran. */
  metrics: { rateLimited: Map<string, number>; coolingMax: number; coolingSeen: boolean };
}

/** The samples of `name` in a /metrics scrape, by the value of its `label` ('' without labels). */
async function scrape(app: Awaited<ReturnType<typeof buildApp>>, name: string, label = ''): Promise<Map<string, number>> {
  const res = await app.inject({ method: 'GET', url: '/metrics' });
  assert.equal(res.statusCode, 200);
  const out = new Map<string, number>();
  for (const line of res.body.split('\n')) {
    const m = /^(\w+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (m?.[1] !== name) continue;
    out.set(label ? (new RegExp(`${label}="([^"]*)"`).exec(m[2] ?? '')?.[1] ?? '') : '', Number(m[3]));
  }
  return out;
}

async function runJob(backend: Parameters<typeof createTestDatabase>[0], style: RateLimitStyle, env: Record<string, string> = {}): Promise<Run> {
  const rig = await useRig();
  const peer = await startRateLimitPeer(rig.hosts.postfix, { style, perWindow: 5, windowMs: 2000 });
  const db = await createTestDatabase(backend);
  const config = loadEmailConfig(
    jobsEnv(rig, db.url, {
      EMAIL_SMTP_PORT: String(peer.port),
      EMAIL_JOBS_GREYLIST_RETRIES: '0',
      EMAIL_JOBS_RATE_LIMIT_RETRIES: '6',
      EMAIL_SMTP_RATE_LIMIT_COOLDOWN_MS: String(COOLDOWN_MS),
      EMAIL_SMTP_RATE_LIMIT_COOLDOWN_MAX_MS: String(2 * COOLDOWN_MS),
      ...env,
    }),
  );
  const app = await buildApp(config);
  const admin = await openServiceCore<EmailTables>({ database: config.database, migrations: EMAIL_MIGRATIONS, keyPrefix: EMAIL_KEY_PREFIX });
  try {
    const account = await admin.accounts.createAccount({ email: `limits-${style}@example.test`, plan: 'growth' });
    assert.ok(account.ok);
    const auth = { authorization: `Bearer ${account.apiKey}` };
    const started = Date.now();
    const submit = await app.inject({ method: 'POST', url: '/api/v1/jobs', headers: { ...auth, 'content-type': 'application/json' }, payload: JSON.stringify({ emails: EMAILS, use_smtp: true }) });
    assert.equal(submit.statusCode, 202, submit.body);
    const id = (submit.json() as { job_id: string }).job_id;
    let job: Run['job'];
    const metrics: Run['metrics'] = { rateLimited: new Map(), coolingMax: 0, coolingSeen: false };
    for (;;) {
      job = (await app.inject({ method: 'GET', url: `/api/v1/jobs/${id}`, headers: auth })).json();
      if (!['queued', 'processing'].includes(job.status)) break;
      const cooling = (await scrape(app, 'email_smtp_cooldown_hosts')).get('');
      if (cooling !== undefined) metrics.coolingSeen = true;
      metrics.coolingMax = Math.max(metrics.coolingMax, cooling ?? 0);
      await new Promise((r) => setTimeout(r, 50));
    }
    metrics.rateLimited = await scrape(app, 'email_smtp_rate_limited_total', 'provider');
    const ms = Date.now() - started;
    const results = ((await app.inject({ method: 'GET', url: `/api/v1/jobs/${id}/results?per_page=100`, headers: auth })).json() as { results: Run['results'] }).results;
    const chunks = await admin.database.db.selectFrom('job_chunks').select(['attempts']).where('job_id', '=', id).orderBy('idx').execute();
    return { job, results, attempts: chunks.map((c) => Number(c.attempts)), peer, ms, metrics };
  } finally {
    await app.close();
    await admin.close();
    await db.drop();
    await peer.close();
    await rig.release();
  }
}

/**
 * No session was opened to the host while it was cooling down after a rate-limit reply. The
 * cool-down starts when the prober reads the reply, which the peer (in this same process)
 * wrote a little earlier: a connection another lane began in between is not one opened
 * during the cool-down, hence the 250 ms grace. A retry without the cool-down comes 1 s after.
 */
function assertNoSessionDuringCoolDown(peer: RateLimitPeer): void {
  for (const t of peer.limitedAt) {
    const during = peer.sessions.filter((s) => s.openedAt > t + 250 && s.openedAt < t + COOLDOWN_MS - 50);
    assert.equal(during.length, 0, `sessions opened ${during.map((s) => s.openedAt - t).join(', ')} ms after a rate-limit reply (cool-down ${COOLDOWN_MS} ms)`);
  }
}

for (const backend of testBackends()) {
  for (const style of ['gmail', 'microsoft'] as const) {
    test(`a job rides out a ${style === 'gmail' ? '421 4.7.28' : '451 4.7.650'} rate limit: every address at its true verdict (${backend})`, { timeout: 90_000 }, async () => {
      const run = await runJob(backend, style);
      assert.ok(run.peer.limitedAt.length > 0, 'the peer rate-limited the job');
      assert.deepEqual(
        run.results.map((r) => [r.email, r.status, r.reason]),
        EMAILS.map((e, i) => [e, i < 2 ? 'valid' : 'invalid', i < 2 ? null : 'user_unknown']),
      );
      assert.deepEqual([run.job.status, run.job.valid, run.job.invalid, run.job.unknown], ['completed', 2, 10, 0]);
      assertNoSessionDuringCoolDown(run.peer);
      // The metrics (issue 49): the MX host cooling down, and rate-limit replies by the provider
      // the rules name for the MX host (mx.valid.test: no provider row, so its registrable domain).
      assert.ok(run.metrics.coolingSeen, 'email_smtp_cooldown_hosts is exposed');
      assert.equal(run.metrics.coolingMax, 1, 'email_smtp_cooldown_hosts showed the MX host cooling down');
      // Counted where the cool-down starts: Gmail's 421 closing the session counts as well as
      // Microsoft's per-recipient 451, once per session that met one, never more than the peer sent.
      assert.deepEqual([...run.metrics.rateLimited.keys()], [D.valid], `email_smtp_rate_limited_total by provider: ${JSON.stringify([...run.metrics.rateLimited])}`);
      const counted = run.metrics.rateLimited.get(D.valid) ?? 0;
      assert.ok(counted > 0 && counted <= run.peer.limitedAt.length, `email_smtp_rate_limited_total counted ${counted} for ${run.peer.limitedAt.length} rate-limit replies`);
    });
  }

  test(`with a rate-limit budget of 0 the limited addresses end unknown / smtp_rate_limited (${backend})`, { timeout: 60_000 }, async () => {
    const run = await runJob(backend, 'gmail', { EMAIL_JOBS_RATE_LIMIT_RETRIES: '0' });
    const limited = run.results.filter((r) => r.reason === 'smtp_rate_limited');
    assert.ok(limited.length > 0, 'some addresses were rate-limited');
    assert.ok(limited.every((r) => r.status === 'unknown'));
    assert.equal(run.job.status, 'completed');
    assert.equal(run.job.unknown, limited.length);
    assert.ok(run.attempts.every((a) => a === 0), `chunk attempts ${run.attempts.join(',')}`);
    // The others still got their true verdicts.
    for (const r of run.results.filter((x) => x.reason !== 'smtp_rate_limited')) assert.equal(r.reason, r.email.startsWith('nobody') ? 'user_unknown' : null, r.email);
  });

  test(`a permanent 550 5.7.1 block-list reply is smtp_blocked and not retried (${backend})`, { timeout: 60_000 }, async () => {
    // Greylisting retries on too: a 5.7.1 taken for greylisting or a rate limit would be asked again.
    const run = await runJob(backend, 'blocklist', { EMAIL_JOBS_GREYLIST_RETRIES: '2' });
    assert.deepEqual(new Set(run.results.map((r) => `${r.status}/${r.reason}`)), new Set(['unknown/smtp_blocked']));
    assert.equal(run.job.status, 'completed');
    assert.ok(run.attempts.every((a) => a === 0), `chunk attempts ${run.attempts.join(',')}`);
    assert.deepEqual([...run.metrics.rateLimited], [], 'a block is not counted as a rate limit');
    assert.equal(run.metrics.coolingMax, 0, 'a block starts no cool-down');
    // No second round: every session was opened before a retry could have been due (1 s at least).
    const opened = run.peer.sessions.map((s) => s.openedAt);
    assert.ok(Math.max(...opened) - Math.min(...opened) < 1000, `sessions opened over ${Math.max(...opened) - Math.min(...opened)} ms`);
  });
}
