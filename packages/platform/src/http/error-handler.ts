import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDependencyUnavailable, isStorageFull } from '../db/errors.js';
import { INSUFFICIENT_STORAGE_MESSAGE } from '../service/disk-space.js';
import { AppError, type ErrorTable } from '../errors/app-error.js';
import { routeLabel, type ServiceMetrics } from './metrics.js';
import type { RouteIndex } from './route-index.js';

interface ValidationIssue {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

/** Codes of failures to read a request body. */
const BODY_ERRORS = new Set<string>(['invalid_json', 'invalid_request', 'payload_too_large', 'unsupported_media_type']);

/** Builds the error body sent for an AppError: `{error, message, ...details}`. */
function body(err: AppError): Record<string, unknown> {
  return { ...(err.details ?? {}), error: err.code, message: err.message };
}

/** A client-chosen name cut short (field names are echoed; an unknown one may be any length, issue #13). */
function brief(name: string): string {
  const chars = [...name];
  return chars.length > 64 ? `${chars.slice(0, 63).join('')}…` : name;
}

/** Turns an Ajv failure into one clear sentence naming the field. */
export function describeValidation(context: string, issue: ValidationIssue): { message: string; field?: string } {
  const where = context === 'body' ? 'the request body' : context === 'querystring' ? 'the query string' : context;
  const path = brief(issue.instancePath.replace(/^\//, '').replace(/\//g, '.'));
  switch (issue.keyword) {
    case 'required': {
      const field = brief([path, String(issue.params.missingProperty)].filter(Boolean).join('.'));
      return { field, message: `'${field}' is required in ${where}.` };
    }
    case 'additionalProperties': {
      const field = brief([path, String(issue.params.additionalProperty)].filter(Boolean).join('.'));
      return { field, message: `'${field}' is not a known field of ${where}.` };
    }
    case 'type':
      if (!path) return { message: `${where[0]?.toUpperCase()}${where.slice(1)} must be a JSON ${String(issue.params.type)}.` };
      return { field: path, message: `'${path}' must be of type ${String(issue.params.type)}.` };
    default:
      if (!path) return { message: `${where[0]?.toUpperCase()}${where.slice(1)} ${issue.message ?? 'is invalid'}.` };
      return { field: path, message: `'${path}' ${issue.message ?? 'is invalid'}.` };
  }
}

/** Maps Fastify's own request errors onto the closed code table. */
function fromFastify(err: FastifyError): AppError | undefined {
  if (err.validation && err.validation.length > 0) {
    const { message, field } = describeValidation(err.validationContext ?? 'body', err.validation[0] as ValidationIssue);
    return new AppError('invalid_request', message, field ? { field } : undefined);
  }
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('invalid_json', 'The request body is not valid JSON.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('invalid_json', 'The request body is empty but Content-Type says JSON.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload_too_large', 'The request body is over the size limit for this endpoint.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('unsupported_media_type', 'Unsupported Content-Type; send application/json.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('invalid_request', 'Content-Length does not match the body.');
    case 'FST_ERR_BAD_URL':
      return new AppError('invalid_request', 'The URL is malformed.');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new AppError('invalid_request', 'A path parameter is too long.');
    default:
      if (err instanceof SyntaxError && err.statusCode === 400) return new AppError('invalid_json', 'The request body is not valid JSON.');
      return undefined;
  }
}

/** Seconds a client is asked to wait when a dependency is down (a PostgreSQL restart takes a few). */
export const UNAVAILABLE_RETRY_AFTER_S = 5;

/**
 * The single place where failures become HTTP answers. Known codes take their status from
 * `table`; a dependency that is down or restarting (the database, Redis) is 503
 * `service_unavailable` with `Retry-After` (issue #15: it was a 500); a full disk is 507
 * `insufficient_storage` (issue 28); anything else is
 * logged in full with the request id and answered with a bare `internal_error`, so no
 * internals reach the client.
 */
export function installErrorHandling(app: FastifyInstance, table: ErrorTable, routes: RouteIndex, metrics?: ServiceMetrics): void {
  const send = (reply: FastifyReply, err: AppError) => {
    const status = table[err.code];
    if (status === undefined) throw new Error(`error code ${err.code} is not in the service's table`);
    if (err.headers) reply.headers(err.headers);
    return reply.code(status).type('application/json; charset=utf-8').send(body(err));
  };

  const notFound = (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = routes.allowedMethods(path);
    if (allowed.length > 0) {
      reply.header('allow', allowed.join(', '));
      return send(reply, new AppError('method_not_allowed', `${request.method} is not allowed on ${path}; allowed: ${allowed.join(', ')}.`));
    }
    return send(reply, new AppError('not_found', `No route ${request.method} ${path}.`));
  };

  const handle = (raw: unknown, request: FastifyRequest, reply: FastifyReply) => {
    // Fastify reads the body of a request no route matched before its not-found handler
    // runs: a broken body there must not turn the 404/405 into a 400, 413 or 415 (issue #15).
    if (request.is404 && (!(raw instanceof AppError) || BODY_ERRORS.has(raw.code))) return notFound(request, reply);
    const err = raw instanceof AppError ? raw : fromFastify(raw as FastifyError);
    if (err && table[err.code] !== undefined) {
      metrics?.observeError(err.code, routeLabel(request));
      if (table[err.code]! >= 500) request.log.error({ err: raw }, err.message);
      return send(reply, err);
    }
    if (isStorageFull(raw)) {
      // A full disk under the database or the storage: the request stored nothing (issue 28).
      const full = new AppError('insufficient_storage', INSUFFICIENT_STORAGE_MESSAGE);
      metrics?.observeError(full.code, routeLabel(request));
      request.log.error({ err: raw }, 'storage full');
      return send(reply, full);
    }
    if (isDependencyUnavailable(raw)) {
      const unavailable = new AppError('service_unavailable', 'A service this API depends on is not reachable right now; retry shortly.', undefined, { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_S) });
      metrics?.observeError(unavailable.code, routeLabel(request));
      request.log.error({ err: raw }, 'dependency unavailable');
      return send(reply, unavailable);
    }
    request.log.error({ err: raw }, 'unhandled error');
    return send(reply, new AppError('internal_error', `Internal server error. Quote request id ${request.id} when reporting it.`));
  };

  app.setErrorHandler(handle);

  app.setNotFoundHandler(notFound);
}

/** Fastify's `frameworkErrors` option: malformed URLs answered in the same error shape. */
export function frameworkErrors(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const mapped = fromFastify(err) ?? new AppError('invalid_request', 'The request could not be routed.');
  // Answered before routing, so without the hooks that add it elsewhere (issue 29).
  void reply.code(400).header('x-request-id', request.id).type('application/json; charset=utf-8').send(body(mapped));
}
