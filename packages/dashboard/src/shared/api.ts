/**
 * The dashboards' only way to the API: same-origin fetches carrying the session cookie,
 * with the CSRF token (kept in memory, never in storage) on every state-changing call.
 * No API key is ever sent from the browser.
 */

/** An answer in the contract's error shape (`{error, message}`), or a network failure. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

let csrfToken: string | null = null;

/** Set from the session answer (sign-in or GET /api/dashboard/session); cleared on sign-out. */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Called when an answer says the session is gone (401), so the app can show the sign-in form. */
let onUnauthorized: (() => void) | null = null;
export function setUnauthorizedHandler(handler: (() => void) | null): void {
  onUnauthorized = handler;
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'DELETE';
  json?: unknown;
  body?: BodyInit;
  signal?: AbortSignal;
  /** Do not treat a 401 as a lost session (the sign-in call itself). */
  quiet401?: boolean;
}

function headersFor(method: string, hasJson: boolean): Record<string, string> {
  const h: Record<string, string> = { accept: 'application/json' };
  if (hasJson) h['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) h['x-csrf-token'] = csrfToken;
  return h;
}

async function failure(res: Response, quiet401: boolean): Promise<ApiError> {
  let body: Record<string, unknown> = {};
  try {
    body = (await res.json()) as Record<string, unknown>;
  } catch {
    // not JSON (a proxy's page): the status says enough
  }
  if (res.status === 401 && !quiet401) onUnauthorized?.();
  const code = typeof body.error === 'string' ? body.error : `http_${res.status}`;
  const message = typeof body.message === 'string' ? body.message : `The server answered ${res.status}.`;
  return new ApiError(res.status, code, message, body);
}

/** A JSON request; resolves with the parsed answer (undefined for 204) or rejects with an {@link ApiError}. */
export async function api<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const method = options.method ?? 'GET';
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: headersFor(method, options.json !== undefined),
      body: options.json !== undefined ? JSON.stringify(options.json) : options.body,
      signal: options.signal,
    });
  } catch (err) {
    if (err instanceof DOMException && err.name === 'AbortError') throw err;
    throw new ApiError(0, 'network_error', 'The service could not be reached. Check your connection and try again.');
  }
  if (!res.ok) throw await failure(res, options.quiet401 ?? false);
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

/**
 * A multipart upload with progress (fetch has no upload progress events, XMLHttpRequest
 * does). Resolves with the parsed JSON answer.
 */
export function upload<T>(path: string, form: FormData, onProgress: (fraction: number) => void, signal?: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', path);
    xhr.withCredentials = true;
    xhr.setRequestHeader('accept', 'application/json');
    if (csrfToken) xhr.setRequestHeader('x-csrf-token', csrfToken);
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    };
    xhr.onload = () => {
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(xhr.responseText) as Record<string, unknown>;
      } catch {
        // not JSON
      }
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(1);
        resolve(body as T);
        return;
      }
      if (xhr.status === 401) onUnauthorized?.();
      reject(new ApiError(xhr.status, typeof body.error === 'string' ? body.error : `http_${xhr.status}`, typeof body.message === 'string' ? body.message : `The server answered ${xhr.status}.`, body));
    };
    xhr.onerror = () => reject(new ApiError(0, 'network_error', 'The upload was interrupted. Check your connection and try again.'));
    xhr.onabort = () => reject(new DOMException('aborted', 'AbortError'));
    signal?.addEventListener('abort', () => xhr.abort());
    xhr.send(form);
  });
}

/** The message to show for any failure. */
export function describeError(err: unknown): string {
  if (err instanceof ApiError) return err.code.startsWith('http_') || err.code === 'network_error' ? err.message : `${err.message} (${err.code})`;
  return err instanceof Error ? err.message : String(err);
}
