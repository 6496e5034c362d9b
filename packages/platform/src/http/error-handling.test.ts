import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from 'typebox';
import { AppError, COMMON_ERROR_STATUS, type ErrorCode } from '../errors/app-error.js';
import { leaveAnswersUnchecked } from '../testing/answer-guard.js';
import { LogCapture } from '../testing/log-capture.js';
import { createServiceApp } from './create-app.js';
import { errorResponses, errorSchema } from './schemas.js';

// A service's own code: a service declares it in its errors.ts (ServiceErrorCodes); this
// platform-only test stands in for one, hence the casts.
const QUOTA = 'insufficient_quota' as ErrorCode;
const TABLE = { ...COMMON_ERROR_STATUS, [QUOTA]: 402 };

async function makeApp() {
  const logs = new LogCapture();
  const { app, routes } = await createServiceApp({
    title: 't',
    version: '1.0.0',
    description: 't',
    errorTable: TABLE,
    logLevel: 'info',
    bodyLimit: 1024,
    trustProxy: false,
    keyLocations: ['bearer'],
    logStream: logs,
  });
  const errors = errorResponses(errorSchema(Object.keys(TABLE)), [400, 402, 500]);
  app.post(
    '/things',
    {
      schema: {
        body: Type.Object({ name: Type.String({ minLength: 1 }), flag: Type.Optional(Type.Boolean()), count: Type.Optional(Type.Integer()) }, { additionalProperties: false }),
        response: { 200: Type.Object({ name: Type.String(), flag: Type.Boolean() }), ...errors },
      },
    },
    async (request) => ({ name: request.body.name, flag: request.body.flag ?? false }),
  );
  app.get('/things', { schema: { querystring: Type.Object({ page: Type.Optional(Type.Integer({ minimum: 1 })) }), response: errors } }, async (request) => ({ page: request.query.page ?? 1 }));
  app.get('/files/:id/download/:token', async (request) => ({ id: (request.params as { id: string }).id }));
  app.get('/boom', { schema: { response: errors } }, async () => {
    throw new Error('secret database password is hunter2');
  });
  app.get('/denied', { schema: { response: errors } }, async () => {
    throw new AppError(QUOTA, 'Not enough quota.', { remaining: 3, required: 10 });
  });
  app.get('/bad-code', async () => {
    // A code outside the table cannot compile in a service; at run time it is still caught.
    throw new AppError('not_in_table' as ErrorCode, 'x');
  });
  // A synthetic app standing in for a service: its routes document only what each test is about.
  leaveAnswersUnchecked(app);
  await app.ready();
  return { app, routes, logs };
}

const json = { 'content-type': 'application/json' };

test('a valid request passes and the request id is echoed', async () => {
  const { app } = await makeApp();
  const res = await app.inject({ method: 'POST', url: '/things', headers: { ...json, 'x-request-id': 'abc-123' }, payload: { name: 'x', flag: true } });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), { name: 'x', flag: true });
  assert.equal(res.headers['x-request-id'], 'abc-123');
  const generated = await app.inject({ method: 'POST', url: '/things', headers: { ...json, 'x-request-id': 'bad id with spaces' }, payload: { name: 'x' } });
  assert.match(String(generated.headers['x-request-id']), /^req_[0-9a-z]{26}$/);
});

test('unknown path: 404 not_found in the error shape', async () => {
  const { app } = await makeApp();
  const res = await app.inject({ method: 'GET', url: '/nope?x=1' });
  assert.equal(res.statusCode, 404);
  assert.equal(res.json().error, 'not_found');
  assert.equal(typeof res.json().message, 'string');
});

test('known path, wrong method: 405 with Allow', async () => {
  const { app } = await makeApp();
  const res = await app.inject({ method: 'DELETE', url: '/things' });
  assert.equal(res.statusCode, 405);
  assert.equal(res.headers.allow, 'GET, HEAD, POST');
  assert.equal(res.json().error, 'method_not_allowed');
});

test('malformed and empty JSON: 400 invalid_json', async () => {
  const { app } = await makeApp();
  for (const payload of ['{"name": "x",', 'not json', '[1,2', '{"name":"x"}}']) {
    const res = await app.inject({ method: 'POST', url: '/things', headers: json, payload });
    assert.equal(res.statusCode, 400, payload);
    assert.equal(res.json().error, 'invalid_json', payload);
  }
  const empty = await app.inject({ method: 'POST', url: '/things', headers: json, payload: '' });
  assert.equal(empty.statusCode, 400);
  assert.equal(empty.json().error, 'invalid_json');
});

test('invalid UTF-8 in a JSON body: 400 invalid_json; valid UTF-8 passes intact', async () => {
  const { app } = await makeApp();
  const bad = Buffer.concat([Buffer.from('{"name":"caf'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
  const res = await app.inject({ method: 'POST', url: '/things', headers: json, payload: bad });
  assert.equal(res.statusCode, 400);
  assert.equal(res.json().error, 'invalid_json');
  assert.match(res.json().message, /UTF-8/);
  const ok = await app.inject({ method: 'POST', url: '/things', headers: json, payload: Buffer.from('{"name":"café ☕"}') });
  assert.equal(ok.json().name, 'café ☕');
  const poisoned = await app.inject({ method: 'POST', url: '/things', headers: json, payload: '{"name":"x","__proto__":{"flag":true}}' });
  assert.equal(poisoned.statusCode, 400);
});

test('body over the limit: 413 payload_too_large', async () => {
  const { app } = await makeApp();
  const res = await app.inject({ method: 'POST', url: '/things', headers: json, payload: JSON.stringify({ name: 'x'.repeat(2000) }) });
  assert.equal(res.statusCode, 413);
  assert.equal(res.json().error, 'payload_too_large');
});

test('wrong content type: 415 unsupported_media_type', async () => {
  const { app } = await makeApp();
  for (const type of ['application/xml', 'text/plain', 'application/x-www-form-urlencoded']) {
    const res = await app.inject({ method: 'POST', url: '/things', headers: { 'content-type': type }, payload: 'name=x' });
    assert.equal(res.statusCode, 415, type);
    assert.equal(res.json().error, 'unsupported_media_type');
  }
});

test('validation: missing, wrongly typed and unknown fields name the field; no coercion of body types', async () => {
  const { app } = await makeApp();
  const cases: Array<[unknown, string]> = [
    [{}, 'name'],
    [{ name: 5 }, 'name'],
    [{ name: 'x', flag: 'true' }, 'flag'],
    [{ name: 'x', count: '3' }, 'count'],
    [{ name: 'x', extra: 1 }, 'extra'],
    [{ name: '' }, 'name'],
  ];
  for (const [payload, field] of cases) {
    const res = await app.inject({ method: 'POST', url: '/things', headers: json, payload: JSON.stringify(payload) });
    assert.equal(res.statusCode, 400, JSON.stringify(payload));
    const body = res.json();
    assert.equal(body.error, 'invalid_request');
    assert.equal(body.field, field);
    assert.match(body.message, new RegExp(field));
  }
  const notObject = await app.inject({ method: 'POST', url: '/things', headers: json, payload: '[1]' });
  assert.equal(notObject.statusCode, 400);
  assert.equal(notObject.json().error, 'invalid_request');
});

test('query strings are coerced but still validated', async () => {
  const { app } = await makeApp();
  assert.deepEqual((await app.inject({ method: 'GET', url: '/things?page=2' })).json(), { page: 2 });
  const bad = await app.inject({ method: 'GET', url: '/things?page=zero' });
  assert.equal(bad.statusCode, 400);
  assert.equal(bad.json().field, 'page');
});

test('business errors carry their documented extra fields', async () => {
  const { app } = await makeApp();
  const res = await app.inject({ method: 'GET', url: '/denied' });
  assert.equal(res.statusCode, 402);
  assert.deepEqual(res.json(), { error: 'insufficient_quota', message: 'Not enough quota.', remaining: 3, required: 10 });
});

test('answers made before routing carry X-Request-Id too: a badly percent-encoded or over-long path parameter', async () => {
  const { app } = await makeApp();
  for (const url of ['/files/%E0%A4%A/download/x', `/files/${'a'.repeat(5000)}/download/x`]) {
    const res = await app.inject({ method: 'GET', url });
    assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${url.slice(0, 40)}: ${res.statusCode}`);
    assert.match(String(res.headers['x-request-id']), /^req_[0-9a-z]{26}$/, `${url.slice(0, 40)}: ${res.statusCode} ${res.body}`);
    assert.equal(typeof res.json().error, 'string');
  }
});

test('unexpected failures: 500 without internals, logged in full with the request id', async () => {
  const { app, logs } = await makeApp();
  for (const url of ['/boom', '/bad-code']) {
    const res = await app.inject({ method: 'GET', url, headers: { 'x-request-id': 'trace-me' } });
    assert.equal(res.statusCode, 500);
    const body = res.json();
    assert.equal(body.error, 'internal_error');
    assert.doesNotMatch(res.body, /hunter2|stack|not_in_table/);
    assert.match(body.message, /trace-me/);
  }
  const logged = logs.lines.find((l) => l.reqId === 'trace-me' && l.level === 50 && JSON.stringify(l).includes('hunter2'));
  assert.ok(logged, 'the cause is logged with the request id');
});

test('the request log line carries the path only: no query-string API key, no token path parameter', async () => {
  const { app, logs } = await makeApp();
  await app.inject({ method: 'GET', url: '/things?api_key=ev_live_SECRETSECRETSECRETSECRETSECRET12' });
  const line = logs.lines.find((l) => l.msg === 'request completed');
  assert.equal(line?.path, '/things');
  assert.doesNotMatch(logs.text(), /SECRETSECRET/);
  await app.inject({ method: 'GET', url: '/files/cnv_42/download/dl_TOPSECRETTOKEN123' });
  const download = logs.lines.filter((l) => l.msg === 'request completed').at(-1);
  assert.equal(download?.path, '/files/cnv_42/download/[redacted]', 'credential path parameters are redacted; ids stay');
  assert.doesNotMatch(logs.text(), /TOPSECRET/);
});
