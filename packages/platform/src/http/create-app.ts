import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyRequest, type RawServerDefault } from 'fastify';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { pino, type DestinationStream } from 'pino';
import { AppError, type ErrorTable } from '../errors/app-error.js';
import { newId } from '../ids.js';
import type { KeyLocation } from './auth.js';
import { frameworkErrors, installErrorHandling } from './error-handler.js';
import { clientErrorHandler, installBodyIdleTimeout, jsonNestingExceeds, MAX_JSON_DEPTH, TIMEOUT_CHECK_INTERVAL_MS, type HttpTimeouts } from './framing.js';
import { registerMetrics, ServiceMetrics } from './metrics.js';
import { RouteIndex } from './route-index.js';
import { documentStrayBodyErrors, markRequiredHeaders } from './schemas.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Every registered method and path; used for 405 answers and to check the OpenAPI document. */
    routeIndex: RouteIndex;
    /** The app's Prometheus registry and HTTP metrics; services add their own metrics to it. */
    metrics: ServiceMetrics;
  }
}

/** A Fastify instance whose route schemas are TypeBox schemas. */
export type ServiceApp = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;

export interface ServiceAppOptions {
  title: string;
  version: string;
  description: string;
  errorTable: ErrorTable;
  logLevel: string;
  /** Default request body limit in bytes; routes may set their own. */
  bodyLimit: number;
  /** Which proxies' forwarded headers give the client address: none, all, a hop count, or addresses/CIDRs. */
  trustProxy: boolean | number | string[];
  /** Where the key may be sent; documented as security schemes. */
  keyLocations: readonly KeyLocation[];
  /** Name of the dashboard session cookie, documented as a security scheme (`dashboardSession`) when set. */
  sessionCookie?: string;
  /** Log sink; stdout when absent. */
  logStream?: DestinationStream;
  /** How long a client may take to send a request; Node's defaults (60 s headers, 300 s request, no idle limit) when absent. */
  timeouts?: HttpTimeouts;
  /** When set, `GET /metrics` requires `Authorization: Bearer <token>`. */
  metricsToken?: string | undefined;
}

type SecurityScheme = { type: 'http'; scheme: 'bearer'; description: string } | { type: 'apiKey'; in: 'header' | 'query' | 'cookie'; name: string; description: string };

/** Name of the dashboard session's security scheme in both documents. */
const SESSION_SCHEME = 'dashboardSession';

function sessionScheme(cookieName: string): SecurityScheme {
  return {
    type: 'apiKey',
    in: 'cookie',
    name: cookieName,
    description:
      'Extension (dashboard): the session cookie set by `POST /api/dashboard/session`, for the service’s own dashboard pages. ' +
      'Every POST, PUT, PATCH and DELETE made with it must carry `X-CSRF-Token: <csrf_token of the session>`, else 403 `forbidden`. ' +
      'An API key, when also sent, is used instead.',
  };
}

const SECURITY_SCHEMES: Record<KeyLocation, { name: string; scheme: SecurityScheme }> = {
  bearer: { name: 'bearerAuth', scheme: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <API key> (recommended).' } },
  'x-api-key': { name: 'apiKeyHeader', scheme: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'X-API-Key: <API key>.' } },
  query: { name: 'apiKeyQuery', scheme: { type: 'apiKey', in: 'query', name: 'api_key', description: 'Legacy: ?api_key=<API key>. Leaks into proxy logs; prefer a header.' } },
};

/** The `security` list of an authenticated route: any one of the service's key locations, or the dashboard session. */
export function securityRequirement(locations: readonly KeyLocation[], options: { session?: boolean } = {}): Array<Record<string, string[]>> {
  return [...locations.map((l) => ({ [SECURITY_SCHEMES[l].name]: [] })), ...(options.session ? [{ [SESSION_SCHEME]: [] }] : [])];
}

/** Path parameters whose values are credentials (download tokens and the like). */
const SECRET_PARAM = /token|secret|key/i;

/**
 * The request path for the log: no query string (a legacy `?api_key=` stays out), and path
 * parameters that are credentials (e.g. `/download/{token}`) replaced by `[redacted]`.
 */
export function loggablePath(request: { url: string; params?: unknown }): string {
  let path = request.url.split('?')[0] ?? '/';
  const params = (request.params ?? {}) as Record<string, unknown>;
  for (const [name, value] of Object.entries(params)) {
    if (SECRET_PARAM.test(name) && typeof value === 'string' && value) path = path.split(encodeURIComponent(value)).join('[redacted]').split(value).join('[redacted]');
  }
  return path;
}

/** Trust the nearest `n` proxies (proxy-addr calls this with the hop index). */
const hops = (n: number) => (_address: string, hop: number) => hop < n;

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * The answers made before a request reaches an operation, which no operation can list
 * (issue #29), in every document's description. All are in the `{error, message}` shape
 * with `X-Request-Id`.
 */
export const ROUTER_ANSWERS = [
  'Answers made before routing, on any path (each in the `{error, message}` shape, with `X-Request-Id`):',
  '400 `invalid_request` for a malformed URL (bad percent-encoding) or a path parameter too long for the router;',
  '404 `not_found` for a path this document does not have; 405 `method_not_allowed` (with `Allow`) for a documented path with another method;',
  'and, from the HTTP server itself, then closing the connection: 400 `invalid_request` for broken framing (a bad chunk size, conflicting lengths),',
  '408 `request_timeout` for a request not received in time, 431 `headers_too_large` for request headers over 16 KiB.',
].join(' ');

/**
 * A Fastify app with everything both services share: request ids, one log line per request
 * (path only, so a legacy `api_key` query parameter never reaches the logs), strict body
 * validation, the error model with 404/405, and an OpenAPI 3.0.3 document built from the
 * route schemas and served at `/openapi.json`.
 */
export async function createServiceApp(options: ServiceAppOptions): Promise<{ app: ServiceApp; routes: RouteIndex }> {
  const t = options.timeouts;
  // Node refuses a headers time-out longer than a (non-zero) request time-out.
  const headersTimeout = t ? (t.requestMs > 0 ? Math.min(t.headersMs, t.requestMs) : t.headersMs) : undefined;
  const app = Fastify({
    logger: {
      level: options.logLevel,
      redact: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie', 'req.headers["x-csrf-token"]', 'res.headers["set-cookie"]'],
      // Asynchronous writes to stdout: a log line per request must not cost a blocking
      // syscall on the hot path. pino flushes what is pending when the process exits.
      stream: options.logStream ?? pino.destination({ dest: 1, sync: false }),
    },
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: options.bodyLimit,
    trustProxy: typeof options.trustProxy === 'number' ? hops(options.trustProxy) : options.trustProxy,
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : newId('req');
    },
    frameworkErrors,
    clientErrorHandler,
    ...(t
      ? {
          requestTimeout: t.requestMs,
          http: { requestTimeout: t.requestMs, headersTimeout, connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS },
        }
      : {}),
    return503OnClosing: true,
  }).withTypeProvider<TypeBoxTypeProvider>();
  const metrics = new ServiceMetrics();
  app.decorate('metrics', metrics);
  if (t) installBodyIdleTimeout(app.server, t.bodyIdleMs, () => metrics.observeClientError('request_timeout'));

  // Bodies are validated as sent: no type coercion ("true" is not a boolean) and unknown
  // fields rejected rather than silently dropped. Query strings and params are text by
  // nature, so there numbers and booleans are coerced.
  const strict = new Ajv({ coerceTypes: false, useDefaults: true, removeAdditional: false, allErrors: false, strict: false });
  const lenient = new Ajv({ coerceTypes: 'array', useDefaults: true, removeAdditional: false, allErrors: false, strict: false });
  addFormats.default(strict);
  addFormats.default(lenient);
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? strict : lenient).compile(schema));

  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, utf8JsonParser(app));

  // The APIs speak JSON; Fastify's built-in text/plain parser would let a text body reach
  // validation as a string instead of being refused as 415.
  app.removeContentTypeParser('text/plain');

  const routes = new RouteIndex();
  routes.attach(app);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) documentStrayBodyErrors(method, route.schema?.body !== undefined, route.schema?.response as Record<string, unknown> | undefined);
  });
  app.decorate('routeIndex', routes);

  await app.register(swagger, {
    transformObject: (document) => ('openapiObject' in document ? markRequiredHeaders(document.openapiObject) : document.swaggerObject),
    openapi: {
      openapi: '3.0.3',
      info: { title: options.title, version: options.version, description: `${options.description}\n\n${ROUTER_ANSWERS}` },
      components: {
        securitySchemes: {
          ...Object.fromEntries(options.keyLocations.map((l) => [SECURITY_SCHEMES[l].name, SECURITY_SCHEMES[l].scheme])),
          ...(options.sessionCookie ? { [SESSION_SCHEME]: sessionScheme(options.sessionCookie) } : {}),
        },
      },
    },
  });

  // Path parameters are ids, tokens and extensions, none of which contains U+0000; PostgreSQL
  // text cannot hold one, so the lookup failed with a 500 there (issue #15, found by the
  // property tests). Such a resource does not exist: 404, documented on every route with a
  // parameter.
  app.addHook('preValidation', async (request) => {
    const params = request.params as Record<string, unknown> | undefined;
    if (params && Object.values(params).some((v) => typeof v === 'string' && v.includes('\u0000'))) {
      throw new AppError('not_found', 'No such resource: the path holds a NUL character.');
    }
  });

  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  app.addHook('onResponse', async (request, reply) => {
    request.log.info({ method: request.method, path: loggablePath(request), status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 }, 'request completed');
  });

  installErrorHandling(app, options.errorTable, routes, metrics);

  app.get(
    '/openapi.json',
    { schema: { tags: ['meta'], summary: 'This OpenAPI 3.0.3 document', response: { 200: { description: 'The document (OpenAPI 3.0.3, JSON).', content: { 'application/json': { schema: { type: 'object', required: ['openapi', 'info', 'paths'], additionalProperties: true } } } } } } },
    async (_request, reply) => reply.type('application/json; charset=utf-8').send(JSON.stringify(app.swagger()) as never),
  );
  registerMetrics(app, metrics, options.metricsToken);

  return { app, routes };
}

/**
 * The services' JSON body parser (for `parseAs: 'buffer'`): bodies must be UTF-8 (RFC
 * 8259): invalid bytes are refused rather than silently turned into U+FFFD, which would
 * verify or store a different string than the one sent; `__proto__` and `constructor`
 * keys are refused, and so is nesting deeper than {@link MAX_JSON_DEPTH}. A scope that adds its own JSON parser delegates to this one.
 */
export function utf8JsonParser(app: FastifyInstance): (request: FastifyRequest, body: string | Buffer, done: (err: Error | null, body?: unknown) => void) => void {
  const json = app.getDefaultJsonParser('error', 'error');
  return (request, body, done) => {
    const bytes = body as Buffer;
    if (!isUtf8(bytes)) {
      done(new AppError('invalid_json', 'The request body is not valid UTF-8.'), undefined);
      return;
    }
    // Refused by shape before parsing: millions of nested arrays took seconds to parse on
    // the event loop (issue #15). One pass over the bytes, stopping at the first level too deep.
    if (jsonNestingExceeds(bytes)) {
      done(new AppError('invalid_json', `The request body nests arrays or objects deeper than ${MAX_JSON_DEPTH} levels.`), undefined);
      return;
    }
    json(request, bytes.toString('utf8'), done);
  };
}
