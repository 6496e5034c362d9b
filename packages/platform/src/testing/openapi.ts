import assert from 'node:assert/strict';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import '../http/create-app.js';
import { DASHBOARD_PATH } from '../http/dashboard.js';

/**
 * Validates the app's served `/openapi.json` with a real OpenAPI validator and checks that
 * every registered route (but HEAD twins, and the dashboard's pages and the `/` that leads to them: HTML, not API) is
 * documented with its method.
 */
export async function assertOpenApiComplete(app: FastifyInstance): Promise<Record<string, unknown>> {
  const res = await app.inject({ method: 'GET', url: '/openapi.json' });
  assert.equal(res.statusCode, 200);
  const doc = res.json() as { openapi: string; paths: Record<string, Record<string, unknown>> };
  assert.equal(doc.openapi, '3.0.3');
  await SwaggerParser.validate(structuredClone(doc) as never);
  const missing: string[] = [];
  for (const r of app.routeIndex.list()) {
    // The dashboard's pages and the browser's icon are not API.
    if (r.method === 'HEAD' || r.url === '/' || r.url === '/favicon.ico' || r.url === DASHBOARD_PATH || r.url.startsWith(`${DASHBOARD_PATH}/`)) continue;
    const path = r.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    if (!doc.paths[path]?.[r.method.toLowerCase()]) missing.push(`${r.method} ${path}`);
  }
  assert.deepEqual(missing, [], 'every registered route is documented');
  return doc;
}

/** One answer of the app, as sent: what {@link assertAnswersMatchDocument} checks. */
export interface RecordedAnswer {
  method: string;
  /** The route pattern (Fastify syntax), or the raw path when no route matched (404/405). */
  route: string;
  matched: boolean;
  status: number;
  headers: Record<string, unknown>;
  /** The body when it was sent as text or bytes; undefined for a stream. */
  body: string | undefined;
}

/**
 * Records every answer `app` sends from now on (an `onSend` hook), so a suite can check
 * all the answers its tests provoked against the served document. Several apps of one suite
 * may record into one list (`answers`). Call before the app is ready.
 */
export function recordAnswers(app: FastifyInstance, answers: RecordedAnswer[] = []): RecordedAnswer[] {
  app.addHook('onSend', async (request, reply, payload) => {
    // Routes hidden from the document (the dashboard's pages, `/`) are not API: the answer guard skips them too.
    if ((request.routeOptions.schema as { hide?: boolean } | undefined)?.hide) return payload;
    const route = request.routeOptions.url;
    const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : payload == null ? '' : undefined;
    answers.push({ method: request.method, route: route ?? (request.url.split('?')[0] ?? '/'), matched: route !== undefined, status: reply.statusCode, headers: { ...reply.getHeaders() }, body });
    return payload;
  });
  return answers;
}

/** Headers whose presence on an answer must be documented on that response. */
const WATCHED_HEADERS = [
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'retry-after',
  'location',
  'digest',
  'repr-digest',
  'content-disposition',
  'content-range',
  'etag',
  'idempotent-replayed',
  'allow',
  'www-authenticate',
];
// X-Request-Id is on every answer (meta routes included); it is documented on the error responses, where it matters.

type Operation = { responses: Record<string, { headers?: Record<string, { required?: boolean; schema?: Record<string, unknown> }>; content?: Record<string, { schema?: unknown }> }> };

const templateRegex = (template: string) => new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`);

/**
 * Compares recorded answers with the served document: the status is documented for the
 * operation, every header the response marks `required` is present, every watched header
 * sent is documented on that response (with a value its schema accepts), the media type is documented, and a JSON body validates against the
 * response schema (Ajv, OpenAPI `nullable` understood). Returns the operations that were
 * checked (`GET /api/v1/jobs/{job_id}`), so a suite can assert its coverage.
 */
export async function assertAnswersMatchDocument(app: FastifyInstance, answers: readonly RecordedAnswer[]): Promise<Set<string>> {
  const check = await answerChecker(app);
  const covered = new Set<string>();
  const problems = check(answers, covered);
  assert.deepEqual(problems, [], 'every answer matches the OpenAPI document');
  return covered;
}

/**
 * The check of {@link assertAnswersMatchDocument} as a function built once (the document is
 * fetched, dereferenced and its schemas compiled here), for callers that check many small
 * lists of answers, such as a property test checking each run's answers as it goes. The
 * function returns the problems found (empty when every answer matches) and adds the
 * operations it checked to `covered` when given.
 */
export async function answerChecker(app: FastifyInstance): Promise<AnswerCheck> {
  const res = await app.inject({ method: 'GET', url: '/openapi.json' });
  return documentChecker(res.json());
}

/** Checks answers against one document: the problems found, and the operations checked added to `covered`. */
export type AnswerCheck = (answers: readonly RecordedAnswer[], covered?: Set<string>) => string[];

/** {@link answerChecker} for a document already at hand (an app's `app.swagger()`); it is not modified. */
export async function documentChecker(document: unknown): Promise<AnswerCheck> {
  const doc = (await SwaggerParser.dereference(structuredClone(document) as never)) as unknown as { paths: Record<string, Record<string, Operation>> };
  const ajv = new Ajv({ strict: false, allErrors: true, logger: false });
  addFormats.default(ajv);
  const validators = new Map<unknown, ValidateFunction>();
  const validate = (schema: unknown, value: unknown) => {
    let v = validators.get(schema);
    if (!v) validators.set(schema, (v = ajv.compile(schema as object)));
    return v(value) ? undefined : ajv.errorsText(v.errors);
  };
  const templates = Object.keys(doc.paths).map((t) => ({ t, re: templateRegex(t) }));
  return (answers, covered = new Set<string>()) => {
    const problems: string[] = [];
    for (const a of answers) {
      const method = a.method === 'HEAD' ? 'get' : a.method.toLowerCase();
      let template: string | undefined;
      if (a.matched) template = a.route.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      else template = templates.find(({ re }) => re.test(a.route))?.t;
      if (!template) {
        // The router's own answers on unknown paths, listed in the document's description (ROUTER_ANSWERS).
        if (a.status !== 404 && a.status !== 400) problems.push(`${a.method} ${a.route}: ${a.status} on a path the document does not have`);
        continue;
      }
      const ops = doc.paths[template] ?? {};
      // A 405 is answered for a method the path lacks: any operation of the path documents it.
      const op = a.matched ? ops[method] : Object.values(ops).find((o) => o.responses?.[String(a.status)]);
      const where = `${a.method} ${template} → ${a.status}`;
      if (!op) {
        problems.push(`${where}: operation not documented`);
        continue;
      }
      if (a.matched) covered.add(`${a.method === 'HEAD' ? 'GET' : a.method} ${template}`);
      const response = op.responses[String(a.status)] ?? op.responses[`${String(a.status)[0]}XX`] ?? op.responses.default;
      if (!response) {
        problems.push(`${where}: status not documented`);
        continue;
      }
      const documented = Object.fromEntries(Object.entries(response.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
      for (const [name, spec] of Object.entries(documented)) {
        if (spec.required && a.headers[name] === undefined) problems.push(`${where}: required header ${name} missing`);
      }
      for (const name of WATCHED_HEADERS) {
        const value = a.headers[name];
        if (value === undefined) continue;
        const spec = documented[name];
        if (!spec) {
          problems.push(`${where}: header ${name} sent but not documented`);
          continue;
        }
        const text = String(value);
        const schema = spec.schema ?? {};
        const typed = schema.type === 'integer' || schema.type === 'number' ? (/^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text) : text;
        const bad = validate(schema, typed);
        if (bad) problems.push(`${where}: header ${name}: ${JSON.stringify(text)} ${bad}`);
      }
      const mediaType = String(a.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (!mediaType || a.method === 'HEAD' || a.status === 206 || a.status === 304) continue;
      const media = response.content?.[mediaType] ?? response.content?.['*/*'];
      if (!media) {
        problems.push(`${where}: media type ${mediaType} not documented (documented: ${Object.keys(response.content ?? {}).join(', ') || 'none'})`);
        continue;
      }
      if (mediaType === 'application/json' && a.body !== undefined && media.schema) {
        const bad = validate(media.schema, JSON.parse(a.body));
        if (bad) problems.push(`${where}: body ${bad}: ${a.body.slice(0, 300)}`);
      }
    }
    return problems;
  };
}
