import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { pinnedLookup } from '../egress/fetch.js';
import type { PinnedTarget } from '../egress/guard.js';

/** What one delivery attempt gave. A failure is a value: the worker decides about retries. */
export interface AttemptResult {
  ok: boolean;
  /** HTTP status, when an answer came. */
  status: number | null;
  durationMs: number;
  /** Short machine reason when not ok: `http_<status>`, `redirect_not_followed`, `timeout`, `connection_refused`, … */
  error: string | null;
  responseHeaders: IncomingHttpHeaders | null;
}

export interface SendOptions {
  url: URL;
  target: PinnedTarget;
  body: string;
  headers: Record<string, string>;
  /** Whole attempt, connect to last byte of the answer (decision 21: 10 s). */
  timeoutMs: number;
  /** Extra CA certificates to trust (tests, private CAs). */
  ca?: string | Buffer;
}

const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * POSTs one delivery to the pinned address: the host name is used only for the Host header
 * and TLS (SNI and certificate check), never looked up again. Redirects are not followed;
 * any 2xx is success; the answer body is read (up to 64 KiB) and dropped.
 */
export function sendWebhook(o: SendOptions): Promise<AttemptResult> {
  const started = performance.now();
  const pinned = pinnedLookup(o.target);
  const done = (partial: Omit<AttemptResult, 'durationMs'>): AttemptResult => ({ ...partial, durationMs: Math.round(performance.now() - started) });
  return new Promise((resolve) => {
    let settled = false;
    const finish = (r: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const request = (o.url.protocol === 'https:' ? httpsRequest : httpRequest)(
      o.url,
      {
        method: 'POST',
        lookup: pinned,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(o.body), ...o.headers },
        ...(o.ca ? { ca: o.ca } : {}),
        agent: false,
      },
      (response) => {
        let received = 0;
        response.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > MAX_RESPONSE_BYTES) response.destroy();
        });
        const status = response.statusCode ?? 0;
        const result = () =>
          finish(
            done({
              ok: status >= 200 && status < 300,
              status,
              error: status >= 200 && status < 300 ? null : status >= 300 && status < 400 ? 'redirect_not_followed' : `http_${status}`,
              responseHeaders: response.headers,
            }),
          );
        response.on('end', result);
        response.on('close', result);
      },
    );
    const timer = setTimeout(() => {
      request.destroy(new Error('timeout'));
      finish(done({ ok: false, status: null, error: 'timeout', responseHeaders: null }));
    }, o.timeoutMs);
    request.on('error', (err: NodeJS.ErrnoException) => {
      const error = err.code === 'ECONNREFUSED' ? 'connection_refused' : err.code === 'ECONNRESET' ? 'connection_reset' : err.message === 'timeout' ? 'timeout' : (err.code ?? 'network_error').toLowerCase();
      finish(done({ ok: false, status: null, error, responseHeaders: null }));
    });
    request.end(o.body);
  });
}
