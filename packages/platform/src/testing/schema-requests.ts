import SwaggerParser from '@apidevtools/swagger-parser';
import fc from 'fast-check';
import assert from 'node:assert/strict';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { answerChecker, type RecordedAnswer } from './openapi.js';
import { assertRequestsKeepContract, contentTypes, hostileJson, hostilePayload, hostileQuery, hostileString, oddHeaders, pathSegment, type AnswerRules, type PropertyBudget } from './hostile-requests.js';

// A schema-driven fuzzer (issue #29): requests for every operation of a served OpenAPI
// document, built from the document itself — path parameters, query parameters and JSON or
// multipart bodies generated from their schemas (valid values most of the time, then one
// field broken, an unknown field, or any JSON at all) — so that a route added tomorrow is
// fuzzed without anyone writing its arbitraries. `assertRequestsKeepContract` runs them.

type Schema = {
  type?: string;
  format?: string;
  enum?: unknown[];
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  nullable?: boolean;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
};
type Parameter = { name: string; in: 'path' | 'query' | 'header' | 'cookie'; required?: boolean; schema?: Schema };
type Operation = { parameters?: Parameter[]; requestBody?: { content?: Record<string, { schema?: Schema }> } };

/** URLs a generated `format: uri` field may hold: loopback or unusable only (nothing leaves the machine). */
const LOOPBACK_URLS = ['https://127.0.0.1/hook', 'http://127.0.0.1:9/x', 'https://[::1]:9/x', 'https://localhost/x', 'ftp://127.0.0.1/x', 'https://127.0.0.1:0/', 'not a url'];

/** Plausible values for `schema`: within its types, enums, bounds and patterns, with the edges of its bounds. */
export function valueFor(schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 6) return fc.jsonValue({ maxDepth: 1 });
  const value = plainValueFor(schema, depth);
  return schema.nullable ? fc.oneof({ weight: 5, arbitrary: value }, { weight: 1, arbitrary: fc.constant(null) }) : value;
}

function plainValueFor(s: Schema, depth: number): fc.Arbitrary<unknown> {
  if (s.enum && s.enum.length > 0) return fc.constantFrom(...s.enum);
  const alternatives = s.oneOf ?? s.anyOf;
  if (alternatives && alternatives.length > 0) return fc.oneof(...alternatives.map((a) => valueFor(a, depth + 1)));
  if (s.allOf && s.allOf.length > 0) {
    const merged: Schema = { type: 'object', properties: {}, required: [] };
    for (const part of s.allOf) {
      Object.assign(merged.properties!, part.properties ?? {});
      merged.required!.push(...(part.required ?? []));
    }
    return valueFor(merged, depth + 1);
  }
  switch (s.type ?? (s.properties ? 'object' : undefined)) {
    case 'string':
      return stringFor(s);
    case 'integer':
    case 'number': {
      const min = s.minimum ?? -1_000_000;
      const max = s.maximum ?? 1_000_000;
      const inside = s.type === 'integer' ? fc.integer({ min: Math.ceil(min), max: Math.floor(max) }) : fc.double({ min, max, noNaN: true });
      return fc.oneof({ weight: 6, arbitrary: inside }, { weight: 1, arbitrary: fc.constantFrom(min, max, min - 1, max + 1) });
    }
    case 'boolean':
      return fc.boolean();
    case 'array': {
      const minLength = Math.min(s.minItems ?? 0, 5);
      return fc.array(valueFor(s.items, depth + 1), { minLength, maxLength: Math.max(minLength, Math.min(s.maxItems ?? 4, 4)) });
    }
    case 'object': {
      const props = s.properties ?? {};
      const record = fc.record(Object.fromEntries(Object.entries(props).map(([k, v]) => [k, valueFor(v, depth + 1)])), { requiredKeys: (s.required ?? []).filter((k) => k in props) });
      if (typeof s.additionalProperties !== 'object') return record;
      const extra = fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), valueFor(s.additionalProperties, depth + 1), { maxKeys: 3 });
      return fc.tuple(extra, record).map(([e, r]) => ({ ...e, ...r }));
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function stringFor(s: Schema): fc.Arbitrary<string> {
  const minLength = s.minLength ?? 0;
  const maxLength = Math.max(minLength, Math.min(s.maxLength ?? 24, 64));
  let inside: fc.Arbitrary<string>;
  if (s.format === 'date-time') inside = fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
  else if (s.format === 'date') inside = fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
  else if (s.format === 'uri' || s.format === 'url') inside = fc.constantFrom(...LOOPBACK_URLS);
  else if (s.format === 'email') inside = fc.emailAddress().map((e) => e.replace(/@.*/, '@valid.test'));
  else if (s.pattern && !s.pattern.includes('\\u0000')) inside = fc.stringMatching(new RegExp(s.pattern)).filter((v) => v.length >= minLength && v.length <= (s.maxLength ?? Infinity));
  else inside = fc.string({ minLength, maxLength });
  const edges: string[] = [];
  if (s.maxLength !== undefined && s.maxLength < 100_000) edges.push('x'.repeat(s.maxLength + 1));
  if (minLength > 0) edges.push('x'.repeat(minLength - 1));
  return edges.length ? fc.oneof({ weight: 8, arbitrary: inside }, { weight: 1, arbitrary: fc.constantFrom(...edges) }) : inside;
}

/** A body for `schema`: valid most of the time (real values for the fields the suite names, half the time), else with one field replaced by any JSON, an unknown field, or any JSON at all. */
function bodyFor(schema: Schema | undefined, fieldValues: Record<string, () => unknown>): fc.Arbitrary<unknown> {
  const known = Object.keys(fieldValues).filter((k) => k in (schema?.properties ?? {}));
  const generated = valueFor(schema);
  const valid = known.length
    ? fc.tuple(generated, fc.subarray(known)).map(([v, use]) => (v && typeof v === 'object' && !Array.isArray(v) ? { ...v, ...Object.fromEntries(use.map((k) => [k, fieldValues[k]!()])) } : v))
    : generated;
  const names = Object.keys(schema?.properties ?? {});
  const broken = names.length
    ? fc.tuple(valid, fc.constantFrom(...names), hostileJson).map(([v, k, bad]) => (v && typeof v === 'object' && !Array.isArray(v) ? { ...v, [k]: bad } : bad))
    : hostileJson;
  const unknownField = fc.tuple(valid, hostileString, hostileJson).map(([v, k, bad]) => (v && typeof v === 'object' && !Array.isArray(v) ? { ...v, [`${k}_x`]: bad } : v));
  return fc.oneof({ weight: 6, arbitrary: valid }, { weight: 3, arbitrary: broken }, { weight: 1, arbitrary: unknownField }, { weight: 1, arbitrary: hostileJson });
}

/** A multipart form of `schema`'s text fields (as text) and, when it has one, a small file part. */
function formFor(schema: Schema | undefined): fc.Arbitrary<{ payload: Buffer; type: string }> {
  const props = schema?.properties ?? {};
  const texts = Object.entries(props).filter(([, v]) => v.format !== 'binary');
  const fileField = Object.entries(props).find(([, v]) => v.format === 'binary')?.[0];
  return fc
    .record({
      fields: fc.record(Object.fromEntries(texts.map(([k, v]) => [k, fc.oneof({ weight: 4, arbitrary: valueFor(v) }, { weight: 1, arbitrary: hostileString })])), { requiredKeys: [] }),
      file: fc.option(fc.uint8Array({ maxLength: 256 }), { nil: undefined, freq: 4 }),
      name: fc.constantFrom('sample.png', 'a.pdf', 'x', '../../etc/passwd', 'é.docx', ''),
    })
    .map(({ fields, file, name }) => {
      const boundary = 'fuzzboundary7MA4YWxkTrZu0gW';
      const parts: Buffer[] = [];
      for (const [k, v] of Object.entries(fields)) {
        if (v === undefined) continue;
        const text = typeof v === 'string' ? v : JSON.stringify(v);
        parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${text}\r\n`));
      }
      if (fileField && file) {
        parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${fileField}"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`), Buffer.from(file), Buffer.from('\r\n'));
      }
      parts.push(Buffer.from(`--${boundary}--\r\n`));
      return { payload: Buffer.concat(parts), type: `multipart/form-data; boundary=${boundary}` };
    });
}

/** What the generator needs from the suite: how to authenticate, and real values for path parameters. */
export interface SchemaRequestContext {
  /** Headers that authenticate as the suite's account (mostly used; sometimes none or broken ones). */
  auth: () => Record<string, string>;
  /** Real values by path parameter name (`job_id` → an existing job's id), used about half the time. */
  pathValues?: Record<string, () => string>;
  /** Real values by JSON body field name (`upload_id` → an existing upload), used about half the time. */
  fieldValues?: Record<string, () => unknown>;
  /** Operations not to call, as `METHOD /path/{template}` (those that would end the suite's session or account). */
  skip?: readonly string[];
}

/**
 * Requests for every operation of `document` (the served `/openapi.json`), one operation
 * picked at random per request. Returns the arbitrary and the operations it covers.
 */
export async function schemaRequests(document: unknown, context: SchemaRequestContext): Promise<{ requests: fc.Arbitrary<InjectOptions & { url: string }>; operations: string[] }> {
  const doc = (await SwaggerParser.dereference(structuredClone(document) as never)) as unknown as { paths: Record<string, Record<string, Operation>> };
  const skip = new Set(context.skip ?? []);
  const perOperation: Array<fc.Arbitrary<InjectOptions & { url: string }>> = [];
  const operations: string[] = [];
  for (const [template, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const name = `${method.toUpperCase()} ${template}`;
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method) || skip.has(name) || template === '/openapi.json') continue;
      operations.push(name);
      perOperation.push(operationRequests(method.toUpperCase(), template, op, context));
    }
  }
  return { requests: fc.oneof(...perOperation), operations };
}

function operationRequests(method: string, template: string, op: Operation, context: SchemaRequestContext): fc.Arbitrary<InjectOptions & { url: string }> {
  const params = op.parameters ?? [];
  const pathParams = params.filter((p) => p.in === 'path');
  const queryParams = params.filter((p) => p.in === 'query' && p.name !== 'api_key');
  const path = fc.record(
    Object.fromEntries(
      pathParams.map((p) => {
        const real = context.pathValues?.[p.name];
        const generated = fc.oneof({ weight: 3, arbitrary: valueFor(p.schema).map((v) => encodeURIComponent(String(v))) }, { weight: 1, arbitrary: pathSegment });
        return [p.name, real ? fc.oneof({ weight: 1, arbitrary: fc.constant(null).map(() => encodeURIComponent(real())) }, { weight: 1, arbitrary: generated }) : generated];
      }),
    ),
  );
  const query = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record(Object.fromEntries(queryParams.map((p) => [p.name, valueFor(p.schema)])), { requiredKeys: [] }).map((q) => {
        const pairs = Object.entries(q).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v))}`);
        return pairs.length ? `?${pairs.join('&')}` : '';
      }),
    },
    { weight: 1, arbitrary: hostileQuery(queryParams.map((p) => p.name)) },
  );
  const auth: fc.Arbitrary<Record<string, string>> = fc.oneof({ weight: 10, arbitrary: fc.constant(null).map(() => context.auth()) }, { weight: 1, arbitrary: fc.constantFrom<Record<string, string>>({}, { authorization: 'Bearer' }, { authorization: 'Basic eDp5' }) });
  const content = op.requestBody?.content ?? {};
  const body: fc.Arbitrary<{ payload?: string | Buffer; type?: string | undefined }> = content['application/json']
    ? fc.record({ payload: hostilePayload(bodyFor(content['application/json'].schema, context.fieldValues ?? {})), type: contentTypes })
    : content['multipart/form-data']
      ? formFor(content['multipart/form-data'].schema)
      : fc.oneof({ weight: 6, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: fc.record({ payload: hostilePayload(hostileJson), type: contentTypes }) });
  return fc.record({ path, query, auth, body, extra: oddHeaders }).map(({ path: values, query: q, auth: a, body: b, extra }) => {
    const url = template.replace(/\{([^}]+)\}/g, (_m, name: string) => (values as Record<string, string>)[name] ?? 'x') + q;
    const headers: Record<string, string> = { ...extra, ...a, ...(b.type !== undefined && b.payload !== undefined ? { 'content-type': b.type } : {}) };
    return { method: method as InjectOptions['method'] & string, url, headers, ...(b.payload !== undefined && method !== 'GET' ? { payload: b.payload } : {}) };
  });
}

/**
 * The schema-driven property of a service's suite: `numRuns` requests generated from `app`'s
 * own served document keep the contract (see `assertRequestsKeepContract`); when the run was
 * not cut short by its time limit, at least 80% of the documented operations were reached;
 * and some requests succeeded. `answers` is the suite's `recordAnswers` list.
 */
export async function assertSchemaRequestsKeepContract(
  app: FastifyInstance,
  name: string,
  context: SchemaRequestContext,
  rules: AnswerRules & PropertyBudget & { seed: number; answers: RecordedAnswer[] },
): Promise<void> {
  const checkDocument = await answerChecker(app);
  const { requests, operations } = await schemaRequests((await app.inject({ method: 'GET', url: '/openapi.json' })).json(), context);
  const from = rules.answers.length;
  const { runs, statuses } = await assertRequestsKeepContract(app, name, requests, { ...rules, checkDocument });
  const covered = new Set<string>();
  assert.deepEqual(checkDocument(rules.answers.slice(from), covered), []);
  const missed = operations.filter((o) => !covered.has(o));
  console.log(`# ${name}: ${runs} requests over ${covered.size}/${operations.length} operations, statuses ${JSON.stringify(statuses)}`);
  if (runs >= rules.numRuns) assert.ok(covered.size >= operations.length * 0.8, `most operations reached; missed: ${missed.join(', ')}`);
  assert.ok(Object.keys(statuses).some((s) => s.startsWith('2')), 'some requests succeeded');
}
