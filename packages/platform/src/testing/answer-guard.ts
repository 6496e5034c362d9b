import diagnostics from 'node:diagnostics_channel';
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
// Shared with `startProcess` (answer-problems.ts).
import { answerProblems as problems } from './answer-problems.js';
import type { AnswerCheck, RecordedAnswer } from './openapi.js';

// Every answer every suite provokes, checked against the app's own OpenAPI document (issue
// #29): the status listed for the operation, the media type listed, the headers the document
// marks required present, the watched headers documented, a JSON body valid against its
// schema (Ajv over the dereferenced document, see `documentChecker`).
//
// `npm test` loads this module into every test process (`node --test --import …`). It
// subscribes to Fastify's `fastify.initialization` diagnostics channel, so each app any test
// builds gets one `onSend` hook — the first one, and the services add no other — that checks
// the answer as it leaves. An answer that does not match is replaced by a 500
// `internal_error` whose message names the mismatch, so the assertion of the test that made
// it fails and says why; and since a test may not look at what it got, every mismatch is
// also kept and printed when the process exits, which then exits 1 (the file fails).
//
// Service processes a test starts (`startProcess`) load this module too: their mismatches are
// answered the same way and also written to stdout as one JSON line (`event:
// "answer_mismatch"`), which `startProcess` hands to the test process's list, so the test
// file fails even when the service's own exit code is not looked at.
//
// Not checked: apps without the OpenAPI plugin (test receivers, the metrics listener), routes
// hidden from the document (the dashboards' HTML pages), and the synthetic apps of the
// platform's own tests that say so with `leaveAnswersUnchecked` (their routes stand in for a
// service's and document only what their test is about).

/** Set by `startProcess` in a service process it starts: mismatches are reported on stdout too. */
const reportOnStdout = process.env.MAILCONV_ANSWER_GUARD_REPORT === 'stdout';
const checkers = new Map<string, Promise<AnswerCheck>>();
const byApp = new WeakMap<FastifyInstance, Promise<AnswerCheck>>();
const unchecked = new WeakSet<FastifyInstance>();

/** For the platform's own tests' synthetic apps only (see above): their answers are not checked. */
export function leaveAnswersUnchecked(app: FastifyInstance): void {
  unchecked.add(app);
}

function checkerOf(app: FastifyInstance): Promise<AnswerCheck> {
  let found = byApp.get(app);
  if (!found) {
    // Apps of one service built with the same settings serve the same document: compiled once.
    const text = JSON.stringify((app as unknown as { swagger(): unknown }).swagger());
    found = checkers.get(text);
    // Loaded on the first answer (issue 44): Node runs this module in every worker thread too
    // (the converter's data, subtitle and QOI workers), where Ajv, swagger-parser and Fastify
    // cost up to a second each and no app ever answers.
    if (!found) checkers.set(text, (found = import('./openapi.js').then((m) => m.documentChecker(JSON.parse(text)))));
    byApp.set(app, found);
  }
  return found;
}

/** Adds the check to `app` (done for every app when this module is loaded). */
export function guardAnswers(app: FastifyInstance): void {
  // Paths of hidden routes, for the answers no route made there (a 405 for another method).
  const hidden: RegExp[] = [];
  app.addHook('onRoute', (route) => {
    if (!(route.schema as { hide?: boolean } | undefined)?.hide) return;
    const pattern = route.url.replace(/[.+?^$()|[\]\\]/g, '\\$&').replace(/:[A-Za-z0-9_]+/g, '[^/]+').replace(/\*/g, '.*');
    hidden.push(new RegExp(`^${pattern}$`));
  });
  app.addHook('onSend', async (request, reply, payload) => {
    if (unchecked.has(app) || !app.hasDecorator('swagger') || (request.routeOptions.schema as { hide?: boolean } | undefined)?.hide) return payload;
    const route = request.routeOptions.url;
    if (route === undefined && hidden.some((re) => re.test(request.url.split('?')[0] ?? '/'))) return payload;
    const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : payload == null ? '' : undefined;
    const answer: RecordedAnswer = { method: request.method, route: route ?? (request.url.split('?')[0] ?? '/'), matched: route !== undefined, status: reply.statusCode, headers: { ...reply.getHeaders() }, body };
    const found = (await checkerOf(app))([answer]);
    if (found.length === 0) return payload;
    problems.push(...found);
    if (reportOnStdout) process.stdout.write(`${JSON.stringify({ event: 'answer_mismatch', problems: found })}\n`);
    if (payload instanceof Readable) payload.destroy();
    reply.code(500);
    reply.header('content-type', 'application/json; charset=utf-8');
    reply.removeHeader('content-length');
    return JSON.stringify({ error: 'internal_error', message: `This answer does not match the OpenAPI document: ${found.join('; ')}` });
  });
}

/** The mismatches found so far in this process, which are then forgotten (for the guard's own test). */
export function takeAnswerProblems(): string[] {
  return problems.splice(0);
}

diagnostics.subscribe('fastify.initialization', (message) => {
  guardAnswers((message as { fastify: FastifyInstance }).fastify);
});

process.on('exit', () => {
  if (problems.length === 0) return;
  process.stderr.write(`\n${problems.length} answer(s) did not match the OpenAPI document (packages/platform/src/testing/answer-guard.ts):\n${problems.map((p) => `  ${p}`).join('\n')}\n`);
  process.exitCode = 1;
});
