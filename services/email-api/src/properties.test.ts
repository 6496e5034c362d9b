// Bad input at scale (issue #15): property-based requests (fast-check) over every JSON route
// of the email service — bodies, query strings, path segments and headers — each answered
// with a status documented for the route, in the contract's error shape with a code from the
// closed list, never a 500; the process serves normally afterwards. Seeded (the seed is
// printed; PROPERTY_SEED replays it) and bounded in runs and time: about 20–40 s per backend
// on 2 busy cores. Regressions the properties found are kept as plain tests below.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { openServiceCore, type ServiceApp, type ServiceCore } from '@mailconv/platform';
import {
  answerChecker, assertRequestsKeepContract, assertSchemaRequestsKeepContract, contentTypes, contractProblems, createTestDatabase, headerText, hostileBody, hostileJson, hostilePayload, hostileQuery, hostileString,
  oddHeaders, pathSegment, propertySeed, recordAnswers, testBackends, type RecordedAnswer,
} from '@mailconv/platform/testing';
import { D, REBIND_PUBLIC_ADDRESS, useRig, type RigHandle } from '@mailconv/test-rig';
import { buildApp, EMAIL_KEY_PREFIX } from './app.js';
import { loadEmailConfig } from './config.js';
import { EMAIL_MIGRATIONS } from './db/migrations.js';
import { EMAIL_ERROR_STATUS } from './errors.js';

const SEED = propertySeed();
const SCALE = Number(process.env.PROPERTY_RUNS ?? '1');
const backends = testBackends();
/** Runs per backend: the service's whole property suite stays under a minute. */
const RUNS = Math.max(20, Math.round((2400 * SCALE) / backends.length));
const TIME_LIMIT_MS = Math.round((40_000 * SCALE) / backends.length);
/** The schema-driven requests (issue #29): a few hundred per service, over every documented operation. */
const SCHEMA_RUNS = Math.max(20, Math.round((400 * SCALE) / backends.length));
const SCHEMA_TIME_LIMIT_MS = Math.round((40_000 * SCALE) / backends.length);

/** Addresses that reach every branch of the verifier on the rig, and some that are not addresses. */
const emailish = fc.oneof(
  fc.constantFrom(`alice@${D.valid}`, `nobody@${D.valid}`, `x@${D.catchAll}`, `x@${D.nullMx}`, `x@${D.nxdomain}`, `x@${D.aOnly}`, `x@${D.noMail}`, 'not-an-address', 'a@[127.0.0.1]'),
  hostileString,
);
const smallList = fc.array(emailish, { minLength: 0, maxLength: 6 });

type Request = InjectOptions & { url: string };

/** A public literal the guard accepts: only classified, never called (no dispatcher runs here). */
const PUBLIC_HOOK = `https://${REBIND_PUBLIC_ADDRESS}/hooks/props`;

for (const backend of backends) {
  describe(`email API under property-based requests on ${backend}`, () => {
    let rig: RigHandle;
    let drop: () => Promise<void>;
    let app: ServiceApp;
    let admin: ServiceCore<never>;
    let key: string;
    let freeKey: string;
    let jobId: string;
    let webhookId: string;
    let work: string;
    let answers: RecordedAnswer[] = [];

    before(async () => {
      rig = await useRig();
      const db = await createTestDatabase(backend);
      drop = db.drop;
      work = await mkdtemp(join(tmpdir(), 'email-props-'));
      // Rate limits out of the way: the properties are about input, not throughput.
      const plans = join(work, 'plans.json');
      await writeFile(plans, JSON.stringify({ plans: { scale: { rateLimitRpm: 1_000_000, monthlyQuota: 100_000_000 }, free: { rateLimitRpm: 1_000_000 } } }));
      const config = loadEmailConfig({
        EMAIL_DATABASE_URL: db.url,
        EMAIL_LOG_LEVEL: 'silent',
        EMAIL_DNS_SERVERS: rig.dnsServer,
        EMAIL_DNS_TIMEOUT_MS: '200',
        EMAIL_PLANS_FILE: plans,
        EMAIL_PUBLIC_RPM: '1000000',
        EMAIL_PUBLIC_BASE_URL: 'https://verify.example.test',
        EMAIL_JOBS_WORKERS: '1',
        EMAIL_JOBS_POLL_MS: '50',
        EMAIL_WEBHOOKS_RESTRICT_TO: '127.0.0.0/8,::1/128',
        EMAIL_WEBHOOKS_CONCURRENCY: '0',
      });
      // Webhook host names resolve through the rig only (loopback), and nothing is delivered.
      app = await buildApp(config, { webhookDnsServers: [rig.dnsServer] });
      answers = recordAnswers(app);
      admin = await openServiceCore({ database: config.database, migrations: EMAIL_MIGRATIONS, keyPrefix: EMAIL_KEY_PREFIX });
      const scale = await admin.accounts.createAccount({ email: 'props@example.test', plan: 'scale' });
      const free = await admin.accounts.createAccount({ email: 'props-free@example.test', plan: 'free' });
      assert.ok(scale.ok && free.ok);
      key = scale.apiKey;
      freeKey = free.apiKey;
      const auth = { authorization: `Bearer ${key}` };
      const job = await app.inject({ method: 'POST', url: '/api/v1/jobs', headers: auth, payload: { emails: [`alice@${D.valid}`, `bob@${D.valid}`] } });
      assert.equal(job.statusCode, 202, job.body);
      jobId = job.json().job_id;
      const hook = await app.inject({ method: 'POST', url: '/api/dashboard/webhooks', headers: auth, payload: { url: PUBLIC_HOOK } });
      assert.equal(hook.statusCode, 200, hook.body);
      webhookId = hook.json().webhook.webhook_id;
    });
    after(async () => {
      await app?.close();
      await admin?.close();
      await drop?.();
      await rig?.release();
      if (work) await rm(work, { recursive: true, force: true });
    });

    /** Mostly the right key (so requests reach the routes' input handling), sometimes none or a bad one. */
    const authHeaders = () =>
      fc.oneof(
        { weight: 12, arbitrary: fc.constant({ authorization: `Bearer ${key}` }) },
        { weight: 1, arbitrary: fc.constant({ 'x-api-key': freeKey }) },
        { weight: 1, arbitrary: fc.constantFrom({}, { authorization: 'Bearer' }, { authorization: `Bearer ${EMAIL_KEY_PREFIX}${'A'.repeat(32)}` }, { 'x-api-key': 'cv_live_x' }) },
        { weight: 1, arbitrary: headerText.map((v) => ({ authorization: v })) },
      );
    const idOrOdd = (real: () => string) => fc.oneof({ weight: 2, arbitrary: fc.constant(null).map(() => real()) }, { weight: 3, arbitrary: pathSegment });

    /** A JSON-bodied request to `url` with a body generated from `fields`. */
    const jsonRequest = (method: 'POST', url: fc.Arbitrary<string>, fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<Request> =>
      fc.record({ url, payload: hostilePayload(hostileBody(fields)), type: contentTypes, auth: authHeaders(), extra: oddHeaders }).map(({ url: u, payload, type, auth, extra }) => ({
        method,
        url: u,
        payload,
        headers: { ...extra, ...auth, ...(type === undefined ? {} : { 'content-type': type }) },
      }));
    const bodiless = (method: 'GET' | 'DELETE' | 'POST', url: fc.Arbitrary<string>): fc.Arbitrary<Request> =>
      fc.record({ url, auth: authHeaders(), extra: oddHeaders, body: fc.option(hostilePayload(hostileJson), { nil: undefined }), type: contentTypes }).map(({ url: u, auth, extra, body, type }) => ({
        method,
        url: u,
        headers: { ...extra, ...auth, ...(body !== undefined && type !== undefined ? { 'content-type': type } : {}) },
        ...(body !== undefined && method !== 'GET' ? { payload: body } : {}),
      }));
    const withQuery = (path: fc.Arbitrary<string>, params: readonly string[]) => fc.tuple(path, hostileQuery(params)).map(([p, q]) => p + q);

    const requests = (): fc.Arbitrary<Request> =>
      fc.oneof(
        jsonRequest('POST', withQuery(fc.constant('/api/v1/verify-single'), []), { email: emailish, use_smtp: fc.boolean() }),
        jsonRequest('POST', withQuery(fc.constant('/api/v1/verify-batch'), []), { emails: smallList, use_smtp: fc.boolean() }),
        jsonRequest('POST', withQuery(fc.constant('/api/v1/jobs'), []), { emails: smallList, use_smtp: fc.boolean(), dedupe: fc.boolean() }),
        jsonRequest('POST', withQuery(fc.constant('/api/validate-email'), []), { email: emailish, use_smtp: fc.boolean() }),
        jsonRequest('POST', withQuery(fc.constant('/api/dashboard/api-keys'), []), { name: fc.oneof(fc.constant('ci'), hostileString) }),
        jsonRequest('POST', withQuery(fc.constant('/api/dashboard/webhooks'), []), {
          url: fc.oneof(fc.constantFrom(PUBLIC_HOOK, 'https://hooks.example.test/a', 'https://rebind.example.test/x', 'http://127.0.0.1:9/x', 'https://[::1]/x', 'https://10.0.0.1/x'), hostileString),
          events: fc.oneof(fc.constantFrom('job.completed', 'batch.completed,job.failed', 'job.completed,,', ' job.completed '), hostileString),
        }),
        bodiless('GET', withQuery(fc.constantFrom('/api/v1/account', '/api/v1/jobs', '/api/dashboard/api-keys', '/api/dashboard/webhooks'), ['api_key'])),
        bodiless('GET', withQuery(idOrOdd(() => jobId).map((id) => `/api/v1/jobs/${id}`), [])),
        bodiless('DELETE', withQuery(idOrOdd(() => 'job_00000000000000000000000000').map((id) => `/api/v1/jobs/${id}`), [])),
        bodiless('GET', withQuery(idOrOdd(() => jobId).map((id) => `/api/v1/jobs/${id}/results`), ['format', 'page', 'per_page'])),
        bodiless('DELETE', withQuery(fc.constant('/api/dashboard/api-keys'), ['id'])),
        bodiless('DELETE', withQuery(fc.constant('/api/dashboard/webhooks'), ['id'])),
        bodiless('GET', withQuery(idOrOdd(() => webhookId).map((id) => `/api/dashboard/webhooks/${id}/deliveries`), ['limit'])),
        bodiless('POST', withQuery(fc.tuple(idOrOdd(() => webhookId), pathSegment).map(([id, d]) => `/api/dashboard/webhooks/${id}/deliveries/${d}/redeliver`), [])),
        // Methods a path does not have (405) and paths that do not exist (404).
        bodiless('DELETE', fc.constantFrom('/api/v1/verify-single', '/api/v1/account', '/api/validate-email', '/api/v1/nope')),
      );

    test('every request is answered within the contract: documented status, error shape, closed codes, no 500', { timeout: TIME_LIMIT_MS + 60_000 }, async () => {
      const checkDocument = await answerChecker(app);
      const { runs, statuses } = await assertRequestsKeepContract(app, `email on ${backend}`, requests(), {
        errors: EMAIL_ERROR_STATUS,
        seed: SEED,
        numRuns: RUNS,
        timeLimitMs: TIME_LIMIT_MS,
        answers,
        checkDocument,
      });
      console.log(`# email on ${backend}: ${runs} requests, statuses ${JSON.stringify(statuses)}`);
      assert.ok(runs >= Math.min(RUNS, 20), `at least a few runs happened (${runs})`);
      // Bad input dominated, but the good paths were reached as well.
      assert.ok(Object.keys(statuses).some((s) => s.startsWith('2')), 'some requests succeeded');
      assert.ok(statuses[400] !== undefined, 'some requests were refused as invalid');
    });

    test('every documented operation under requests generated from the document (schema-driven)', { timeout: SCHEMA_TIME_LIMIT_MS + 60_000 }, async () => {
      await assertSchemaRequestsKeepContract(app, `email schema-driven on ${backend}`, {
        auth: () => ({ authorization: `Bearer ${key}` }),
        pathValues: { job_id: () => jobId, id: () => webhookId },
        fieldValues: { email: () => `alice@${D.valid}`, emails: () => [`alice@${D.valid}`, `x@${D.catchAll}`], url: () => PUBLIC_HOOK },
      }, {
        errors: EMAIL_ERROR_STATUS,
        seed: SEED,
        numRuns: SCHEMA_RUNS,
        timeLimitMs: SCHEMA_TIME_LIMIT_MS,
        answers,
      });
    });

    // What the properties found, kept as plain examples.
    test('regressions: NUL in ids and names, stray bodies, unknown paths with bad bodies, long ids', async () => {
      const checkDocument = await answerChecker(app);
      const from = answers.length;
      const auth = { authorization: `Bearer ${key}` };
      const expect = async (req: Request, status: number, code: string) => {
        const res = await app.inject(req);
        assert.equal(res.statusCode, status, `${req.method} ${req.url}: ${res.body}`);
        assert.equal(res.json().error, code);
        assert.deepEqual(contractProblems(res, { errors: EMAIL_ERROR_STATUS }), []);
      };
      // No body and no content type skipped the body checks: the handler read undefined (500; CI seed 1346383326).
      for (const url of ['/api/v1/jobs', '/api/v1/verify-batch', '/api/v1/verify-single']) await expect({ method: 'POST', url, headers: auth, payload: '' }, 400, 'invalid_request');
      // PostgreSQL text cannot hold U+0000: these were 500s there.
      await expect({ method: 'DELETE', url: '/api/v1/jobs/a%00b', headers: auth }, 404, 'not_found');
      await expect({ method: 'GET', url: '/api/v1/jobs/%00/results', headers: auth }, 404, 'not_found');
      await expect({ method: 'GET', url: '/api/dashboard/webhooks/wh_%00/deliveries', headers: auth }, 404, 'not_found');
      await expect({ method: 'DELETE', url: '/api/dashboard/api-keys?id=key_%00', headers: auth }, 400, 'invalid_request');
      await expect({ method: 'DELETE', url: '/api/dashboard/webhooks?id=%00', headers: auth }, 400, 'invalid_request');
      await expect({ method: 'POST', url: '/api/dashboard/api-keys', headers: auth, payload: { name: 'a\u0000b' } }, 400, 'invalid_request');
      // A body sent to a route that takes none is still read: its 415/400 are documented.
      await expect({ method: 'DELETE', url: '/api/dashboard/webhooks?id=wh_x', headers: auth, payload: '"x"' }, 415, 'unsupported_media_type');
      await expect({ method: 'DELETE', url: `/api/v1/jobs/${jobId}`, headers: { ...auth, 'content-type': 'application/json' }, payload: '{' }, 400, 'invalid_json');
      // No route: 404 (or 405), whatever the body; it was 400 for broken JSON or bytes.
      await expect({ method: 'POST', url: '/api/v1/nope', headers: { ...auth, 'content-type': 'application/json' }, payload: '{' }, 404, 'not_found');
      await expect({ method: 'POST', url: '/api/dashboard/deliveries/x/redeliver', headers: { ...auth, 'content-type': 'application/json' }, payload: Buffer.from([0xff]) }, 404, 'not_found');
      await expect({ method: 'PATCH', url: '/api/v1/verify-single', headers: { ...auth, 'content-type': 'text/plain' }, payload: 'x' }, 405, 'method_not_allowed');
      // An id over 64 characters is refused before the lookup, as documented.
      await expect({ method: 'GET', url: `/api/v1/jobs/${'x'.repeat(65)}`, headers: auth }, 400, 'invalid_request');
      assert.deepEqual(checkDocument(answers.slice(from)), []);
    });

    test('the process still serves normally afterwards', async () => {
      assert.equal((await app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
      const ready = await app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(ready.statusCode, 200, ready.body);
      const res = await app.inject({ method: 'POST', url: '/api/v1/verify-single', headers: { authorization: `Bearer ${key}` }, payload: { email: `alice@${D.valid}` } });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(contractProblems(res, { errors: EMAIL_ERROR_STATUS }), []);
    });
  });
}
