import { setTimeout as sleep } from 'node:timers/promises';

/** Settings shared by both clients. */
export interface ClientOptions {
  /** The service's base URL, e.g. `https://verify.example.com` (no trailing `/api`). */
  baseUrl: string;
  /** The API key, sent as `Authorization: Bearer <key>`. */
  apiKey?: string;
  /** Time-out of one attempt, in ms (default 30 s). */
  timeoutMs?: number;
  /** Retries after a 429 `rate_limited`, a 503 or a network failure (default 3). */
  retries?: number;
  /** First back-off delay when the answer names none (default 500 ms, doubled each retry, with jitter). */
  backoffMs?: number;
  /** The longest wait honoured for a `Retry-After` or a back-off (default 60 s); longer ones fail at once. */
  maxRetryDelayMs?: number;
  /** A `fetch` to use instead of the global one. */
  fetch?: typeof fetch;
  /** Sent as User-Agent. */
  userAgent?: string;
}

/** An answer of the service in the error shape `{error, message, ...}`, or a failure to get one. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    /** HTTP status; 0 when no answer came (network failure or time-out). */
    readonly status: number,
    /** The contract's error code (`rate_limited`, `job_not_completed`, …), or `network_error` / `timeout`. */
    readonly code: string,
    message: string,
    /** The whole error body, with the documented extra fields (`remaining`, `progress_pct`, `field`, …). */
    readonly body: Record<string, unknown> = {},
    /** The `X-Request-Id` of the answer: quote it when reporting a problem. */
    readonly requestId?: string,
    /** Seconds from `Retry-After`, when the answer had one. */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

/** A download whose bytes do not hash to the SHA-256 the service announced. */
export class ChecksumError extends Error {
  override readonly name = 'ChecksumError';
  constructor(
    readonly expected: string,
    readonly actual: string,
  ) {
    super(`SHA-256 mismatch: expected ${expected}, got ${actual}; the partial file was removed.`);
  }
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  json?: unknown;
  form?: FormData;
  headers?: Record<string, string>;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Send no API key (the public route). */
  anonymous?: boolean;
  /** Statuses answered without throwing (besides 2xx). */
  accept?: readonly number[];
}

export interface RawAnswer {
  status: number;
  headers: Headers;
  response: Response;
}

/** Seconds of a `Retry-After` header (delta-seconds or an HTTP date), if any. */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/**
 * The HTTP core of both clients: base URL, key, one time-out per attempt, and retries with
 * back-off on 429 `rate_limited` and 503 (honouring `Retry-After`) and on network failures.
 * A 429 `quota_exceeded` is not retried: the monthly quota does not come back in seconds.
 */
export class HttpCore {
  readonly baseUrl: string;
  private readonly fetchImpl: typeof fetch;

  constructor(readonly options: ClientOptions) {
    if (!options.baseUrl) throw new TypeError('baseUrl is required');
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.fetchImpl = options.fetch ?? fetch;
  }

  url(path: string, query?: RequestOptions['query']): string {
    const url = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    return url.toString();
  }

  /** Sends the request (retrying as above) and returns the raw answer; a non-2xx answer not in `accept` throws ApiError. */
  async raw(method: string, pathOrUrl: string, o: RequestOptions = {}): Promise<RawAnswer> {
    const retries = this.options.retries ?? 3;
    const maxDelay = this.options.maxRetryDelayMs ?? 60_000;
    let backoff = this.options.backoffMs ?? 500;
    const url = pathOrUrl.startsWith('http') ? pathOrUrl : this.url(pathOrUrl, o.query);
    for (let attempt = 0; ; attempt++) {
      const headers: Record<string, string> = { accept: 'application/json, text/csv, */*', ...o.headers };
      if (this.options.userAgent) headers['user-agent'] = this.options.userAgent;
      if (this.options.apiKey && !o.anonymous) headers.authorization = `Bearer ${this.options.apiKey}`;
      let body: string | FormData | undefined;
      if (o.json !== undefined) {
        headers['content-type'] = 'application/json';
        body = JSON.stringify(o.json);
      } else if (o.form) body = o.form;
      const timeoutMs = o.timeoutMs ?? this.options.timeoutMs ?? 30_000;
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = o.signal ? AbortSignal.any([o.signal, timeout]) : timeout;
      let response: Response;
      try {
        response = await this.fetchImpl(url, { method, headers, body, signal });
      } catch (err) {
        if (o.signal?.aborted) throw err;
        const timedOut = timeout.aborted;
        const error = new ApiError(0, timedOut ? 'timeout' : 'network_error', timedOut ? `${method} ${url} got no answer within ${timeoutMs} ms.` : `${method} ${url} failed: ${(err as Error).message}`);
        // A time-out is not retried: the request may have been carried out (and charged).
        if (timedOut || attempt >= retries) throw error;
        await sleep(jitter(backoff), undefined, { signal: o.signal });
        backoff *= 2;
        continue;
      }
      if (response.ok || o.accept?.includes(response.status)) return { status: response.status, headers: response.headers, response };
      const error = await toApiError(response);
      const retryable = (response.status === 429 && error.code !== 'quota_exceeded') || response.status === 503;
      const delay = error.retryAfter !== undefined ? error.retryAfter * 1000 : jitter(backoff);
      if (!retryable || attempt >= retries || delay > maxDelay) throw error;
      await sleep(delay, undefined, { signal: o.signal });
      backoff *= 2;
    }
  }

  /** A JSON request answered with JSON. */
  async json<T>(method: string, path: string, o: RequestOptions = {}): Promise<T> {
    const { response } = await this.raw(method, path, o);
    return (await response.json()) as T;
  }
}

const jitter = (ms: number) => Math.round(ms * (0.75 + Math.random() * 0.5));

async function toApiError(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => '');
  let body: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed && typeof parsed === 'object') body = parsed as Record<string, unknown>;
  } catch {
    // not JSON: a proxy's page; keep the status
  }
  const code = typeof body.error === 'string' ? body.error : `http_${response.status}`;
  const message = typeof body.message === 'string' ? body.message : `HTTP ${response.status}${text ? `: ${text.slice(0, 200)}` : ''}`;
  return new ApiError(response.status, code, message, body, response.headers.get('x-request-id') ?? undefined, retryAfterSeconds(response.headers.get('retry-after')));
}
