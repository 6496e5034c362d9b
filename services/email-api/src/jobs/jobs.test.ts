import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openServiceCore, type ServiceApp, type ServiceCore } from '@mailconv/platform';
import { createTestDatabase, testBackends, assertAnswersMatchDocument, recordAnswers, type RecordedAnswer } from '@mailconv/platform/testing';
import { D, loadDomains, useRig, type RigHandle } from '@mailconv/test-rig';
import { buildApp, EMAIL_KEY_PREFIX } from '../app.js';
import { loadEmailConfig, type EmailConfig } from '../config.js';
import { EMAIL_MIGRATIONS } from '../db/migrations.js';
import type { EmailTables } from '../db/schema.js';
import { CSV_HEADER } from './jobs.service.js';
import { BASE, jobsEnv, parseCsv, slowAddresses } from './jobs.test-support.js';

for (const backend of testBackends()) {
  describe(`bulk jobs on ${backend}, against the loopback DNS rig`, () => {
    let answers: RecordedAnswer[] = [];
    let rig: RigHandle;
    let drop: () => Promise<void>;
    let config: EmailConfig;
    let app: ServiceApp;
    let admin: ServiceCore<EmailTables>;
    const keys: Record<string, string> = {};
    const ids: Record<string, string> = {};

    before(async () => {
      rig = await useRig();
      const db = await createTestDatabase(backend);
      drop = db.drop;
      config = loadEmailConfig(jobsEnv(rig, db.url));
      app = await buildApp(config);
      answers = recordAnswers(app);
      admin = await openServiceCore<EmailTables>({ database: config.database, migrations: EMAIL_MIGRATIONS, keyPrefix: EMAIL_KEY_PREFIX });
      for (const name of ['growth', 'scale', 'other', 'free']) {
        const r = await admin.accounts.createAccount({ email: `${name}@example.test`, plan: name === 'other' ? 'growth' : name });
        assert.ok(r.ok);
        keys[name] = r.apiKey;
        ids[name] = r.account.id;
      }
    });
    after(async () => {
      await app.close();
      await admin.close();
      await drop();
      await rig.release();
    });

    const call = (method: 'GET' | 'POST' | 'DELETE', url: string, key: string, payload?: unknown, headers: Record<string, string> = {}) =>
      app.inject({ method, url, headers: { authorization: `Bearer ${key}`, ...(payload === undefined ? {} : { 'content-type': 'application/json' }), ...headers }, ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }) });
    const submit = async (key: string, body: Record<string, unknown>) => {
      const res = await call('POST', '/api/v1/jobs', key, body);
      assert.equal(res.statusCode, 202, res.body);
      return res.json() as { job_id: string; status_url: string; submitted: number; duplicates_removed: number; total: number; status: string };
    };
    const status = async (key: string, id: string) => (await call('GET', `/api/v1/jobs/${id}`, key)).json() as Record<string, unknown> & { status: string; processed: number };
    /** Polls until `done(status)`; the test's own time-out bounds it. */
    const waitFor = async (key: string, id: string, done: (s: { status: string; processed: number }) => boolean) => {
      for (;;) {
        const s = await status(key, id);
        if (done(s)) return s;
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const finished = (s: { status: string }) => ['completed', 'failed', 'cancelled'].includes(s.status);
    const allPages = async (key: string, id: string, perPage: number) => {
      const out: Array<Record<string, unknown>> = [];
      for (let page = 1; ; page++) {
        const res = await call('GET', `/api/v1/jobs/${id}/results?page=${page}&per_page=${perPage}`, key);
        assert.equal(res.statusCode, 200, res.body);
        const body = res.json() as { results: Array<Record<string, unknown>>; page: number; per_page: number; total: number };
        assert.deepEqual([body.page, body.per_page], [page, perPage]);
        if (body.results.length === 0) return out;
        out.push(...body.results);
      }
    };

    test('submit → completed: exact counters, both namings, results in input order, quota charged once, job.completed recorded', async () => {
      const wild = loadDomains().slice(0, 25).map((d, i) => `user${i}@${d}`);
      const emails = [`alice@${D.valid}`, `x@${D.nxdomain}`, `bob@${D.valid}`, `info@${D.valid}`, 'bad@@x', `carol@${D.aOnly}`, ...wild];
      const accepted = await submit(keys.growth!, { emails });
      assert.match(accepted.job_id, /^job_[0-9a-z]{26}$/);
      assert.deepEqual(accepted, { success: true, job_id: accepted.job_id, status: 'queued', submitted: 31, duplicates_removed: 0, total: 31, status_url: `${BASE}/api/v1/jobs/${accepted.job_id}` });
      assert.equal(await admin.quota.used(ids.growth!), 31, 'the whole list is reserved at acceptance');

      const done = await waitFor(keys.growth!, accepted.job_id, finished);
      assert.equal(done.status, 'completed');
      assert.deepEqual(
        { ...done, created_at: undefined, started_at: undefined, completed_at: undefined },
        {
          success: true,
          job_id: accepted.job_id,
          status: 'completed',
          total: 31,
          processed: 31,
          valid: 28,
          invalid: 2,
          risky: 1,
          unknown: 0,
          valid_count: 28,
          invalid_count: 2,
          risky_count: 1,
          unknown_count: 0,
          progress_pct: 100,
          error: null,
          results_deleted_at: null,
          created_at: undefined,
          started_at: undefined,
          completed_at: undefined,
        },
      );
      assert.ok(Date.parse(done.completed_at as string) >= Date.parse(done.created_at as string));

      const results = await allPages(keys.growth!, accepted.job_id, 7);
      assert.deepEqual(results.map((r) => r.email), emails);
      assert.deepEqual(results.slice(0, 6).map((r) => [r.status, r.reason, r.is_valid]), [
        ['valid', null, true],
        ['invalid', 'domain_not_found', false],
        ['valid', null, true],
        ['risky', 'role_based', false],
        ['invalid', 'invalid_syntax', false],
        ['valid', null, true],
      ]);
      assert.deepEqual(Object.keys(results[0]!).sort(), ['email', 'is_valid', 'reason', 'score', 'status', 'suggestion']);
      assert.equal(await admin.quota.used(ids.growth!), 31, 'processing charges nothing more');

      const list = (await call('GET', '/api/v1/jobs', keys.growth!)).json() as { jobs: Array<Record<string, unknown>> };
      assert.deepEqual(list.jobs[0], { job_id: accepted.job_id, status: 'completed', total: 31, processed: 31, valid_count: 28, invalid_count: 2, risky_count: 1, unknown_count: 0, created_at: done.created_at, completed_at: done.completed_at, results_deleted_at: null });

      const events = (await admin.database.db.selectFrom('events').selectAll().where('account_id', '=', ids.growth!).execute()).map((e) => JSON.parse(e.payload) as Record<string, unknown>);
      assert.deepEqual(events.map((e) => [e.event, e.job_id, e.summary]), [['job.completed', accepted.job_id, { total: 31, valid: 28, invalid: 2, risky: 1 }]]);

      // CSV: the same rows as the JSON pages, RFC 4180, streamed with the contract's header.
      const csv = await call('GET', `/api/v1/jobs/${accepted.job_id}/results?format=csv`, keys.growth!);
      assert.equal(csv.statusCode, 200);
      assert.match(String(csv.headers['content-type']), /^text\/csv/);
      const rows = parseCsv(csv.body);
      assert.equal(rows[0]!.join(','), CSV_HEADER);
      assert.deepEqual(rows.slice(1), results.map((r) => [r.email, String(r.is_valid), r.status, r.reason ?? '', r.score === null ? '' : String(r.score), r.suggestion ?? ''].map(String)));

      // A finished job cannot be cancelled.
      const again = await call('DELETE', `/api/v1/jobs/${accepted.job_id}`, keys.growth!);
      assert.equal(again.statusCode, 409);
      assert.deepEqual([again.json().error, again.json().status], ['job_not_cancellable', 'completed']);
    });

    test('CSV quoting: commas, quotes in addresses survive the round trip', async () => {
      const emails = [`"a,b"@${D.valid}`, `"say ""hi"""@${D.valid}`, `plain@${D.valid}`];
      const { job_id: id } = await submit(keys.scale!, { emails });
      assert.equal((await waitFor(keys.scale!, id, finished)).status, 'completed');
      const rows = parseCsv((await call('GET', `/api/v1/jobs/${id}/results?format=csv`, keys.scale!)).body);
      assert.deepEqual(rows.slice(1).map((r) => r[0]), emails);
      assert.deepEqual(rows.slice(1).map((r) => r.length), [6, 6, 6]);
    });

    test('CSV: cells a spreadsheet would run as formulas are neutralised; JSON keeps them exact', async () => {
      const emails = [`=1+2@${D.valid}`, `+x@${D.valid}`, `-y@${D.valid}`, `@cmd|'/C calc'!A0`, `\tz@${D.valid}`, `ok=1@${D.valid}`];
      const { job_id: id } = await submit(keys.scale!, { emails, dedupe: false });
      assert.equal((await waitFor(keys.scale!, id, finished)).status, 'completed');
      const rows = parseCsv((await call('GET', `/api/v1/jobs/${id}/results?format=csv`, keys.scale!)).body);
      const cells = rows.slice(1).map((r) => r[0]);
      const json = (await allPages(keys.scale!, id, 100)).map((r) => r.email as string);
      assert.deepEqual(cells.slice(0, 4), json.slice(0, 4).map((e) => `'${e}`));
      assert.equal(cells[5], `ok=1@${D.valid}`, 'only a leading trigger character is neutralised');
      assert.ok(cells.every((c) => !/^[=+\-@\t]/.test(c!)));
    });

    test('large bodies (read in a worker thread) give the same answers and errors as small ones', async () => {
      // 40,000 entries ≈ 1.3 MB: over the worker-thread threshold.
      const many = Array.from({ length: 40_000 }, (_, i) => `user${i % 30_000}@${D.valid}`);
      const res = await call('POST', '/api/v1/jobs', keys.scale!, { emails: [' ', ...many.map((e, i) => (i % 7 ? e : e.toUpperCase()))], dedupe: true }, { 'idempotency-key': 'big-1' });
      assert.equal(res.statusCode, 202, res.body);
      const body = res.json();
      assert.deepEqual([body.submitted, body.duplicates_removed, body.total], [40_001, 10_001, 30_000]);
      const chunks = await admin.database.db.selectFrom('job_chunks').select(['idx', 'size', 'emails']).where('job_id', '=', body.job_id).orderBy('idx').execute();
      assert.deepEqual([chunks.length, chunks[0]!.size, chunks.at(-1)!.size], [3000, 10, 10]);
      assert.deepEqual(JSON.parse(chunks[1]!.emails), many.slice(10, 20).map((e, i) => ((10 + i) % 7 ? e : e.toUpperCase())), 'first spelling kept, input order');
      const replay = await call('POST', '/api/v1/jobs', keys.scale!, { emails: [' ', ...many.map((e, i) => (i % 7 ? e : e.toUpperCase()))], dedupe: true }, { 'idempotency-key': 'big-1' });
      assert.deepEqual([replay.statusCode, replay.headers['idempotent-replayed'], replay.json().job_id], [202, 'true', body.job_id]);
      const other = await call('POST', '/api/v1/jobs', keys.scale!, { emails: many, dedupe: true }, { 'idempotency-key': 'big-1' });
      assert.deepEqual([other.statusCode, other.json().error], [409, 'conflict']);
      await call('DELETE', `/api/v1/jobs/${body.job_id}`, keys.scale!);

      const bad = async (payload: string, error: string, field?: string) => {
        const r = await app.inject({ method: 'POST', url: '/api/v1/jobs', headers: { authorization: `Bearer ${keys.scale}`, 'content-type': 'application/json' }, payload });
        assert.equal(r.statusCode, 400, payload.slice(0, 60));
        assert.equal(r.json().error, error);
        if (field) assert.equal(r.json().field, field);
      };
      const big = JSON.stringify(many);
      await bad(`{"emails":${big.slice(0, -1)},""]}`, 'invalid_request', 'emails');
      await bad(`{"emails":${big.slice(0, -1)},42]}`, 'invalid_request');
      await bad(`{"emails":${big},"extra":1}`, 'invalid_request');
      await bad(`{"emails":${big},"__proto__":{"x":1}}`, 'invalid_json');
      await bad(`{"emails":${big.slice(0, -1)}`, 'invalid_json');
      const invalidUtf8 = Buffer.concat([Buffer.from(`{"emails":${big.slice(0, -2)}`), Buffer.from([0xc3, 0x28]), Buffer.from('"]}')]);
      const r = await app.inject({ method: 'POST', url: '/api/v1/jobs', headers: { authorization: `Bearer ${keys.scale}`, 'content-type': 'application/json' }, payload: invalidUtf8 });
      assert.deepEqual([r.statusCode, r.json().error], [400, 'invalid_json']);
      // Issue #15: 9 MB of nested arrays was parsed in the worker, then again on the event
      // loop (4.5 s during which no other request was answered); it is now refused by shape.
      const depth = 4_500_000;
      const deep = await app.inject({ method: 'POST', url: '/api/v1/jobs', headers: { authorization: `Bearer ${keys.scale}`, 'content-type': 'application/json' }, payload: `{"emails":${'['.repeat(depth)}${']'.repeat(depth)}}` });
      assert.deepEqual([deep.statusCode, deep.json().error], [400, 'invalid_json']);
      assert.match(deep.json().message, /deeper than 64 levels/);
    });

    test('dedupe: trimmed, empty entries dropped, case-insensitive duplicates removed and not charged', async () => {
      const before = await admin.quota.used(ids.scale!);
      const emails = [` Alice@${D.valid} `, `alice@${D.valid}`, '', `Bob@${D.valid}`, '   ', `bob@${D.valid.toUpperCase()}`, `BOB@${D.valid.toUpperCase()}`];
      const accepted = await submit(keys.scale!, { emails, dedupe: true });
      assert.deepEqual([accepted.submitted, accepted.duplicates_removed, accepted.total], [7, 5, 2]);
      assert.equal(await admin.quota.used(ids.scale!), before + 2);
      await waitFor(keys.scale!, accepted.job_id, finished);
      assert.deepEqual((await allPages(keys.scale!, accepted.job_id, 1000)).map((r) => r.email), [`Alice@${D.valid}`, `Bob@${D.valid}`]);

      // Without dedupe an empty entry is refused; so is a list that dedupes to nothing.
      for (const body of [{ emails: [`a@${D.valid}`, ''] }, { emails: ['', ' '], dedupe: true }, { emails: [] }, { emails: [`a@${D.valid}`], extra: 1 }]) {
        const res = await call('POST', '/api/v1/jobs', keys.scale!, body);
        assert.equal(res.statusCode, 400, JSON.stringify(body));
        assert.equal(res.json().error, 'invalid_request');
      }
      assert.equal(await admin.quota.used(ids.scale!), before + 2);
    });

    test('quota short of the whole list: 402 with remaining and required; nothing stored or charged', async () => {
      await admin.quota.charge(ids.free!, 450, 500);
      const emails = Array.from({ length: 60 }, (_, i) => `u${i}@${D.valid}`);
      const res = await call('POST', '/api/v1/jobs', keys.free!, { emails });
      assert.equal(res.statusCode, 402);
      const body = res.json();
      assert.deepEqual([body.error, body.remaining, body.required], ['insufficient_quota', 50, 60]);
      assert.equal(typeof body.message, 'string');
      assert.equal(await admin.quota.used(ids.free!), 450);
      assert.deepEqual((await call('GET', '/api/v1/jobs', keys.free!)).json().jobs, []);
      assert.equal((await admin.database.db.selectFrom('job_chunks').innerJoin('jobs', 'jobs.id', 'job_chunks.job_id').select('idx').where('jobs.account_id', '=', ids.free!).execute()).length, 0);
      // After dedupe the list fits: only the deduped count is needed.
      const fits = await submit(keys.free!, { emails: [...emails.slice(0, 50), ...emails.slice(0, 10).map((e) => e.toUpperCase())], dedupe: true });
      assert.equal(fits.total, 50);
      assert.equal(await admin.quota.used(ids.free!), 500);
    });

    test('cancel mid-job: stops, refunds exactly the unprocessed remainder; 409s before and after', async () => {
      const before = await admin.quota.used(ids.growth!);
      const emails = [...Array.from({ length: 10 }, (_, i) => `fast${i}@${D.valid}`), ...slowAddresses(50, 'c')];
      const { job_id: id } = await submit(keys.growth!, { emails });
      const running = await waitFor(keys.growth!, id, (s) => s.processed >= 10 || finished(s));
      assert.equal(running.status, 'processing');
      const early = await call('GET', `/api/v1/jobs/${id}/results`, keys.growth!);
      assert.equal(early.statusCode, 409);
      assert.equal(early.json().error, 'job_not_completed');
      assert.equal(early.json().status, 'processing');
      assert.equal(typeof early.json().progress_pct, 'number');

      const res = await call('DELETE', `/api/v1/jobs/${id}`, keys.growth!);
      assert.equal(res.statusCode, 200, res.body);
      const cancel = res.json() as { processed: number; refunded: number; status: string; job_id: string; success: boolean };
      assert.deepEqual([cancel.success, cancel.job_id, cancel.status], [true, id, 'cancelled']);
      assert.ok(cancel.processed >= 10 && cancel.processed < 60, String(cancel.processed));
      assert.equal(cancel.refunded, 60 - cancel.processed);
      assert.equal(await admin.quota.used(ids.growth!), before + cancel.processed);

      // The workers drop the chunks they held: a new job completes, and the cancelled one never moved.
      const next = await submit(keys.growth!, { emails: [`alice@${D.valid}`] });
      assert.equal((await waitFor(keys.growth!, next.job_id, finished)).status, 'completed');
      const after = await status(keys.growth!, id);
      assert.deepEqual([after.status, after.processed], ['cancelled', cancel.processed]);
      assert.equal(await admin.quota.used(ids.growth!), before + cancel.processed + 1);
      const reservation = await admin.database.db.selectFrom('jobs').innerJoin('quota_reservations', 'quota_reservations.id', 'jobs.reservation_id').select(['units', 'refunded']).where('jobs.id', '=', id).executeTakeFirstOrThrow();
      assert.deepEqual(reservation, { units: 60, refunded: cancel.refunded });

      const twice = await call('DELETE', `/api/v1/jobs/${id}`, keys.growth!);
      assert.equal(twice.statusCode, 409);
      assert.equal(twice.json().error, 'job_not_cancellable');
      const results = await call('GET', `/api/v1/jobs/${id}/results?format=csv`, keys.growth!);
      assert.equal(results.statusCode, 409);
      assert.deepEqual([results.json().error, results.json().status], ['job_not_completed', 'cancelled']);
    });

    test("another account's job is 404 everywhere; so is an unknown id", async () => {
      const { job_id: id } = await submit(keys.growth!, { emails: [`alice@${D.valid}`] });
      for (const [method, url] of [
        ['GET', `/api/v1/jobs/${id}`],
        ['DELETE', `/api/v1/jobs/${id}`],
        ['GET', `/api/v1/jobs/${id}/results`],
        ['GET', '/api/v1/jobs/job_00000000000000000000000000'],
      ] as const) {
        const res = await call(method, url, keys.other!);
        assert.equal(res.statusCode, 404, `${method} ${url}`);
        assert.equal(res.json().error, 'not_found');
      }
      assert.ok(!(await call('GET', '/api/v1/jobs', keys.other!)).json().jobs.some((j: { job_id: string }) => j.job_id === id));
      await waitFor(keys.growth!, id, finished);
    });

    test('Idempotency-Key: a retry returns the first answer and creates no second job', async () => {
      const before = await admin.quota.used(ids.scale!);
      const body = { emails: [`alice@${D.valid}`, `bob@${D.valid}`] };
      const first = await call('POST', '/api/v1/jobs', keys.scale!, body, { 'idempotency-key': 'upload-42' });
      assert.equal(first.statusCode, 202);
      const again = await call('POST', '/api/v1/jobs', keys.scale!, body, { 'idempotency-key': 'upload-42' });
      assert.equal(again.statusCode, 202);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.body, first.body);
      assert.equal(await admin.quota.used(ids.scale!), before + 2);
      const other = await call('POST', '/api/v1/jobs', keys.scale!, { emails: [`carol@${D.valid}`] }, { 'idempotency-key': 'upload-42' });
      assert.equal(other.statusCode, 409);
      await waitFor(keys.scale!, first.json().job_id, finished);
    });

    test('upload: a CSV file (named column, quoted cells) or a text file, with form fields', async () => {
      const form = (parts: Array<{ name: string; value: string; filename?: string; type?: string }>) => {
        const boundary = 'mailconvBoundary7MA4YWxk';
        const body = parts
          .map((p) => `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"${p.filename ? `; filename="${p.filename}"\r\nContent-Type: ${p.type ?? 'text/csv'}` : ''}\r\n\r\n${p.value}\r\n`)
          .join('');
        return { payload: `${body}--${boundary}--\r\n`, headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, authorization: `Bearer ${keys.scale}` } };
      };
      const upload = (parts: Parameters<typeof form>[0]) => app.inject({ method: 'POST', url: '/api/v1/jobs', ...form(parts) });
      const emailsOf = async (res: Awaited<ReturnType<typeof upload>>) => {
        assert.equal(res.statusCode, 202, res.body);
        const id = res.json().job_id as string;
        await waitFor(keys.scale!, id, finished);
        return (await allPages(keys.scale!, id, 1000)).map((r) => r.email);
      };

      const csv = `name,E-mail,notes\r\n"Doe, Jane",jane@${D.valid},"said ""hi"""\r\nBob,bob@${D.valid},\r\n\r\nBob again,BOB@${D.valid},x\r\n`;
      const named = await upload([{ name: 'dedupe', value: 'true' }, { name: 'column', value: 'e-mail' }, { name: 'file', value: csv, filename: 'list.csv' }]);
      assert.equal(named.json().duplicates_removed, 1);
      assert.deepEqual(await emailsOf(named), [`jane@${D.valid}`, `bob@${D.valid}`]);
      assert.deepEqual(await emailsOf(await upload([{ name: 'file', value: `carol@${D.valid},x\nalice@${D.valid},y\n`, filename: 'plain.csv' }])), [`carol@${D.valid}`, `alice@${D.valid}`]);
      assert.deepEqual(await emailsOf(await upload([{ name: 'list', value: `email\n alice@${D.valid}\n\nbob@${D.valid}\n`, filename: 'list.txt', type: 'text/plain' }])), [`alice@${D.valid}`, `bob@${D.valid}`]);

      for (const parts of [
        [{ name: 'column', value: 'address' }, { name: 'file', value: csv, filename: 'list.csv' }],
        [{ name: 'dedupe', value: 'true' }],
        [{ name: 'dedupe', value: 'perhaps' }, { name: 'file', value: csv, filename: 'list.csv' }],
        [{ name: 'file', value: 'email\n', filename: 'empty.csv' }],
      ]) {
        const res = await upload(parts);
        assert.equal(res.statusCode, 400, JSON.stringify(parts).slice(0, 80));
        assert.equal(res.json().error, 'invalid_request');
      }
      // Multipart stays refused on the other routes.
      const single = await app.inject({ method: 'POST', url: '/api/v1/verify-single', ...form([{ name: 'email', value: `a@${D.valid}` }]) });
      assert.equal(single.statusCode, 415);
    });

    test('use_smtp: mailbox verdicts; greylisted addresses are retried (bounded) before they stay unknown', async () => {
      const emails = [`alice@${D.valid}`, `x@${D.greylist}`, `nobody@${D.valid}`];
      const { job_id: id } = await submit(keys.growth!, { emails, use_smtp: true });
      const done = await waitFor(keys.growth!, id, finished);
      assert.deepEqual([done.status, done.valid, done.invalid, done.unknown], ['completed', 1, 1, 1]);
      const results = await allPages(keys.growth!, id, 1000);
      assert.deepEqual(results.map((r) => [r.email, r.status, r.reason]), [
        [`alice@${D.valid}`, 'valid', null],
        [`x@${D.greylist}`, 'unknown', 'greylisted'],
        [`nobody@${D.valid}`, 'invalid', 'user_unknown'],
      ]);
      const chunk = await admin.database.db.selectFrom('job_chunks').select(['attempts', 'state']).where('job_id', '=', id).executeTakeFirstOrThrow();
      assert.deepEqual(chunk, { attempts: 2, state: 'done' }, 'two retries (EMAIL_JOBS_GREYLIST_RETRIES), then the verdict stands');
      const refused = await call('POST', '/api/v1/jobs', keys.free!, { emails, use_smtp: true });
      assert.equal(refused.statusCode, 403);
      assert.equal(refused.json().error, 'feature_not_available');
    });

    test('results paging limits: per_page above 5,000, page 0, or a page that is not a bounded integer (Infinity, 1e309, 2^53) is 400', async () => {
      const { job_id: id } = await submit(keys.scale!, { emails: [`alice@${D.valid}`] });
      await waitFor(keys.scale!, id, finished);
      for (const q of ['per_page=5001', 'page=0', 'format=xml', 'page=Infinity', 'page=1e309', 'page=-Infinity', 'page=NaN', 'page=9007199254740993', 'page=1000001', 'per_page=Infinity']) {
        const res = await call('GET', `/api/v1/jobs/${id}/results?${q}`, keys.scale!);
        assert.equal(res.statusCode, 400, q);
        assert.equal(res.json().error, 'invalid_request', q);
      }
      assert.equal((await call('GET', `/api/v1/jobs/${id}/results?page=1000000`, keys.scale!)).json().results.length, 0);
      const one = (await call('GET', `/api/v1/jobs/${id}/results?per_page=5000`, keys.scale!)).json();
      assert.equal(one.results.length, 1);
    });

    // Last: every answer the tests above provoked, checked against the served document.
    test('every answer matches the OpenAPI document (status, headers, body)', async () => {
      const covered = await assertAnswersMatchDocument(app, answers);
      assert.ok(covered.size > 0);
    });
  });

  test(`a job whose stored data is unreadable is failed, the remainder refunded, job.failed recorded (${backend})`, async () => {
    const rig = await useRig();
    const db = await createTestDatabase(backend);
    try {
      // Stored by a process without a worker, damaged, then picked up by one with a worker.
      const quiet = await buildApp(loadEmailConfig(jobsEnv(rig, db.url, { EMAIL_JOBS_WORKERS: '0' })));
      const admin = await openServiceCore<EmailTables>({ database: loadEmailConfig(jobsEnv(rig, db.url)).database, migrations: EMAIL_MIGRATIONS, keyPrefix: EMAIL_KEY_PREFIX });
      try {
        const acct = await admin.accounts.createAccount({ email: 'broken@example.test', plan: 'growth' });
        assert.ok(acct.ok);
        const res = await quiet.inject({ method: 'POST', url: '/api/v1/jobs', headers: { authorization: `Bearer ${acct.apiKey}`, 'content-type': 'application/json' }, payload: JSON.stringify({ emails: Array.from({ length: 30 }, (_, i) => `u${i}@${D.valid}`) }) });
        assert.equal(res.statusCode, 202);
        const id = res.json().job_id as string;
        await admin.database.db.updateTable('job_chunks').set({ emails: '["u10@valid.test", ' }).where('job_id', '=', id).where('idx', '=', 1).execute();
        await quiet.close();

        const worker = await buildApp(loadEmailConfig(jobsEnv(rig, db.url, { EMAIL_JOBS_WORKERS: '1' })));
        try {
          await worker.ready();
          let job;
          do {
            await new Promise((r) => setTimeout(r, 20));
            job = await admin.database.db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
          } while (job.status === 'queued' || job.status === 'processing');
          assert.equal(job.status, 'failed');
          assert.equal(job.processed, 10, 'the chunk before the damaged one was verified and kept');
          assert.equal(job.error, 'stored addresses of chunk 1 are unreadable');
          assert.equal(await admin.quota.used(acct.account.id), 10, 'the unprocessed remainder (20) was refunded');
          const events = await admin.database.db.selectFrom('events').selectAll().where('account_id', '=', acct.account.id).execute();
          assert.deepEqual(events.map((e) => JSON.parse(e.payload) as Record<string, unknown>).map((e) => [e.event, e.job_id, e.error]), [['job.failed', id, job.error]]);
        } finally {
          await worker.close();
        }
      } finally {
        await admin.close();
      }
    } finally {
      await db.drop();
      await rig.release();
    }
  });
}

for (const backend of testBackends()) {
  test(`a cancel made in another process stops the chunk in flight within about a second, even with a long lease (${backend})`, async () => {
    const rig = await useRig();
    const db = await createTestDatabase(backend);
    // One worker loop, a 60 s lease (renewals 20 s apart) and a chunk that takes far longer
    // than the bound below: only the status check inside the chunk can free the loop in time.
    const env = jobsEnv(rig, db.url, { EMAIL_JOBS_WORKERS: '1', EMAIL_JOBS_LEASE_MS: '60000', EMAIL_JOBS_CHUNK_SIZE: '400', EMAIL_BATCH_CONCURRENCY: '2' });
    const worker = await buildApp(loadEmailConfig(env));
    const api = await buildApp(loadEmailConfig({ ...env, EMAIL_JOBS_WORKERS: '0' }));
    const admin = await openServiceCore<EmailTables>({ database: loadEmailConfig(env).database, migrations: EMAIL_MIGRATIONS, keyPrefix: EMAIL_KEY_PREFIX });
    try {
      await worker.ready();
      const acct = await admin.accounts.createAccount({ email: 'cancel@example.test', plan: 'growth' });
      assert.ok(acct.ok);
      const auth = { authorization: `Bearer ${acct.apiKey}`, 'content-type': 'application/json' };
      const submit = async (emails: string[]) => (await api.inject({ method: 'POST', url: '/api/v1/jobs', headers: auth, payload: JSON.stringify({ emails }) })).json().job_id as string;
      const statusOf = async (id: string) => (await admin.database.db.selectFrom('jobs').select(['status']).where('id', '=', id).executeTakeFirstOrThrow()).status;
      const slow = await submit(slowAddresses(400, 'cx'));
      while ((await admin.database.db.selectFrom('job_chunks').select('state').where('job_id', '=', slow).executeTakeFirstOrThrow()).state !== 'leased') await new Promise((r) => setTimeout(r, 20));
      const cancel = await api.inject({ method: 'DELETE', url: `/api/v1/jobs/${slow}`, headers: { authorization: auth.authorization } });
      assert.equal(cancel.statusCode, 200, cancel.body);
      const cancelledAt = performance.now();
      const next = await submit([`next@${D.valid}`]);
      while ((await statusOf(next)) !== 'completed') {
        assert.ok(performance.now() - cancelledAt < 5000, 'the worker is still busy with the cancelled chunk');
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal(await statusOf(slow), 'cancelled');
    } finally {
      await worker.close();
      await api.close();
      await admin.close();
      await db.drop();
      await rig.release();
    }
  });
}
