import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError, COMMON_ERROR_STATUS } from '../errors/app-error.js';
import { leaveAnswersUnchecked } from '../testing/answer-guard.js';
import { LogCapture } from '../testing/log-capture.js';
import { assertOpenApiComplete } from '../testing/openapi.js';
import { createServiceApp } from './create-app.js';

async function makeApp(metricsToken?: string) {
  const { app } = await createServiceApp({ title: 't', version: '1.0.0', description: 't', errorTable: COMMON_ERROR_STATUS, logLevel: 'info', bodyLimit: 1024, trustProxy: false, keyLocations: ['bearer'], logStream: new LogCapture(), metricsToken });
  app.get('/items/:id', async (request) => ({ id: (request.params as { id: string }).id }));
  app.get('/limited', async () => {
    throw new AppError('rate_limited', 'Slow down.', undefined, { 'retry-after': '1' });
  });
  app.get('/spent', async () => {
    throw new AppError('quota_exceeded', 'Used up.');
  });
  // A synthetic app standing in for a service: its routes document only what each test is about.
  leaveAnswersUnchecked(app);
  await app.ready();
  return app;
}

const line = (text: string, prefix: string) => text.split('\n').find((l) => l.startsWith(prefix));

// Issue #15: /metrics on both services, by route pattern, with refusals.
test('requests are counted by route pattern and status, refusals by kind; unmatched URLs share one label', async () => {
  const app = await makeApp();
  try {
    for (const id of ['a1', 'b2', 'c3']) assert.equal((await app.inject({ method: 'GET', url: `/items/${id}` })).statusCode, 200);
    assert.equal((await app.inject({ method: 'GET', url: '/limited' })).statusCode, 429);
    assert.equal((await app.inject({ method: 'GET', url: '/spent' })).statusCode, 429);
    for (const junk of ['/nope-1', '/nope-2']) assert.equal((await app.inject({ method: 'GET', url: junk })).statusCode, 404);
    const res = await app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(res.statusCode, 200, 'open without a token setting');
    const text = res.body;
    assert.equal(line(text, 'http_requests_total{method="GET",route="/items/:id",status="200"}'), 'http_requests_total{method="GET",route="/items/:id",status="200"} 3');
    assert.equal(line(text, 'http_request_duration_seconds_count{method="GET",route="/items/:id",status="200"}'), 'http_request_duration_seconds_count{method="GET",route="/items/:id",status="200"} 3');
    assert.equal(line(text, 'http_requests_total{method="GET",route="unmatched",status="404"}'), 'http_requests_total{method="GET",route="unmatched",status="404"} 2');
    assert.equal(line(text, 'rate_limit_refusals_total{route="/limited"}'), 'rate_limit_refusals_total{route="/limited"} 1');
    assert.equal(line(text, 'quota_refusals_total{route="/spent"}'), 'quota_refusals_total{route="/spent"} 1');
    for (const raw of ['a1', 'b2', 'nope-1']) assert.ok(!text.includes(raw), `no raw URL (${raw})`);
    await assertOpenApiComplete(app);
  } finally {
    await app.close();
  }
});

test('with a token, /metrics needs it as a bearer token (401 in the error shape otherwise)', async () => {
  const app = await makeApp('s3cret-metrics-token');
  try {
    for (const authorization of [undefined, 'Bearer wrong', 'Bearer s3cret-metrics-token-', 's3cret-metrics-token']) {
      const res = await app.inject({ method: 'GET', url: '/metrics', headers: authorization ? { authorization } : {} });
      assert.deepEqual([res.statusCode, res.json().error], [401, 'unauthorized'], String(authorization));
    }
    const ok = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer s3cret-metrics-token' } });
    assert.equal(ok.statusCode, 200);
    assert.match(ok.headers['content-type'] as string, /^text\/plain; version=0\.0\.4/);
  } finally {
    await app.close();
  }
});
