import { timingSafeEqual } from 'node:crypto';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors/app-error.js';
import { errorResponses, errorSchema } from './schemas.js';

/** Error codes that are quota refusals (a charge that does not fit the plan's month). */
const QUOTA_CODES: ReadonlySet<string> = new Set(['quota_exceeded', 'insufficient_quota']);

/** Latency buckets in seconds: 1 ms to 60 s (a batch or a synchronous conversion can take that long). */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * A service's Prometheus metrics: one registry per app (tests run several apps in one
 * process), the process's default metrics, HTTP requests by route pattern and status, and
 * refusals. Services add their own metrics to `registry`.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly duration: Histogram<'method' | 'route' | 'status'>;
  private readonly rateLimited: Counter<'route'>;
  private readonly quota: Counter<'route'>;
  private readonly clientErrors: Counter<'error'>;

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests answered, by method, route pattern and status.', labelNames: ['method', 'route', 'status'], registers: [this.registry] });
    this.duration = new Histogram({ name: 'http_request_duration_seconds', help: 'Time to answer HTTP requests, by method, route pattern and status.', labelNames: ['method', 'route', 'status'], buckets: LATENCY_BUCKETS, registers: [this.registry] });
    this.rateLimited = new Counter({ name: 'rate_limit_refusals_total', help: 'Requests refused with 429 rate_limited, by route pattern.', labelNames: ['route'], registers: [this.registry] });
    this.clientErrors = new Counter({ name: 'http_client_errors_total', help: 'Connections answered and closed before any route ran (broken framing, oversized headers, slow headers or a stalled body), by error code.', labelNames: ['error'], registers: [this.registry] });
    this.quota = new Counter({ name: 'quota_refusals_total', help: 'Requests refused because the monthly quota is used up (quota_exceeded, insufficient_quota), by route pattern.', labelNames: ['route'], registers: [this.registry] });
  }

  /** Records one answered request; `route` is the pattern (`/api/v1/jobs/:job_id`), never the raw URL. */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    const labels = { method, route, status: String(status) };
    this.requests.inc(labels);
    this.duration.observe(labels, seconds);
  }

  /** Counts a connection answered by the framing layer (`invalid_request`, `headers_too_large`, `request_timeout`). */
  observeClientError(code: string): void {
    this.clientErrors.inc({ error: code });
  }

  /** Counts a refusal when `code` is a rate-limit or quota code. */
  observeError(code: string, route: string): void {
    if (code === 'rate_limited') this.rateLimited.inc({ route });
    else if (QUOTA_CODES.has(code)) this.quota.inc({ route });
  }
}

/** The route pattern of a request for labels: unmatched requests share one label so that random URLs cannot grow the series. */
export function routeLabel(request: FastifyRequest): string {
  return request.routeOptions.url ?? 'unmatched';
}

/**
 * Counts every answer (onResponse) and every refusal, and serves `GET /metrics` in the
 * Prometheus text format. With `token` set, the scrape must send `Authorization: Bearer
 * <token>` (401 `unauthorized` otherwise).
 */
export function registerMetrics(app: FastifyInstance, metrics: ServiceMetrics, token: string | undefined): void {
  app.addHook('onResponse', async (request: FastifyRequest, reply: FastifyReply) => {
    metrics.observeRequest(request.method, routeLabel(request), reply.statusCode, reply.elapsedTime / 1000);
  });
  const expected = token ? Buffer.from(`Bearer ${token}`) : null;
  app.get(
    '/metrics',
    {
      schema: {
        tags: ['meta'],
        summary: 'Prometheus metrics (text format)',
        description: 'Requests by route and status with latency histograms, refusals, and the service’s own counters (see README). Protected by a bearer token when the service’s `…_METRICS_TOKEN` is set.',
        response: { 200: { description: 'Prometheus text exposition format 0.0.4.', content: { 'text/plain': { schema: { type: 'string' } } } }, ...errorResponses(errorSchema(['unauthorized']), [401]) },
      },
    },
    async (request, reply) => {
      if (expected) {
        const given = Buffer.from(request.headers.authorization ?? '');
        if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new AppError('unauthorized', 'Send the metrics token as Authorization: Bearer <token>.', undefined, { 'www-authenticate': 'Bearer' });
      }
      const text = await metrics.registry.metrics();
      return reply.type(metrics.registry.contentType).send(text);
    },
  );
}
