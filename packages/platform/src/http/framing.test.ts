import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { Type } from 'typebox';
import { COMMON_ERROR_STATUS } from '../errors/app-error.js';
import { leaveAnswersUnchecked } from '../testing/answer-guard.js';
import { LogCapture } from '../testing/log-capture.js';
import { createServiceApp, type ServiceApp } from './create-app.js';
import type { HttpTimeouts } from './framing.js';
import { jsonNestingExceeds, MAX_JSON_DEPTH } from './framing.js';

// Issue #15: broken framing was answered with Fastify's own body, a body that never
// finished was held open for over 100 s, and deeply nested JSON stalled the event loop.

async function makeApp(timeouts: HttpTimeouts): Promise<{ app: ServiceApp; port: number }> {
  const { app } = await createServiceApp({
    title: 't',
    version: '1.0.0',
    description: 't',
    errorTable: COMMON_ERROR_STATUS,
    logLevel: 'info',
    bodyLimit: 16 * 1024 * 1024,
    trustProxy: false,
    keyLocations: ['bearer'],
    logStream: new LogCapture(),
    timeouts,
  });
  app.post('/things', { schema: { body: Type.Object({ name: Type.String() }, { additionalProperties: false }) } }, async (request) => ({ name: request.body.name }));
  // A synthetic app standing in for a service: its routes document only what each test is about.
  leaveAnswersUnchecked(app);
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, port: (app.server.address() as { port: number }).port };
}

type Step = string | Buffer | { waitMs: number };

/**
 * Sends `steps` on a raw loopback connection and resolves with everything the server wrote
 * until it closed, and when that was (ms after connecting). Bounded: the socket is
 * destroyed after `limitMs`, and at most 64 KiB of answer is kept.
 */
async function exchange(port: number, steps: Step[], limitMs = 10_000): Promise<{ text: string; closedAfterMs: number; timedOut: boolean }> {
  const socket = connect(port, '127.0.0.1');
  const started = performance.now();
  let text = '';
  let timedOut = false;
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('data', (d: Buffer) => {
    if (text.length < 65_536) text += d.toString('latin1');
  });
  socket.on('error', () => undefined);
  const limit = setTimeout(() => {
    timedOut = true;
    socket.destroy();
  }, limitMs);
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  for (const step of steps) {
    if (socket.destroyed) break;
    if (typeof step === 'object' && 'waitMs' in step) await Promise.race([new Promise((r) => setTimeout(r, step.waitMs)), closed]);
    else socket.write(step);
  }
  await closed;
  clearTimeout(limit);
  return { text, closedAfterMs: performance.now() - started, timedOut };
}

/** The status and JSON body of a raw HTTP/1.1 answer. */
function parse(text: string): { status: number; body: Record<string, unknown>; contentType: string } {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
  const contentType = /\r\ncontent-type: ([^\r]*)/i.exec(head)?.[1] ?? '';
  return { status, body: JSON.parse(body) as Record<string, unknown>, contentType };
}

function assertContractError(text: string, status: number, code: string): void {
  const answer = parse(text);
  assert.equal(answer.status, status, text);
  assert.match(text.split('\r\n\r\n')[0] ?? '', /\r\nX-Request-Id: req_[0-9a-z]{26}\r\n/i, 'a request id, as on every answer');
  assert.match(answer.contentType, /^application\/json/);
  assert.deepEqual(Object.keys(answer.body).sort(), ['error', 'message']);
  assert.equal(answer.body.error, code);
  assert.equal(COMMON_ERROR_STATUS[code as keyof typeof COMMON_ERROR_STATUS], status, 'a code of the closed list with its status');
  assert.ok(typeof answer.body.message === 'string' && answer.body.message.length > 10);
}

describe('broken framing is answered in the contract shape', () => {
  let app: ServiceApp;
  let port: number;
  before(async () => ({ app, port } = await makeApp({ headersMs: 10_000, requestMs: 0, bodyIdleMs: 10_000 })));
  after(async () => app.close());

  const cases: Array<[string, Step[], number, string]> = [
    ['a bad chunk size', ['POST /things HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n'], 400, 'invalid_request'],
    ['Content-Length with Transfer-Encoding', ['POST /things HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n'], 400, 'invalid_request'],
    ['two different Content-Lengths', ['POST /things HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}'], 400, 'invalid_request'],
    ['a garbage request line', ['HELLO THERE\r\n\r\n'], 400, 'invalid_request'],
    ['oversized headers (32 KiB)', [`GET /things HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(32 * 1024)}\r\n\r\n`], 431, 'headers_too_large'],
  ];
  for (const [name, steps, status, code] of cases) {
    test(`${name}: ${status} ${code}, then the connection closes`, async () => {
      const r = await exchange(port, steps);
      assert.equal(r.timedOut, false);
      assertContractError(r.text, status, code);
    });
  }

  test('the server still answers a well-formed request afterwards; the refusals are counted in /metrics', async () => {
    const body = '{"name":"ok"}';
    const r = await exchange(port, [`POST /things HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`]);
    assert.equal(parse(r.text).status, 200);
    const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(text, /^http_client_errors_total\{error="invalid_request"\} 4$/m);
    assert.match(text, /^http_client_errors_total\{error="headers_too_large"\} 1$/m);
  });
});

describe('slow clients are cut after the documented time-outs', () => {
  let app: ServiceApp;
  let port: number;
  before(async () => ({ app, port } = await makeApp({ headersMs: 500, requestMs: 0, bodyIdleMs: 600 })));
  after(async () => app.close());

  test('headers that never finish: 408 request_timeout within the headers time-out and Node’s 1 s check', async () => {
    const r = await exchange(port, ['POST /things HTTP/1.1\r\nHost: x\r\n', { waitMs: 8000 }]);
    assert.equal(r.timedOut, false);
    assertContractError(r.text, 408, 'request_timeout');
    assert.ok(r.closedAfterMs < 4000, `cut after ${Math.round(r.closedAfterMs)} ms`);
  });

  test('a body that stops arriving: 408 request_timeout after the idle time-out', async () => {
    const r = await exchange(port, ['POST /things HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":"', { waitMs: 8000 }]);
    assert.equal(r.timedOut, false);
    assertContractError(r.text, 408, 'request_timeout');
    assert.ok(r.closedAfterMs < 4000, `cut after ${Math.round(r.closedAfterMs)} ms`);
    assert.match((await app.inject({ method: 'GET', url: '/metrics' })).body, /^http_client_errors_total\{error="request_timeout"\} 2$/m, 'the slow headers and this body');
  });

  test('a slow body that keeps arriving is not cut, however long it takes in all', async () => {
    const body = '{"name":"slow-but-steady"}';
    const steps: Step[] = [`POST /things HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`];
    // 26 bytes, one every 100 ms: about 2.6 s in all, over four times the idle time-out.
    for (const ch of body) steps.push({ waitMs: 100 }, ch);
    const r = await exchange(port, steps);
    assert.equal(r.timedOut, false);
    const answer = parse(r.text);
    assert.equal(answer.status, 200, r.text);
    assert.deepEqual(answer.body, { name: 'slow-but-steady' });
  });
});

describe('a total request time-out, when set, cuts a trickle', () => {
  let app: ServiceApp;
  let port: number;
  before(async () => ({ app, port } = await makeApp({ headersMs: 500, requestMs: 1500, bodyIdleMs: 10_000 })));
  after(async () => app.close());

  test('a body trickling in past the request time-out: 408 request_timeout', async () => {
    const steps: Step[] = ['POST /things HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n'];
    for (let i = 0; i < 80; i++) steps.push({ waitMs: 100 }, ' ');
    const r = await exchange(port, steps);
    assert.equal(r.timedOut, false);
    assertContractError(r.text, 408, 'request_timeout');
    assert.ok(r.closedAfterMs < 5000, `cut after ${Math.round(r.closedAfterMs)} ms`);
  });
});

describe('deeply nested JSON is refused by shape before parsing', () => {
  test('the scanner counts brackets outside strings only', () => {
    const nest = (n: number) => Buffer.from(`${'['.repeat(n)}${']'.repeat(n)}`);
    assert.equal(jsonNestingExceeds(nest(MAX_JSON_DEPTH)), false);
    assert.equal(jsonNestingExceeds(nest(MAX_JSON_DEPTH + 1)), true);
    assert.equal(jsonNestingExceeds(Buffer.from(JSON.stringify({ a: '['.repeat(1000), b: '\\"[[[' }))), false);
    assert.equal(jsonNestingExceeds(Buffer.from(`{"a":"\\\\"${'['.repeat(100)}`)), true, 'an escaped backslash ends before the quote');
  });

  test('9 MB of nested arrays: 400 invalid_json naming the limit', async () => {
    const { app } = await makeApp({ headersMs: 10_000, requestMs: 0, bodyIdleMs: 10_000 });
    try {
      const n = 4_500_000;
      const res = await app.inject({ method: 'POST', url: '/things', headers: { 'content-type': 'application/json' }, payload: `{"name":${'['.repeat(n)}${']'.repeat(n)}}` });
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().error, 'invalid_json');
      assert.match(res.json().message, new RegExp(`deeper than ${MAX_JSON_DEPTH} levels`));
    } finally {
      await app.close();
    }
  });
});
