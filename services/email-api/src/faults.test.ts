import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { openServiceCore } from '@mailconv/platform';
import { createTestDatabase, freePort, startOwnPostgres, startOwnRedis, startProcess, startTcpRelay, stopProcess, testBackends, type OwnServer, type StartedProcess, type TcpRelay } from '@mailconv/platform/testing';
import { D, loadDomains, useRig, type RigHandle } from '@mailconv/test-rig';
import { EMAIL_KEY_PREFIX } from './app.js';
import { loadEmailConfig } from './config.js';
import { EMAIL_MIGRATIONS } from './db/migrations.js';
import type { EmailTables } from './db/schema.js';
import { slowAddresses } from './jobs/jobs.test-support.js';

const SERVER = fileURLToPath(new URL('./server.js', import.meta.url));
const WORKER = fileURLToPath(new URL('./worker.js', import.meta.url));
const LEASE_MS = 1500;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One answer a client saw: status, error code and `Retry-After`. */
interface Seen {
  what: string;
  status: number;
  error?: string;
  retryAfter: string | null;
}

/** The answers of a fault: 200s and 202s, or 503 `service_unavailable` with a `Retry-After`; never a 500, never a hang (each call is cut at 10 s). */
function assertClearErrors(seen: readonly Seen[]): void {
  for (const s of seen) {
    if (s.status < 300) continue;
    assert.equal(s.status, 503, `${s.what}: ${JSON.stringify(s)}`);
    assert.equal(s.error, 'service_unavailable', s.what);
    assert.ok(Number(s.retryAfter) >= 1, `${s.what}: Retry-After ${s.retryAfter}`);
  }
}

/**
 * Issue #15, the faults proof. Every case runs the email service as it is scaled out (an
 * API process without workers and a worker process, on PostgreSQL + Redis) against a
 * PostgreSQL and a Redis of this file's own, so stopping them disturbs nothing else; DNS,
 * SMTP and webhooks stay on loopback (the rig, a UDP relay and an HTTP receiver of the
 * test's own). Each case ends with the service recovered and every count exact: nothing
 * lost, nothing done twice. Two lanes run side by side (issue 44): the cases that stop or cut
 * the servers, one after another, on the file's first PostgreSQL and Redis; the SMTP tarpit
 * case (40 s of a peer that hangs, mostly waiting) and the DNS case on a second pair that
 * nothing stops, so no case ever sees another's fault. Bounded: at most 5 service processes
 * at a time (3 in the tarpit case, 2 in the other lane; 256 MB of heap each), 120 s a case,
 * 600 s in all (measured alone: 2 min one case after another, 1.1 min in two lanes).
 */
describe('faults: the email service on a PostgreSQL and a Redis of its own', { skip: !testBackends().includes('postgres'), timeout: 600_000, concurrency: 2 }, () => {
  /** The servers the outage cases stop and restart. */
  let pg: OwnServer;
  let redis: OwnServer;
  /** The servers of the lane beside them, which nothing stops. */
  let steady: { pg: OwnServer; redis: OwnServer };
  let rig: RigHandle;
  before(async () => {
    let steadyPg: OwnServer;
    let steadyRedis: OwnServer;
    [pg, redis, steadyPg, steadyRedis, rig] = await Promise.all([startOwnPostgres(), startOwnRedis(), startOwnPostgres(), startOwnRedis(), useRig()]);
    steady = { pg: steadyPg, redis: steadyRedis };
  });
  after(async () => {
    await Promise.all([pg?.close(), redis?.close(), steady?.pg.close(), steady?.redis.close(), rig?.release()]);
  });

  /**
   * A fresh database on an own server (`servers`, the outage lane's by default), an account,
   * one API process and `workers` worker processes (reaching PostgreSQL through `relay` when given).
   */
  async function cluster(extra: Record<string, string> = {}, workers = 1, relay?: TcpRelay, servers: { pg: OwnServer; redis: OwnServer } = { pg, redis }) {
    const db = await createTestDatabase('postgres', servers.pg.url);
    const port = await freePort();
    const env: Record<string, string> = {
      EMAIL_DATABASE_URL: db.url,
      EMAIL_REDIS_URL: servers.redis.url,
      EMAIL_JOBS_QUEUE: `faults-${randomUUID()}`,
      EMAIL_LOG_LEVEL: 'info',
      EMAIL_DNS_SERVERS: rig.dnsServer,
      EMAIL_DNS_TIMEOUT_MS: '150',
      EMAIL_JOBS_CHUNK_SIZE: '10',
      EMAIL_JOBS_WORKERS: '2',
      EMAIL_JOBS_POLL_MS: '50',
      EMAIL_JOBS_LEASE_MS: String(LEASE_MS),
      EMAIL_WEBHOOKS_RESTRICT_TO: '127.0.0.0/8,::1/128',
      // Memory bound of each service process.
      NODE_OPTIONS: '--max-old-space-size=256',
      ...extra,
    };
    const admin = await openServiceCore<EmailTables>({ database: loadEmailConfig(env).database, migrations: EMAIL_MIGRATIONS, keyPrefix: EMAIL_KEY_PREFIX });
    const acct = await admin.accounts.createAccount({ email: 'faults@example.test', plan: 'growth' });
    assert.ok(acct.ok);
    const processes: StartedProcess[] = [];
    // The service's processes may reach PostgreSQL through a relay; the test's own checks go direct.
    const processEnv = relay ? { ...env, EMAIL_DATABASE_URL: relay.via(db.url) } : env;
    try {
      processes.push(await startProcess(SERVER, { ...processEnv, EMAIL_JOBS_WORKERS: '0', EMAIL_PORT: String(port) }));
      for (let i = 0; i < workers; i++) processes.push(await startProcess(WORKER, processEnv));
    } catch (err) {
      await Promise.all(processes.map((p) => stopProcess(p.child, 'SIGKILL')));
      throw err;
    }
    const base = `http://127.0.0.1:${port}`;
    const seen: Seen[] = [];
    /** A call as a client makes it, recorded in `seen`; cut after 10 s (a hang fails the case). */
    const call = async (what: string, method: string, path: string, body?: unknown) => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${acct.apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(10_000),
      }).catch((err: unknown) => {
        throw new Error(`${what} ${method} ${path}: no answer (${(err as Error).name}: ${(err as Error).message})`);
      });
      const json = (await res.json()) as Record<string, unknown>;
      seen.push({ what, status: res.status, ...(typeof json.error === 'string' ? { error: json.error } : {}), retryAfter: res.headers.get('retry-after') });
      return { status: res.status, body: json };
    };
    const submit = async (emails: readonly string[], options: Record<string, unknown> = {}) => {
      const r = await call('submit', 'POST', '/api/v1/jobs', { emails, ...options });
      assert.equal(r.status, 202, JSON.stringify(r.body));
      return r.body.job_id as string;
    };
    const job = async (id: string) => (await admin.database.db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow());
    /** Polls the job through the API until it ends; it must complete within `ms`. */
    const completion = async (id: string, ms = 60_000) => {
      for (const deadline = Date.now() + ms; Date.now() < deadline; await sleep(100)) {
        const r = await call('poll', 'GET', `/api/v1/jobs/${id}`);
        if (r.status === 200 && r.body.status !== 'queued' && r.body.status !== 'processing') {
          assert.equal(r.body.status, 'completed', JSON.stringify(r.body));
          return r.body;
        }
      }
      const chunks = await admin.database.db.selectFrom('job_chunks').select(['idx', 'state', 'lease_token', 'lease_until']).where('job_id', '=', id).where('state', '!=', 'done').execute();
      return assert.fail(`job ${id} did not complete within ${ms} ms: ${JSON.stringify(await job(id))}; chunks not done: ${JSON.stringify(chunks)}; answers: ${JSON.stringify(seen.slice(-5))}`);
    };
    /** Every address once, in order; counters equal to the stored rows; `total` charged once, nothing refunded; one `job.completed`. */
    const assertExact = async (ids: Array<{ id: string; emails: readonly string[] }>) => {
      for (const { id, emails } of ids) {
        const view = await completion(id);
        const results = (await call('results', 'GET', `/api/v1/jobs/${id}/results?per_page=5000`)).body.results as Array<{ email: string; status: 'valid' | 'invalid' | 'risky' | 'unknown' }>;
        assert.deepEqual(results.map((r) => r.email), emails, 'every address once, in input order');
        const tally = { valid: 0, invalid: 0, risky: 0, unknown: 0 };
        for (const r of results) tally[r.status] += 1;
        assert.deepEqual([view.processed, view.valid, view.invalid, view.risky, view.unknown], [emails.length, tally.valid, tally.invalid, tally.risky, tally.unknown]);
        const reservation = await admin.database.db.selectFrom('quota_reservations').select(['units', 'refunded']).where('id', '=', (await job(id)).reservation_id).executeTakeFirstOrThrow();
        assert.deepEqual(reservation, { units: emails.length, refunded: 0 });
      }
      const total = ids.reduce((n, j) => n + j.emails.length, 0);
      const singles = seen.filter((s) => s.what === 'verify' && s.status === 200).length;
      assert.equal(await admin.quota.used(acct.account.id), total + singles, 'each job address and each answered single verification charged once');
      const events = await admin.database.db.selectFrom('events').select(['type']).where('account_id', '=', acct.account.id).execute();
      assert.deepEqual(events.map((e) => e.type), ids.map(() => 'job.completed'));
    };
    /** Calls a client keeps making during a fault, back to back, until `stop` is set. */
    const keepCalling = (stop: { done: boolean }, calls: Array<() => Promise<unknown>>) =>
      (async () => {
        while (!stop.done) {
          for (const c of calls) await c().catch((err: unknown) => seen.push({ what: `threw: ${(err as Error).message}`, status: 0, retryAfter: null }));
          await sleep(50);
        }
      })();
    const close = async () => {
      for (const p of processes) assert.ok([0, null].includes(await stopProcess(p.child, 'SIGTERM')), 'graceful exit after the fault');
      await admin.close();
      await db.drop();
    };
    const kill = async () => {
      // What the processes said, for the failure report (their warnings and errors).
      for (const p of processes) {
        const notes = p.lines.filter((l) => /"level":(40|50|60)/.test(l)).slice(-15);
        if (notes.length) process.stderr.write(`${String(p.ready.service)} ${p.child.pid}:\n${notes.map((l) => l.slice(0, 600)).join('\n')}\n`);
      }
      await Promise.all(processes.map((p) => stopProcess(p.child, 'SIGKILL')));
      await admin.close().catch(() => undefined);
      await db.drop().catch(() => undefined);
    };
    return { env, admin, acct, base, seen, call, submit, job, completion, assertExact, keepCalling, close, kill, processes };
  }

  /** A job long enough to span a fault: `n` addresses in chunks of ten, one at the silent resolver per chunk (a few hundred ms each). */
  const longList = (n: number, tag: string) => {
    const domains = loadDomains();
    const slow = slowAddresses(n / 10, tag);
    return Array.from({ length: n }, (_, i) => (i % 10 === 3 ? slow[Math.floor(i / 10)]! : `${tag}${i}@${domains[(i * 7) % domains.length]!}`));
  };
  const progressed = async (c: Awaited<ReturnType<typeof cluster>>, id: string, processed: number) => {
    for (const deadline = Date.now() + 30_000; (await c.job(id)).processed < processed; await sleep(20)) assert.ok(Date.now() < deadline, 'the job made no progress');
  };

  // The outage lane: each of these stops, cuts or starves something, one case after another
  // (concurrency 1: a suite's subtests would otherwise inherit the file's 2).
  describe('the cases that stop or cut its PostgreSQL and Redis, one after another', { concurrency: 1 }, () => {
    test('PostgreSQL restarted during a job: clients get 503 with Retry-After meanwhile (never 500); the job completes exactly once; a submit refused meanwhile stores and charges nothing', { timeout: 120_000 }, async () => {
      const c = await cluster();
      try {
        const emails = longList(300, 'pg');
        const id = await c.submit(emails);
        await progressed(c, id, 40);
        const stop = { done: false };
        await pg.stop();
        const during = c.keepCalling(stop, [
          () => c.call('poll', 'GET', `/api/v1/jobs/${id}`),
          () => c.call('verify', 'POST', '/api/v1/verify-single', { email: `during@${D.valid}` }),
          () => c.call('submit-during', 'POST', '/api/v1/jobs', { emails: [`x@${D.valid}`] }),
        ]);
        await sleep(3000);
        const atRestart = c.seen.length;
        await pg.start();
        await sleep(1000);
        stop.done = true;
        await during;
        const outage = c.seen.slice(0, atRestart);
        assert.ok(outage.some((s) => s.status === 503), 'the outage was visible as 503');
        assert.ok(outage.filter((s) => s.what === 'submit-during').every((s) => s.status === 503), 'no submit accepted while the database was down');
        assertClearErrors(c.seen);
        const accepted = c.seen.filter((s) => s.what === 'submit-during' && s.status === 202).length;
        const later = (await c.admin.database.db.selectFrom('jobs').select(['id']).where('account_id', '=', c.acct.account.id).where('id', '!=', id).orderBy('id').execute()).map((j) => ({ id: j.id, emails: [`x@${D.valid}`] }));
        assert.equal(later.length, accepted, 'a job for each 202 after the restart, none for a 503');
        await c.assertExact([{ id, emails }, ...later]);
        assert.equal((await fetch(`${c.base}/readyz`)).status, 200, 'recovered');
        await c.close();
      } catch (err) {
        await c.kill();
        throw err;
      }
    });

    test('the connection to PostgreSQL cut mid-job (a relay cutting every connection 30 times, then down 3 s, then restored): no process exits, clients get 503 with Retry-After meanwhile, the job completes with every address exactly once', { timeout: 120_000 }, async () => {
      const target = new URL(pg.url);
      const relay = await startTcpRelay(target.hostname, Number(target.port));
      const c = await cluster({}, 1, relay);
      try {
        const emails = longList(300, 'cut');
        const id = await c.submit(emails);
        await progressed(c, id, 40);
        const stop = { done: false };
        // A flapping path first: every connection of both processes dies where it stands, 30
        // times, 100 ms apart — mid-query, idle, or held by a chunk transaction between two of
        // its statements (the case that crashed the process) — then the path stays down for 3 s.
        for (let i = 0; i < 30; i++) {
          relay.cut();
          await sleep(100);
        }
        relay.setDown(true);
        const during = c.keepCalling(stop, [
          () => c.call('poll', 'GET', `/api/v1/jobs/${id}`),
          () => c.call('verify', 'POST', '/api/v1/verify-single', { email: `during@${D.valid}` }),
        ]);
        await sleep(3000);
        const atRestore = c.seen.length;
        relay.setDown(false);
        await sleep(1000);
        stop.done = true;
        await during;
        assert.ok(c.seen.slice(0, atRestore).some((s) => s.status === 503), 'the cut was visible as 503');
        assertClearErrors(c.seen);
        for (const p of c.processes) {
          assert.equal(p.child.exitCode, null, `process ${p.child.pid} exited`);
          assert.ok(!p.lines.some((l) => l.includes('uncaught')), `process ${p.child.pid} logged an uncaught error`);
        }
        await c.assertExact([{ id, emails }]);
        assert.equal((await fetch(`${c.base}/readyz`)).status, 200, 'recovered');
        await c.close();
      } catch (err) {
        await c.kill();
        throw err;
      } finally {
        await relay.close();
      }
    });

    test('Redis stopped and started during a job: answers stay prompt (a submit meanwhile is 202, its chunks found by the database poll), /readyz names Redis; every job completes exactly once', { timeout: 120_000 }, async () => {
      const c = await cluster();
      try {
        const first = longList(300, 'rd');
        const id = await c.submit(first);
        await progressed(c, id, 40);
        await redis.stop();
        const second = longList(100, 'rd2');
        const t0 = Date.now();
        const id2 = await c.submit(second);
        assert.ok(Date.now() - t0 < 3000, `the submit answered in ${Date.now() - t0} ms, not held until Redis came back`);
        const ready = await fetch(`${c.base}/readyz`);
        assert.equal(ready.status, 503);
        assert.deepEqual(((await ready.json()) as { checks: Record<string, string> }).checks, { database: 'ok', storage: 'ok', redis: 'error' });
        const stop = { done: false };
        const during = c.keepCalling(stop, [() => c.call('poll', 'GET', `/api/v1/jobs/${id}`), () => c.call('verify', 'POST', '/api/v1/verify-single', { email: `during@${D.valid}` })]);
        await sleep(2000);
        // Redis comes back empty (no persistence): the queue's messages are gone; the database is the record.
        await redis.start();
        await sleep(500);
        stop.done = true;
        await during;
        assertClearErrors(c.seen);
        assert.ok(c.seen.every((s) => s.status < 300), 'rate limits fell back to memory: nothing refused');
        await c.assertExact([{ id, emails: first }, { id: id2, emails: second }]);
        for (let i = 0; i < 50 && (await fetch(`${c.base}/readyz`)).status !== 200; i++) await sleep(100);
        assert.equal((await fetch(`${c.base}/readyz`)).status, 200, 'recovered');
        await c.close();
      } catch (err) {
        await c.kill();
        throw err;
      }
    });

    test('a webhook receiver down for a while, then back: each event is delivered exactly once after it returns, by whichever process retries first', { timeout: 120_000 }, async () => {
      const port = await freePort();
      const received: Array<{ event: string; job_id: string }> = [];
      let receiver: Server | null = null;
      const c = await cluster({ EMAIL_WEBHOOKS_ALLOW_INSECURE: 'true', EMAIL_WEBHOOKS_RETRY_SCHEDULE: Array.from({ length: 20 }, () => '500ms').join(','), EMAIL_WEBHOOKS_POLL_MS: '100', EMAIL_WEBHOOKS_TIMEOUT_MS: '2000' });
      try {
        const hook = await c.call('webhook', 'POST', '/api/dashboard/webhooks', { url: `http://127.0.0.1:${port}/hook`, events: 'job.completed' });
        assert.equal(hook.status, 200, JSON.stringify(hook.body));
        const domains = loadDomains();
        const jobs = [];
        for (let j = 0; j < 3; j++) {
          const emails = Array.from({ length: 15 }, (_, i) => `w${j}-${i}@${domains[j * 15 + i]!}`);
          jobs.push({ id: await c.submit(emails), emails });
        }
        for (const j of jobs) await c.completion(j.id);
        // Down: every event has failed at least twice before the receiver comes back.
        for (const deadline = Date.now() + 20_000; ; await sleep(100)) {
          const rows = await c.admin.database.db.selectFrom('webhook_deliveries').select(['failures', 'state']).where('account_id', '=', c.acct.account.id).execute();
          if (rows.length === 3 && rows.every((r) => r.failures >= 2 && r.state === 'pending')) break;
          assert.ok(Date.now() < deadline, `deliveries did not fail while the receiver was down: ${JSON.stringify(rows)}`);
        }
        receiver = createServer((req, res) => {
          const chunks: Buffer[] = [];
          req.on('data', (b: Buffer) => chunks.push(b));
          req.on('end', () => {
            received.push(JSON.parse(Buffer.concat(chunks).toString()) as { event: string; job_id: string });
            res.writeHead(204).end();
          });
        });
        await new Promise<void>((r) => receiver!.listen(port, '127.0.0.1', () => r()));
        for (const deadline = Date.now() + 20_000; received.length < 3; await sleep(50)) assert.ok(Date.now() < deadline, `only ${received.length} deliveries after the receiver came back`);
        await sleep(2000); // any duplicate would arrive within a few retry periods
        assert.deepEqual(received.map((r) => r.job_id).sort(), jobs.map((j) => j.id).sort(), 'one delivery per event');
        assert.ok(received.every((r) => r.event === 'job.completed'));
        const rows = await c.admin.database.db.selectFrom('webhook_deliveries').select(['state']).where('account_id', '=', c.acct.account.id).execute();
        assert.deepEqual(rows.map((r) => r.state), ['delivered', 'delivered', 'delivered']);
        assertClearErrors(c.seen);
        await c.assertExact(jobs);
        await c.close();
      } catch (err) {
        await c.kill();
        throw err;
      } finally {
        await new Promise((r) => (receiver ? receiver.close(r) : r(undefined)));
      }
    });
  });

  // Beside it, on servers nothing stops: the tarpit case waits on a hung peer most of its 40 s.
  describe('the SMTP and DNS cases, on a PostgreSQL and a Redis nothing stops', { concurrency: 1 }, () => {
    test('an SMTP peer that hangs (the rig\'s tarpit, 20 s on each RCPT): the chunks it holds keep their leases (no second worker redoes them), the API stays prompt, the job completes exactly once', { timeout: 120_000 }, async () => {
      const c = await cluster({ EMAIL_SMTP_HELO: 'probe.mailconv.test', EMAIL_SMTP_FROM: 'probe@mailconv.test', EMAIL_SMTP_ALLOW_PRIVATE: 'true', EMAIL_SMTP_RESTRICT_TO: '127.0.0.0/8', EMAIL_SMTP_PORT: String(rig.smtpPort) }, 2, undefined, steady);
      try {
        // Two chunks of ten, the first with one address at the tarpit.
        const emails = Array.from({ length: 20 }, (_, i) => (i === 4 ? `stuck${i}@${D.slow}` : `${i % 3 ? 'alice' : 'nobody'}@${D.valid}`));
        const id = await c.submit(emails, { use_smtp: true });
        const tokens = new Map<number, Set<string>>();
        let prompt = 0;
        let asked = 0;
        for (const deadline = Date.now() + 60_000; ; await sleep(200)) {
          const j = await c.job(id);
          if (j.status === 'completed') break;
          assert.ok(Date.now() < deadline, 'the job did not complete');
          for (const ch of await c.admin.database.db.selectFrom('job_chunks').select(['idx', 'lease_token']).where('job_id', '=', id).where('state', '=', 'leased').execute()) {
            tokens.set(ch.idx, (tokens.get(ch.idx) ?? new Set()).add(ch.lease_token!));
          }
          // The API answers while the workers' chunks hang.
          const t0 = Date.now();
          const r = await c.call('verify', 'POST', '/api/v1/verify-single', { email: `alice@${D.valid}` });
          assert.equal(r.status, 200);
          asked++;
          if (Date.now() - t0 < 2000) prompt++;
        }
        assert.ok(asked >= 5 && prompt >= asked / 2, `the API answered promptly ${prompt} of ${asked} times while the peer hung`);
        assert.deepEqual([...tokens.values()].map((s) => s.size), [...tokens.values()].map(() => 1), 'each chunk claimed once: its lease was renewed through the hang (lease 1.5 s, peer 20 s)');
        const results = (await c.call('results', 'GET', `/api/v1/jobs/${id}/results?per_page=100`)).body.results as Array<{ email: string; reason: string }>;
        assert.equal(results.filter((r) => r.email.startsWith('stuck')).length, 1);
        assert.ok(tokens.get(0)?.size === 1, 'the chunk at the tarpit was seen held');
        assertClearErrors(c.seen);
        await c.assertExact([{ id, emails }]);
        await c.close();
      } catch (err) {
        await c.kill();
        throw err;
      }
    });

    test('the DNS server silent, then back: verifications answer promptly as unknown/dns_error (not an error status), jobs complete with exact counts; once it answers again, the same domains verify normally (no failure was cached)', { timeout: 120_000 }, async () => {
      // A UDP relay of the test's own in front of the rig's resolver, that can go silent.
      const relay = createSocket('udp4');
      const upstream = rig.dnsServer.split(':');
      const clients = new Map<number, { port: number; address: string }>();
      let silent = false;
      const out = createSocket('udp4');
      relay.on('message', (msg, from) => {
        if (silent) return;
        clients.set(msg.readUInt16BE(0), { port: from.port, address: from.address });
        out.send(msg, Number(upstream[1]), upstream[0]);
      });
      out.on('message', (msg) => {
        const to = clients.get(msg.readUInt16BE(0));
        if (to && !silent) relay.send(msg, to.port, to.address);
      });
      await new Promise<void>((r) => relay.bind(0, '127.0.0.1', () => r()));
      await new Promise<void>((r) => out.bind(0, '127.0.0.1', () => r()));
      const c = await cluster({ EMAIL_DNS_SERVERS: `127.0.0.1:${relay.address().port}`, EMAIL_DNS_TIMEOUT_MS: '1000' }, 1, undefined, steady);
      try {
        const domains = loadDomains().slice(5000, 5040);
        const list = (tag: string) => domains.map((d) => `${tag}@${d}`);
        silent = true;
        const t0 = Date.now();
        const single = await c.call('verify', 'POST', '/api/v1/verify-single', { email: `solo@${domains[0]!}` });
        // One try of 1 s and a retry of 2 s (c-ares doubles it), then the answer.
        assert.ok(Date.now() - t0 < 8000, `answered in ${Date.now() - t0} ms`);
        assert.equal(single.status, 200);
        assert.deepEqual([single.body.status, single.body.reason], ['unknown', 'dns_error']);
        const quiet = list('quiet');
        const id = await c.submit(quiet);
        const view = await c.completion(id, 30_000);
        assert.equal(view.unknown, quiet.length, 'every address undecided, none lost');
        silent = false;
        const back = await c.call('verify', 'POST', '/api/v1/verify-single', { email: `solo@${domains[0]!}` });
        assert.notEqual(back.body.reason, 'dns_error', 'recovered: the failure was not cached');
        const loud = list('loud');
        const id2 = await c.submit(loud);
        const view2 = await c.completion(id2, 30_000);
        assert.equal(view2.unknown, 0, 'recovered: the same domains resolve again');
        assertClearErrors(c.seen);
        await c.assertExact([{ id, emails: quiet }, { id: id2, emails: loud }]);
        await c.close();
      } catch (err) {
        await c.kill();
        throw err;
      } finally {
        relay.close();
        out.close();
      }
    });
  });
});
