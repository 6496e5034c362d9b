import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { COMMON_ERROR_STATUS } from '../errors/app-error.js';
import { createServiceApp } from '../http/create-app.js';
import { errorResponses, errorSchema, formChecker, Nullable, StringEnum, withHeaders } from '../http/schemas.js';
import { leaveAnswersUnchecked } from './answer-guard.js';
import { LogCapture } from './log-capture.js';
import { assertAnswersMatchDocument, assertOpenApiComplete, recordAnswers } from './openapi.js';

/** An app whose routes answer as documented or, on `?lie=…`, not: the checker must tell which. */
async function makeApp() {
  const { app } = await createServiceApp({
    title: 't',
    version: '1.0.0',
    description: 't',
    errorTable: COMMON_ERROR_STATUS,
    logLevel: 'info',
    bodyLimit: 1024,
    trustProxy: false,
    keyLocations: ['bearer'],
    logStream: new LogCapture(),
  });
  const errors = errorResponses(errorSchema(Object.keys(COMMON_ERROR_STATUS), { remaining: Type.Integer() }), [400, 429]);
  const Thing = Type.Object({ name: Type.String(), kind: Nullable(StringEnum(['a', 'b'])) });
  app.get(
    '/things/:id',
    {
      schema: {
        params: Type.Object({ id: Type.String() }),
        querystring: Type.Object({ lie: Type.Optional(Type.String()) }),
        response: { 200: withHeaders(Thing, { Location: Type.String() }), ...errors },
      },
    },
    async (request, raw) => {
      // The lies are what the typed reply would refuse to compile.
      const reply = raw as unknown as FastifyReply;
      const lie = request.query.lie;
      if (lie === 'header') reply.header('digest', 'sha-256=x');
      if (lie === 'status') return reply.code(202).send({ name: 'x', kind: null });
      if (lie === 'body') return reply.type('application/json').send(JSON.stringify({ name: 1, kind: 'c' }));
      if (lie === 'media') return reply.type('text/csv').send('a,b\r\n');
      reply.header('location', '/things/1');
      return reply.send({ name: 'x', kind: request.params.id === 'null' ? null : 'a' });
    },
  );
  // Its lies are on purpose: the answer guard `npm test` loads would turn them into 500s.
  leaveAnswersUnchecked(app);
  return app;
}

test('answers as documented pass; an undocumented status, header, media type or a body off its schema are each reported', async () => {
  const app = await makeApp();
  const answers = recordAnswers(app);
  await assertOpenApiComplete(app);
  await app.inject('/things/1');
  await app.inject('/things/null');
  await app.inject({ method: 'DELETE', url: '/things/1' }); // 405, documented on every operation
  await app.inject('/nowhere'); // 404 on no documented path: not an operation's answer
  const covered = await assertAnswersMatchDocument(app, answers);
  assert.deepEqual([...covered].sort(), ['GET /openapi.json', 'GET /things/{id}']);

  for (const [lie, expected] of [
    ['header', /header digest sent but not documented/],
    ['status', /→ 202: status not documented/],
    ['body', /body .*name must be string.*kind must be equal to one of the allowed values/],
    ['media', /media type text\/csv not documented/],
  ] as const) {
    answers.length = 0;
    await app.inject(`/things/1?lie=${lie}`);
    await assert.rejects(assertAnswersMatchDocument(app, answers), (err: Error) => expected.test(err.message), lie);
  }
  await app.close();
});

test('formChecker: the documented form schema checks collected text fields, coerced, naming the field', () => {
  const check = formChecker(Type.Unsafe({ type: 'object', nullable: true, required: ['file', 'target'], properties: { file: { type: 'string' }, target: { type: 'string' }, quality: { type: 'integer', minimum: 1, maximum: 100 } } }));
  assert.deepEqual(check({ file: '', target: 'pdf', quality: '80' }), { file: '', target: 'pdf', quality: 80 });
  assert.throws(() => check({ file: '', target: 'pdf', quality: 'high' }), { code: 'invalid_request', details: { field: 'quality' } });
  assert.throws(() => check({ file: '', target: 'pdf', quality: '101' }), { code: 'invalid_request', details: { field: 'quality' } });
  assert.throws(() => check({ file: '' }), { code: 'invalid_request', details: { field: 'target' } });
  assert.throws(() => check({ file: '', target: 'pdf', extra: 'x' }), { code: 'invalid_request', details: { field: 'extra' } });
});
