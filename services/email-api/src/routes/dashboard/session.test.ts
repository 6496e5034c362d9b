import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { hashPassword, openServiceCore, type ServiceApp, type ServiceCore } from '@mailconv/platform';
import { assertServesFavicon, createTestDatabase, testBackends, assertAnswersMatchDocument, recordAnswers, type RecordedAnswer } from '@mailconv/platform/testing';
import { D, useRig, type RigHandle } from '@mailconv/test-rig';
import { buildApp, EMAIL_KEY_PREFIX } from '../../app.js';
import { loadEmailConfig } from '../../config.js';
import { EMAIL_MIGRATIONS } from '../../db/migrations.js';
import type { EmailTables } from '../../db/schema.js';

const HOUR = 3_600_000;
const PASSWORD = 'correct horse battery';
/** `GET /api/dashboard/session` without a live session (issue 30: a 200, not a 401 every browser console logs). */
const SIGNED_OUT = { account: null, csrf_token: null };

/** The `ev_session` value of an answer's Set-Cookie, and the whole header. */
function cookieOf(res: { headers: Record<string, unknown> }): { value: string; header: string } {
  const header = String(res.headers['set-cookie'] ?? '');
  const m = /^ev_session=([^;]*)/.exec(header);
  assert.ok(m, `an ev_session cookie is set: ${header}`);
  return { value: m[1]!, header };
}

for (const backend of testBackends()) {
  describe(`dashboard sign-in (email service) on ${backend}`, () => {
    let answers: RecordedAnswer[] = [];
    let rig: RigHandle;
    let drop: () => Promise<void>;
    let url: string;
    let app: ServiceApp;
    let admin: ServiceCore<EmailTables>;
    let offsetMs = 0;
    const clock = () => new Date(Date.now() + offsetMs);
    const env = (extra: Record<string, string> = {}) =>
      loadEmailConfig({
        EMAIL_DATABASE_URL: url,
        EMAIL_LOG_LEVEL: 'silent',
        EMAIL_JOBS_WORKERS: '0',
        EMAIL_WEBHOOKS_CONCURRENCY: '0',
        EMAIL_WEBHOOKS_RESTRICT_TO: '127.0.0.0/8,::1/128',
        EMAIL_DNS_SERVERS: rig.dnsServer,
        EMAIL_TRUST_PROXY: 'loopback',
        ...extra,
      });
    /** Accounts made here: e-mail → id and API key. */
    const accounts: Record<string, { id: string; key: string }> = {};
    const makeAccount = async (email: string, password: string | null = PASSWORD, plan = 'starter') => {
      const r = await admin.accounts.createAccount({ email, plan });
      assert.ok(r.ok);
      if (password) assert.ok(await admin.accounts.setPasswordHash(r.account.id, await hashPassword(password)));
      accounts[email] = { id: r.account.id, key: r.apiKey };
      return accounts[email];
    };

    before(async () => {
      rig = await useRig();
      ({ url, drop } = await createTestDatabase(backend));
      app = await buildApp(env(), { clock });
      answers = recordAnswers(app);
      admin = await openServiceCore<EmailTables>({ database: env().database, migrations: EMAIL_MIGRATIONS, keyPrefix: EMAIL_KEY_PREFIX });
      await makeAccount('ada@example.test');
      await makeAccount('nopass@example.test', null);
    });
    after(async () => {
      await app.close();
      await admin.close();
      await drop();
      await rig.release();
    });

    /** Each test signs in from its own client address, so the per-address throttle of one does not reach another. */
    let ipCounter = 10;
    const nextIp = () => `203.0.113.${ipCounter++}`;
    const signIn = (email: string, password: string, ip: string, headers: Record<string, string> = {}, target = app) =>
      target.inject({ method: 'POST', url: '/api/dashboard/session', headers: { 'x-forwarded-for': ip, ...headers }, payload: { email, password } });
    const withCookie = (method: 'GET' | 'POST' | 'DELETE', path: string, cookie: string, headers: Record<string, string> = {}, payload?: unknown) =>
      app.inject({ method, url: path, headers: { cookie: `theme=dark; ev_session=${cookie}`, ...headers }, ...(payload !== undefined ? { payload: payload as object } : {}) });
    const session = async (email = 'ada@example.test') => {
      const res = await signIn(email, PASSWORD, nextIp());
      assert.equal(res.statusCode, 200, res.body);
      return { cookie: cookieOf(res).value, csrf: res.json().csrf_token as string };
    };

    test('sign-in: 200 with the account and a CSRF token; an HttpOnly, SameSite=Strict session cookie; only its hash is stored', async () => {
      const res = await signIn('  ADA@example.test ', PASSWORD, nextIp());
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.deepEqual(body.account, { id: accounts['ada@example.test']!.id, email: 'ada@example.test', plan: 'starter' });
      assert.match(body.csrf_token, /^[A-Za-z0-9_-]{43}$/);
      const { value, header } = cookieOf(res);
      assert.match(value, /^[A-Za-z0-9_-]{43}$/, '32 random bytes, base64url');
      assert.equal(header, `ev_session=${value}; HttpOnly; SameSite=Strict; Path=/`, 'no Secure over plain HTTP');
      const current = await withCookie('GET', '/api/dashboard/session', value);
      assert.equal(current.statusCode, 200);
      assert.deepEqual(current.json(), body);
      const rows = await admin.database.db.selectFrom('dashboard_sessions').selectAll().where('account_id', '=', body.account.id).execute();
      assert.ok(rows.some((r) => r.id_hash === createHash('sha256').update(value).digest('hex')));
      assert.ok(!JSON.stringify(rows).includes(value), 'the session id itself is not stored');
      const again = await signIn('ada@example.test', PASSWORD, nextIp());
      assert.notEqual(cookieOf(again).value, value, 'every sign-in gets a new id');
    });

    test('Secure cookie: over HTTPS (a trusted proxy says so) and when the setting asks for it', async () => {
      const viaProxy = await signIn('ada@example.test', PASSWORD, nextIp(), { 'x-forwarded-proto': 'https' });
      assert.match(cookieOf(viaProxy).header, /; HttpOnly; SameSite=Strict; Path=\/; Secure$/);
      const strict = await buildApp(env({ EMAIL_DASHBOARD_SECURE_COOKIE: 'true' }), { clock });
      try {
        const res = await signIn('ada@example.test', PASSWORD, nextIp(), {}, strict);
        assert.match(cookieOf(res).header, /; Secure$/);
      } finally {
        await strict.close();
      }
    });

    test('wrong password, unknown address and an account without a password get the same 401', async () => {
      const answersOf = await Promise.all([signIn('ada@example.test', 'wrong password!', nextIp()), signIn('nobody@example.test', PASSWORD, nextIp()), signIn('nopass@example.test', PASSWORD, nextIp())]);
      for (const res of answersOf) {
        assert.equal(res.statusCode, 401);
        assert.equal(res.headers['set-cookie'], undefined);
        assert.equal(res.headers['www-authenticate'], 'Bearer', 'every 401 carries a challenge');
      }
      assert.deepEqual(new Set(answersOf.map((r) => r.body.replace(/"request_id":"[^"]*"/, ''))).size, 1, 'one body for all three');
      assert.equal(answersOf[0]!.json().error, 'unauthorized');
      for (const [payload, field] of [[{ email: 'ada@example.test' }, 'password'], [{ email: 'ada@example.test', password: PASSWORD, remember: true }, 'remember'], [{ email: '', password: PASSWORD }, 'email']] as const) {
        const res = await app.inject({ method: 'POST', url: '/api/dashboard/session', payload });
        assert.equal(res.statusCode, 400);
        assert.equal(res.json().field, field);
      }
      const form = await app.inject({ method: 'POST', url: '/api/dashboard/session', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'email=ada%40example.test&password=x' });
      assert.equal(form.statusCode, 415, 'a cross-site form cannot post credentials');
    });

    test('throttle: after 5 failures for one address within 15 min, 429 with Retry-After, even with the right password; then it opens again', async () => {
      await makeAccount('tess@example.test');
      for (let i = 0; i < 5; i++) assert.equal((await signIn('tess@example.test', `wrong-${i}-password`, nextIp())).statusCode, 401);
      const refused = await signIn('tess@example.test', PASSWORD, nextIp());
      assert.equal(refused.statusCode, 429);
      assert.equal(refused.json().error, 'rate_limited');
      const wait = Number(refused.headers['retry-after']);
      assert.ok(wait > 890 && wait <= 900, `Retry-After ${wait}`);
      offsetMs += 15 * 60_000 + 1000;
      assert.equal((await signIn('tess@example.test', PASSWORD, nextIp())).statusCode, 200, 'the window has passed');
    });

    test('throttle: after 5 failures from one client address, that address is refused for every account; others are not', async () => {
      const ip = nextIp();
      for (let i = 0; i < 5; i++) assert.equal((await signIn(`guess${i}@example.test`, PASSWORD, ip)).statusCode, 401);
      const refused = await signIn('ada@example.test', PASSWORD, ip);
      assert.equal(refused.statusCode, 429);
      assert.ok(Number(refused.headers['retry-after']) > 0);
      assert.equal((await signIn('ada@example.test', PASSWORD, nextIp())).statusCode, 200);
    });

    test('CSRF: a POST with the session cookie needs X-CSRF-Token; the right one passes; reads need none; an API key needs none', async () => {
      const { cookie, csrf } = await session();
      const payload = { email: `alice@${D.valid}` };
      const none = await withCookie('POST', '/api/v1/verify-single', cookie, {}, payload);
      assert.equal(none.statusCode, 403);
      assert.equal(none.json().error, 'forbidden');
      assert.match(none.json().message, /CSRF/);
      const wrong = await withCookie('POST', '/api/v1/verify-single', cookie, { 'x-csrf-token': `${csrf.slice(0, -1)}A` === csrf ? `${csrf.slice(0, -1)}B` : `${csrf.slice(0, -1)}A` }, payload);
      assert.equal(wrong.statusCode, 403);
      const before = (await withCookie('GET', '/api/v1/account', cookie)).json().quota.used;
      const ok = await withCookie('POST', '/api/v1/verify-single', cookie, { 'x-csrf-token': csrf }, payload);
      assert.equal(ok.statusCode, 200, ok.body);
      assert.ok(ok.headers['ratelimit-limit'], 'the account’s rate limit applies');
      const account = await withCookie('GET', '/api/v1/account', cookie);
      assert.equal(account.statusCode, 200);
      assert.equal(account.json().quota.used, before + 1, 'the account’s quota is charged');
      const byKey = await app.inject({ method: 'POST', url: '/api/v1/verify-single', headers: { authorization: `Bearer ${accounts['ada@example.test']!.key}`, cookie: `ev_session=${cookie}` }, payload });
      assert.equal(byKey.statusCode, 200, 'an API key wins over the cookie, and needs no CSRF token');
      const badKey = await app.inject({ method: 'GET', url: '/api/v1/account', headers: { authorization: 'Bearer ev_live_nope', cookie: `ev_session=${cookie}` } });
      assert.equal(badKey.statusCode, 401, 'a bad key is not rescued by the cookie');
      const keys = await withCookie('GET', '/api/dashboard/api-keys', cookie);
      assert.equal(keys.statusCode, 200);
      assert.equal(keys.json().keys.length, 1);
      const created = await withCookie('POST', '/api/dashboard/api-keys', cookie, { 'x-csrf-token': csrf }, { name: 'from the dashboard' });
      assert.equal(created.statusCode, 200);
      assert.match(created.json().api_key, /^ev_live_/);
    });

    test('expiry: 12 h idle ends a session; activity keeps it, but never past 7 days; a later sign-in removes abandoned ones', async () => {
      const abandoned = await session();
      const idle = await session();
      offsetMs += 12 * HOUR - 60_000;
      assert.equal((await withCookie('GET', '/api/dashboard/session', idle.cookie)).statusCode, 200, 'just inside the idle limit');
      offsetMs += 12 * HOUR - 60_000;
      assert.equal((await withCookie('GET', '/api/v1/account', idle.cookie)).statusCode, 200, 'the last request restarted the idle limit');
      offsetMs += 12 * HOUR + 1000;
      assert.equal((await withCookie('GET', '/api/v1/account', idle.cookie)).statusCode, 401, 'idle for more than 12 h');
      const idleEnded = await withCookie('GET', '/api/dashboard/session', idle.cookie);
      assert.deepEqual([idleEnded.statusCode, idleEnded.json()], [200, SIGNED_OUT], 'the session probe says "no session" without an error (issue 30)');
      assert.equal((await withCookie('GET', '/api/v1/account', idle.cookie)).headers['www-authenticate'], 'Bearer');

      const hashOf = (id: string) => createHash('sha256').update(id).digest('hex');
      const stored = async () => (await admin.database.db.selectFrom('dashboard_sessions').select('id_hash').execute()).map((r) => r.id_hash);
      assert.ok((await stored()).includes(hashOf(abandoned.cookie)), 'idle for a day, never looked up again: still in the table');
      const busy = await session();
      assert.ok(!(await stored()).includes(hashOf(abandoned.cookie)), 'removed by the next sign-in');
      let elapsed = 0;
      while (elapsed + 11 * HOUR < 7 * 24 * HOUR) {
        offsetMs += 11 * HOUR;
        elapsed += 11 * HOUR;
        assert.equal((await withCookie('GET', '/api/dashboard/session', busy.cookie)).statusCode, 200, `alive after ${elapsed / HOUR} h`);
      }
      offsetMs += 7 * 24 * HOUR - elapsed;
      const ended = await withCookie('GET', '/api/v1/account', busy.cookie);
      assert.equal(ended.statusCode, 401, '7 days after sign-in, however busy');
      assert.equal(ended.json().error, 'unauthorized');

    });

    test('sign-out: needs the CSRF token, ends the session, clears the cookie; a second sign-out is a quiet 204', async () => {
      const { cookie, csrf } = await session();
      assert.equal((await withCookie('DELETE', '/api/dashboard/session', cookie)).statusCode, 403, 'no token, no sign-out');
      assert.equal((await withCookie('GET', '/api/dashboard/session', cookie)).statusCode, 200);
      const out = await withCookie('DELETE', '/api/dashboard/session', cookie, { 'x-csrf-token': csrf });
      assert.equal(out.statusCode, 204);
      assert.equal(out.body, '');
      assert.match(String(out.headers['set-cookie']), /^ev_session=; HttpOnly; SameSite=Strict; Path=\/; Max-Age=0/);
      assert.deepEqual((await withCookie('GET', '/api/dashboard/session', cookie)).json(), SIGNED_OUT);
      assert.equal((await withCookie('GET', '/api/v1/account', cookie)).statusCode, 401);
      assert.equal((await withCookie('DELETE', '/api/dashboard/session', cookie, { 'x-csrf-token': csrf })).statusCode, 204);
      const noCookie = await app.inject({ method: 'GET', url: '/api/dashboard/session' });
      assert.deepEqual([noCookie.statusCode, noCookie.json()], [200, SIGNED_OUT], 'no cookie at all: not an error (issue 30)');
      assert.equal((await withCookie('GET', '/api/v1/account', 'x'.repeat(43))).statusCode, 401, 'an id never issued');
    });

    test('a deleted account’s session stops at once; a new password signs out the old sessions', async () => {
      const doomed = await makeAccount('doomed@example.test');
      const s = await session('doomed@example.test');
      assert.equal((await withCookie('GET', '/api/v1/account', s.cookie)).statusCode, 200);
      await admin.database.db.deleteFrom('accounts').where('id', '=', doomed.id).execute();
      assert.equal((await withCookie('GET', '/api/v1/account', s.cookie)).statusCode, 401);
      assert.deepEqual((await withCookie('GET', '/api/dashboard/session', s.cookie)).json(), SIGNED_OUT);

      const moved = await makeAccount('moved@example.test');
      const old = await session('moved@example.test');
      assert.ok(await admin.accounts.setPasswordHash(moved.id, await hashPassword('a brand new password')));
      assert.equal((await withCookie('GET', '/api/v1/account', old.cookie)).statusCode, 401);
      assert.equal((await signIn('moved@example.test', PASSWORD, nextIp())).statusCode, 401, 'the old password no longer works');
      assert.equal((await signIn('moved@example.test', 'a brand new password', nextIp())).statusCode, 200);
    });

    test('sign-up: off by default (403 forbidden); on: 201, free plan, signed in, no key yet; taken address 409; weak password 400; 10 per client address per 15 min', async () => {
      const off = await app.inject({ method: 'POST', url: '/api/dashboard/signup', payload: { email: 'new@example.test', password: PASSWORD } });
      assert.equal(off.statusCode, 403);
      assert.equal(off.json().error, 'forbidden');
      assert.equal(await admin.accounts.findAccountByEmail('new@example.test'), undefined);
      const open = await buildApp(env({ EMAIL_DASHBOARD_SIGNUP: 'true' }), { clock });
      const openAnswers = recordAnswers(open);
      try {
        const res = await open.inject({ method: 'POST', url: '/api/dashboard/signup', payload: { email: 'New@Example.test', password: PASSWORD } });
        assert.equal(res.statusCode, 201, res.body);
        assert.equal(res.json().account.email, 'new@example.test');
        assert.equal(res.json().account.plan, 'free');
        const cookie = /^ev_session=([^;]+)/.exec(String(res.headers['set-cookie']))![1]!;
        const keys = await open.inject({ method: 'GET', url: '/api/dashboard/api-keys', headers: { cookie: `ev_session=${cookie}` } });
        assert.deepEqual(keys.json().keys, []);
        const account = await open.inject({ method: 'GET', url: '/api/v1/account', headers: { cookie: `ev_session=${cookie}` } });
        assert.equal(account.json().account.plan, 'free');
        const taken = await open.inject({ method: 'POST', url: '/api/dashboard/signup', payload: { email: 'ada@example.test', password: PASSWORD } });
        assert.equal(taken.statusCode, 409);
        assert.equal(taken.json().error, 'conflict');
        const weak = await open.inject({ method: 'POST', url: '/api/dashboard/signup', payload: { email: 'weak@example.test', password: 'short' } });
        assert.deepEqual([weak.statusCode, weak.json().error, weak.json().field], [400, 'invalid_request', 'password']);
        const notEmail = await open.inject({ method: 'POST', url: '/api/dashboard/signup', payload: { email: 'not-an-address', password: PASSWORD } });
        assert.deepEqual([notEmail.statusCode, notEmail.json().field], [400, 'email']);
        assert.equal((await signIn('new@example.test', PASSWORD, nextIp())).statusCode, 200, 'the new account signs in on the other process too');
        // At most 10 sign-ups (taken addresses included: each costs a scrypt) per client address per 15 min.
        const ip = nextIp();
        const signUp = (email: string, from: string) => open.inject({ method: 'POST', url: '/api/dashboard/signup', headers: { 'x-forwarded-for': from }, payload: { email, password: PASSWORD } });
        for (let i = 0; i < 10; i++) assert.equal((await signUp(i % 2 ? 'ada@example.test' : `bulk${i}@example.test`, ip)).statusCode, i % 2 ? 409 : 201);
        const flood = await signUp('bulk10@example.test', ip);
        assert.deepEqual([flood.statusCode, flood.json().error], [429, 'rate_limited']);
        assert.ok(Number(flood.headers['retry-after']) > 0);
        assert.equal((await signUp('bulk10@example.test', nextIp())).statusCode, 201, 'another client address is not held up');
        await assertAnswersMatchDocument(open, openAnswers);
      } finally {
        await open.close();
      }
    });

    test('the document: session routes and the cookie scheme; authenticated routes accept it; state-changing ones document 403', async () => {
      const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
      assert.deepEqual(doc.components.securitySchemes.dashboardSession, { ...doc.components.securitySchemes.dashboardSession, type: 'apiKey', in: 'cookie', name: 'ev_session' });
      for (const path of ['/api/dashboard/session', '/api/dashboard/signup']) assert.ok(doc.paths[path], path);
      assert.ok(doc.paths['/api/v1/verify-single'].post.security.some((s: Record<string, unknown>) => 'dashboardSession' in s));
      assert.ok(doc.paths['/api/v1/verify-single'].post.responses['403']);
      assert.ok(doc.paths['/api/dashboard/api-keys'].delete.responses['403']);
    });

    test('/favicon.ico is the dashboards\' mark (an ICO), cached for a month (issue 44)', async () => {
      await assertServesFavicon(app);
    });

    test('the bare host leads to the dashboard: GET / is a 302 to /dashboard/ (issue 30)', async () => {
      const res = await app.inject({ method: 'GET', url: '/' });
      assert.deepEqual([res.statusCode, res.headers.location], [302, '/dashboard/']);
      assert.equal(((await app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, unknown> }).paths['/'], undefined, 'a page, not API');
    });

    // Last: every answer the tests above provoked, checked against the served document.
    test('every answer matches the OpenAPI document (status, headers, body)', async () => {
      const covered = await assertAnswersMatchDocument(app, answers);
      for (const op of ['POST /api/dashboard/session', 'GET /api/dashboard/session', 'DELETE /api/dashboard/session', 'POST /api/dashboard/signup', 'POST /api/v1/verify-single']) assert.ok(covered.has(op), op);
    });
  });
}
