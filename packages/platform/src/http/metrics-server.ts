import { timingSafeEqual } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Registry } from 'prom-client';

/** A registry with the process's default metrics, for a process without an app (a job worker). */
export function createProcessRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** A running metrics listener. */
export interface MetricsServer {
  /** The port it listens on (useful when 0 was asked). */
  port: number;
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` of `registry` (Prometheus text) and nothing else, for the worker
 * processes that have no HTTP app (`…_WORKER_METRICS_PORT`). With `token`, the scrape must
 * send `Authorization: Bearer <token>` (401 otherwise), as on the API. Other paths are 404;
 * answers are the contract's `{error, message}`.
 */
export async function serveMetrics(registry: Registry, options: { host: string; port: number; token: string | undefined }): Promise<MetricsServer> {
  const expected = options.token ? Buffer.from(`Bearer ${options.token}`) : null;
  const fail = (res: ServerResponse, status: number, error: string, message: string, headers: Record<string, string> = {}): void => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers }).end(JSON.stringify({ error, message }));
  };
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      fail(res, 404, 'not_found', 'Only GET /metrics is served here.');
      return;
    }
    if (expected) {
      const given = Buffer.from(req.headers.authorization ?? '');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        fail(res, 401, 'unauthorized', 'Send the metrics token as Authorization: Bearer <token>.', { 'www-authenticate': 'Bearer' });
        return;
      }
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(req.method === 'HEAD' ? undefined : text),
      () => fail(res, 503, 'service_unavailable', 'The metrics could not be read (is the database reachable?).'),
    );
  });
  // Scrapes are short: a client that stalls is cut, as on the API.
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
