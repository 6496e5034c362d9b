import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Type } from 'typebox';
import { COMMON_ERROR_STATUS } from '../errors/app-error.js';
import { createServiceApp, ROUTER_ANSWERS } from '../http/create-app.js';
import { errorResponses, errorSchema, required, withHeaders } from '../http/schemas.js';
import { LogCapture } from './log-capture.js';
import { takeAnswerProblems } from './answer-guard.js';
import { freePort, startProcess, stopProcess } from './processes.js';

// The guard `npm test` loads into every test process (issue #29): an answer that does not
// match the app's document fails the test that made it (a 500 naming the mismatch) and, even
// when no test looks at it, the process (the test file).

const GUARD = new URL('./answer-guard.js', import.meta.url).href;
const CREATE_APP = fileURLToPath(new URL('../http/create-app.js', import.meta.url));

async function makeApp() {
  const { app } = await createServiceApp({
    title: 't', version: '1.0.0', description: 't', errorTable: COMMON_ERROR_STATUS, logLevel: 'info', bodyLimit: 1024, trustProxy: false, keyLocations: ['bearer'], logStream: new LogCapture(),
  });
  const errors = errorResponses(errorSchema(Object.keys(COMMON_ERROR_STATUS)), [400, 500]);
  const Thing = Type.Object({ name: Type.String() });
  app.get('/right', { schema: { response: { 200: withHeaders(Thing, required({ ETag: Type.String() })), ...errors } } }, async (_request, reply) => reply.header('etag', '"1"').send({ name: 'x' }));
  app.get('/teapot', { schema: { response: { 200: Thing, ...errors } } }, async (_request, reply) => reply.code(418 as 200).send({ name: 'x' }));
  app.get('/no-etag', { schema: { response: { 200: withHeaders(Thing, required({ ETag: Type.String() })), ...errors } } }, async () => ({ name: 'x' }));
  app.get('/items/:id', { schema: { params: Type.Object({ id: Type.String() }), response: { 200: Thing, ...errors } } }, async () => ({ name: 'x' }));
  app.get('/wrong-type', { schema: { response: { 200: { description: 'CSV', content: { 'text/csv': { schema: Type.String() } } }, ...errors } } }, async (_request, reply) => reply.type('text/plain').send('a,b'));
  await app.ready();
  return app;
}

test('answers that match the document pass untouched; the document marks required headers', async () => {
  const app = await makeApp();
  const res = await app.inject({ method: 'GET', url: '/right' });
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(res.json(), { name: 'x' });
  const doc = app.swagger() as unknown as { paths: Record<string, { get: { responses: Record<string, { headers: Record<string, { required?: boolean; schema: Record<string, unknown> }> }> } }> };
  const responses = doc.paths['/right']!.get.responses;
  assert.equal(responses['200']!.headers.ETag!.required, true);
  assert.deepEqual(responses['200']!.headers.ETag!.schema, { type: 'string' }, 'the mark is moved out of the schema');
  assert.equal(responses['400']!.headers['X-Request-Id']!.required, true);
  assert.equal(responses['405']!.headers.Allow!.required, true);
  assert.deepEqual(takeAnswerProblems(), []);
  await app.close();
});

test('the router\'s own answers (bad percent-encoding, a parameter too long, no such path) are in the description and pass', async () => {
  const app = await makeApp();
  const doc = app.swagger() as unknown as { info: { description: string } };
  assert.ok(doc.info.description.endsWith(ROUTER_ANSWERS));
  for (const [url, status, message] of [
    ['/items/%zz', 400, /malformed/],
    ['/nowhere/%zz', 400, /malformed/],
    [`/items/${'x'.repeat(101)}`, 400, /path parameter is too long/],
    ['/nowhere', 404, /./],
  ] as const) {
    const res = await app.inject({ method: 'GET', url });
    assert.equal(res.statusCode, status, `${url}: ${res.body}`);
    assert.match(res.json().message, message);
    assert.ok(res.headers['x-request-id']);
  }
  assert.deepEqual(takeAnswerProblems(), []);
  await app.close();
});

test('an undocumented status, a missing required header or an undocumented media type becomes a 500 naming the mismatch', async () => {
  const app = await makeApp();
  for (const [url, problem] of [
    ['/teapot', 'GET /teapot → 418: status not documented'],
    ['/no-etag', 'GET /no-etag → 200: required header etag missing'],
    ['/wrong-type', 'GET /wrong-type → 200: media type text/plain not documented (documented: text/csv)'],
  ] as const) {
    const res = await app.inject({ method: 'GET', url });
    assert.equal(res.statusCode, 500, url);
    assert.equal(res.json().error, 'internal_error');
    assert.match(res.json().message, new RegExp(`does not match the OpenAPI document: ${problem.replace(/[()]/g, '\\$&')}`));
    assert.ok(res.headers['x-request-id']);
  }
  // Taken, so that this file's process does not exit 1 for the mismatches it provoked on purpose.
  assert.equal(takeAnswerProblems().length, 3);
  await app.close();
});

test('a mismatch no test looked at still fails the process, with the mismatch on stderr', () => {
  const script = `
    const { createServiceApp } = await import(${JSON.stringify(CREATE_APP)});
    const { app } = await createServiceApp({ title: 't', version: '1.0.0', description: 't', errorTable: {}, logLevel: 'silent', bodyLimit: 1024, trustProxy: false, keyLocations: ['bearer'] });
    app.get('/teapot', { schema: { response: { 200: { type: 'object' } } } }, async (_q, reply) => reply.code(418).send({}));
    await app.ready();
    await app.inject({ method: 'GET', url: '/teapot' });
    await app.close();
  `;
  const run = spawnSync(process.execPath, [`--import=${GUARD}`, '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(run.status, 1, run.stderr);
  assert.match(run.stderr, /1 answer\(s\) did not match the OpenAPI document/);
  assert.match(run.stderr, /GET \/teapot → 418: status not documented/);
});

test('a service process a test starts is checked too: its mismatch joins the test process\'s list and fails its exit', async () => {
  assert.ok(process.execArgv.some((arg) => arg.endsWith('/answer-guard.js')), 'this file runs under the guard (npm test loads it)');
  const dir = await mkdtemp(join(tmpdir(), 'guard-child-'));
  try {
    const file = join(dir, 'server.mjs');
    await writeFile(file, `
      const { createServiceApp } = await import(${JSON.stringify(CREATE_APP)});
      const { app } = await createServiceApp({ title: 't', version: '1.0.0', description: 't', errorTable: {}, logLevel: 'silent', bodyLimit: 1024, trustProxy: false, keyLocations: ['bearer'] });
      app.get('/teapot', { schema: { response: { 200: { type: 'object' } } } }, async (_q, reply) => reply.code(418).send({}));
      await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });
      process.stdout.write(JSON.stringify({ event: 'ready' }) + '\\n');
      process.on('SIGTERM', () => { void app.close().then(() => process.exit()); });
    `);
    const port = await freePort();
    const started = await startProcess(file, { PORT: String(port) });
    const res = await fetch(`http://127.0.0.1:${port}/teapot`);
    assert.equal(res.status, 500);
    assert.match(((await res.json()) as { message: string }).message, /status not documented/);
    for (let i = 0; i < 100 && !started.lines.some((line) => line.includes('answer_mismatch')); i++) await sleep(50);
    assert.equal(await stopProcess(started.child, 'SIGTERM'), 1, 'the service process exits 1 for the mismatch');
    assert.deepEqual(takeAnswerProblems(), [`${file}: GET /teapot → 418: status not documented`]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
