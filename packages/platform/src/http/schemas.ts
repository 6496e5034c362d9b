import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { Type, type Static, type TSchema } from 'typebox';
import { AppError } from '../errors/app-error.js';
import { describeValidation } from './error-handler.js';

/**
 * Schema helpers that stay within OpenAPI 3.0.3 (no `type: "null"`, no `const`), since the
 * same schemas validate requests, serialise responses and are published as the document.
 */
export const Nullable = <T extends TSchema>(schema: T) => {
  // An enum must list null itself (OpenAPI 3.0.3 clarification): `nullable` does not widen `enum`.
  const values = (schema as { enum?: unknown }).enum;
  return Type.Unsafe<Static<T> | null>({ ...schema, nullable: true, ...(Array.isArray(values) ? { enum: [...(values as unknown[]), null] } : {}) });
};

export const StringEnum = <const V extends readonly string[]>(values: V, options: Record<string, unknown> = {}) =>
  Type.Unsafe<V[number]>({ type: 'string', enum: [...values], ...options });

/**
 * A pattern for text that reaches SQL as a value: no U+0000, which PostgreSQL text cannot hold
 * (a lookup or insert with one failed with a 500 there; issue #15).
 */
export const NO_NUL = '^[^\\u0000]*$';

export const DateTime = (options: Record<string, unknown> = {}) => Type.String({ format: 'date-time', ...options });

/**
 * The contract's error body: `{error, message}` plus documented extra fields. `extras` are
 * the service's own optional fields (e.g. `remaining` and `required` on `insufficient_quota`),
 * each described with the codes that carry it.
 */
export function errorSchema(codes: readonly string[], extras: Record<string, TSchema> = {}) {
  const optional = Object.fromEntries(Object.entries(extras).map(([k, v]) => [k, Type.Optional(v)]));
  return Type.Object(
    {
      error: StringEnum(codes, { description: 'Stable machine-readable code from the closed list.' }),
      message: Type.String({ description: 'Human-readable explanation; wording may change.' }),
      field: Type.Optional(Type.String({ description: 'The offending request field, on validation errors (`invalid_request`, `invalid_email`, `not_found`/`gone` of a referenced id).' })),
      ...optional,
    },
    { additionalProperties: true, description: 'Error' },
  );
}

/**
 * Response headers, documented through `@fastify/swagger` (a response schema's `headers`
 * becomes the OpenAPI response's `headers`; validation and serialisation ignore it).
 */
export type HeaderSchemas = Record<string, TSchema>;

/** Sent on every answer of an authenticated route (the per-key rate limit, IETF draft names). */
export const RATE_LIMIT_HEADERS: HeaderSchemas = {
  'RateLimit-Limit': Type.Integer({ description: 'Requests allowed per minute.' }),
  'RateLimit-Remaining': Type.Integer({ description: 'Requests left in the current window.' }),
  'RateLimit-Reset': Type.Integer({ description: 'Seconds until the window resets.' }),
};

export const RETRY_AFTER_HEADER: HeaderSchemas = {
  'Retry-After': Type.Integer({ description: 'Seconds to wait before retrying (sent with `rate_limited`; with `quota_exceeded`, the seconds until the quota month resets; on 503 when the service is closing or a dependency is down).' }),
};

const ALLOW_HEADER: HeaderSchemas = { Allow: Type.String({ description: 'The methods this path answers to, e.g. `GET, DELETE`.' }) };
const WWW_AUTHENTICATE_HEADER: HeaderSchemas = { 'WWW-Authenticate': Type.String({ description: '`Bearer`, with `error="invalid_token"` for an unknown or revoked key.' }) };
const REQUEST_ID_HEADER: HeaderSchemas = { 'X-Request-Id': Type.String({ description: 'The request id (the client\'s `X-Request-Id` when well-formed); quote it when reporting a problem.' }) };

/**
 * Marks response headers as always sent with the response they are documented on: the
 * served document lists them with `required: true` ({@link markRequiredHeaders}), and the
 * suites' answer check (issue #29) fails an answer without them.
 */
export function required(headers: HeaderSchemas): HeaderSchemas {
  return Object.fromEntries(Object.entries(headers).map(([name, schema]) => [name, { ...schema, [REQUIRED_MARK]: true } as TSchema]));
}

const REQUIRED_MARK = 'x-required-header';

/**
 * The OpenAPI plugin copies a header's schema as it is; this moves {@link required}'s mark
 * out of each header schema into the header object (`required: true`, OpenAPI 3.0.3).
 * Mutates and returns `document` (the plugin's `transformObject`).
 */
export function markRequiredHeaders<T>(document: T): T {
  const paths = (document as { paths?: Record<string, Record<string, { responses?: Record<string, { headers?: Record<string, { required?: boolean; schema?: Record<string, unknown> }> }> }>> }).paths ?? {};
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) {
      for (const response of Object.values(operation.responses ?? {})) {
        for (const header of Object.values(response.headers ?? {})) {
          if (header.schema?.[REQUIRED_MARK] === undefined) continue;
          delete header.schema[REQUIRED_MARK];
          header.required = true;
        }
      }
    }
  }
  return document;
}

/** `schema` (a response schema, or `{description, content}`) with `headers` documented. */
export function withHeaders<T extends object>(schema: T, headers: HeaderSchemas): T {
  const existing = (schema as { headers?: HeaderSchemas }).headers ?? {};
  return { ...schema, headers: { ...existing, ...headers } };
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Invalid request: malformed JSON, a missing or wrongly typed field, or an unknown field.',
  401: 'Missing, malformed, unknown or revoked API key.',
  402: 'Not enough quota for the whole request.',
  403: 'Refused (see the code): the plan lacks the feature, open sign-up is off, or a request made with the dashboard session cookie lacks its `X-CSRF-Token` (`forbidden`).',
  404: 'Not found, or not owned by the caller.',
  405: 'The path exists but not with this method; see the Allow header.',
  409: 'Conflict with the current state of the resource.',
  410: 'Gone: the resource was removed.',
  413: 'Request body over the size limit.',
  415: 'Unsupported Content-Type.',
  422: 'Understood but cannot be processed.',
  429: 'Rate limit or monthly quota exceeded; see Retry-After.',
  500: 'Unexpected failure; the body carries no internals. Quote the X-Request-Id header when reporting it.',
  503: 'A dependency is not available.',
  507: 'Insufficient storage (`insufficient_storage`): the disk under the service\'s database or file storage is full; nothing was stored. Retry later.',
};

/**
 * Documented error responses for `statuses`, all in the one error shape, with the headers
 * each carries: `Retry-After` on 429 (required) and 503 (while closing or a dependency is
 * down), `WWW-Authenticate` on 401 and `X-Request-Id` on all (required). 405 (a known path with another method, with `Allow`) is added to every route: any
 * path answers it to the methods it does not have; so is 503 (with `Retry-After`): any
 * route answers it while the database or Redis is down or restarting; and 507: any route
 * answers it while the disk under the database or the storage is full.
 */
export function errorResponses(errorRef: TSchema, statuses: readonly number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const status of new Set([...statuses, 405, 503, 507])) {
    const headers: HeaderSchemas = required(REQUEST_ID_HEADER);
    // A 503 for a feature the operator has not set up (SMTP probing) has no time to wait for.
    if (status === 429) Object.assign(headers, required(RETRY_AFTER_HEADER));
    if (status === 503) Object.assign(headers, RETRY_AFTER_HEADER);
    if (status === 401) Object.assign(headers, required(WWW_AUTHENTICATE_HEADER));
    if (status === 405) Object.assign(headers, required(ALLOW_HEADER));
    out[status] = { ...errorRef, description: STATUS_TEXT[status] ?? 'Error', headers };
  }
  return out;
}

/**
 * Fastify reads a body sent to any route whose method may carry one (POST, DELETE, …), the
 * routes that take none included: broken JSON there is 400 `invalid_json`, a body over the
 * limit 413, an unknown Content-Type 415 (issue #15, found by the property tests: a DELETE
 * sent with a stray body answered an undocumented 415). For such a route without a body
 * schema, documents whichever of the three its `responses` lack, in the error shape of its
 * 405 (which {@link errorResponses} always adds). Mutates `responses` in place, so that the
 * OpenAPI plugin, which keeps the route's schema object, documents them too.
 */
export function documentStrayBodyErrors(method: string, hasBody: boolean, responses: Record<string, unknown> | undefined): void {
  if (!responses || hasBody || method === 'GET' || method === 'HEAD') return;
  const shape = responses['405'] as ({ headers?: HeaderSchemas } & Record<string, unknown>) | undefined;
  if (!shape) return;
  const { headers, ...rest } = shape;
  const { Allow: _allow, ...kept } = headers ?? {};
  for (const status of [400, 413, 415]) {
    if (responses[String(status)] === undefined) responses[String(status)] = { ...rest, description: `${STATUS_TEXT[status]} (A body sent to this route, which takes none, is still read.)`, headers: kept };
  }
}

/** Answers only a route's own code makes, after the key check set the `RateLimit-*` headers. */
const LIMITED = new Set([200, 201, 202, 204, 206, 404, 409, 410, 422, 429]);

/**
 * The responses of an authenticated route: every status (success and error) documents the
 * `RateLimit-*` headers, which the key check sets before the route runs, required on the
 * answers the route's own code makes. (A 401 is answered before the limiter, and a 400, 413
 * or 415 may come from reading the body, a 503 or 507 from the store the key check needs:
 * the headers may be absent there.)
 */
export function securedResponses(responses: Record<number, TSchema>): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const [status, schema] of Object.entries(responses)) {
    const n = Number(status);
    out[n] = n === 401 ? withHeaders(schema, required(REQUEST_ID_HEADER)) : withHeaders(schema, { ...(LIMITED.has(n) ? required(RATE_LIMIT_HEADERS) : RATE_LIMIT_HEADERS), ...required(REQUEST_ID_HEADER) });
  }
  return out;
}

/**
 * A checker of a multipart form's text fields against the schema the document shows for
 * that form, so the two cannot drift: the parts are read as a stream by the handler (the
 * route's own validation sees no body), then the fields collected are checked here. Text
 * fields are coerced as query strings are ("80" → 80, "true" → true). `file` stands for the
 * file part (pass any string when one was sent). Throws 400 `invalid_request` naming the field.
 */
export function formChecker(schema: TSchema): (form: Record<string, unknown>) => Record<string, unknown> {
  const ajv = new Ajv({ coerceTypes: true, useDefaults: false, allErrors: false, strict: false });
  addFormats.default(ajv);
  const { nullable: _nullable, ...form } = schema as TSchema & { nullable?: boolean };
  const check = ajv.compile({ ...form, additionalProperties: false });
  return (fields) => {
    const copy = { ...fields };
    if (!check(copy)) {
      const { message, field } = describeValidation('body', check.errors![0] as never);
      throw new AppError('invalid_request', message.replace('the request body', 'the form'), field ? { field } : undefined);
    }
    return copy;
  };
}
