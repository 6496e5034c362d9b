import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { checkUrl, type EgressPolicy, type EgressProblem, type PinnedTarget } from './guard.js';

/** A lookup that answers the checked address whatever the name: the connection goes where the guard looked. */
export function pinnedLookup(target: PinnedTarget): LookupFunction {
  return (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
}

export interface GuardedFetchOptions {
  readonly policy: EgressPolicy;
  /** Request headers (dropped when a redirect leaves the first URL's origin). */
  readonly headers?: Readonly<Record<string, string>>;
  /** The whole fetch, redirects and body included. */
  readonly timeoutMs: number;
  /** Redirects followed at most (each target checked again). */
  readonly maxRedirects: number;
  readonly signal?: AbortSignal;
  /** Extra CA certificates to trust (tests, private CAs). */
  readonly ca?: string | Buffer;
  readonly userAgent?: string;
}

export type FetchProblem = EgressProblem | 'too_many_redirects' | 'timeout' | 'network_error' | 'too_large';

/** An answer whose body is still to be read (through {@link readCapped} or a store with a cap). */
export interface FetchedResponse {
  readonly ok: true;
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: IncomingMessage;
  /** The URL that answered (after redirects). */
  readonly url: URL;
  readonly address: string;
  /** Ends the time-out; call when the body has been read or given up. */
  done(): void;
  /** True once the time-out fired (a body that stopped with an error then stopped for this). */
  timedOut(): boolean;
}

export type FetchOutcome = FetchedResponse | { readonly ok: false; readonly problem: FetchProblem; readonly message: string };

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * GETs a URL through the egress guard: each hop (the first URL and every redirect's target)
 * is checked by {@link checkUrl} and connected to at the address that was checked, with TLS
 * verified against the URL's host name. Redirects are followed up to the limit; the
 * caller's headers go only to the first URL's origin. The time-out covers every hop and the
 * body: when it fires the body stream is destroyed with an error.
 */
export async function fetchThroughGuard(raw: string, o: GuardedFetchOptions): Promise<FetchOutcome> {
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(new Error('timeout')), o.timeoutMs);
  const signal = o.signal ? AbortSignal.any([o.signal, timeout.signal]) : timeout.signal;
  const done = () => clearTimeout(timer);
  const fail = (problem: FetchProblem, message: string): FetchOutcome => {
    done();
    return { ok: false, problem, message };
  };
  let current = raw;
  let origin: string | null = null;
  for (let hop = 0; ; hop++) {
    const check = await checkUrl(current, o.policy);
    if (!check.ok) return fail(check.problem, hop === 0 ? check.message : `A redirect to a refused address: ${check.message}`);
    origin ??= check.url.origin;
    const sameOrigin = check.url.origin === origin;
    let response: IncomingMessage;
    try {
      response = await get(check.url, check.target, {
        'accept-encoding': 'identity',
        'user-agent': o.userAgent ?? 'Mailconv/1.0',
        ...(sameOrigin ? o.headers : {}),
      }, signal, o.ca);
    } catch (e) {
      if (timeout.signal.aborted) return fail('timeout', `The URL did not answer within ${Math.round(o.timeoutMs / 1000)} s.`);
      const code = (e as NodeJS.ErrnoException).code ?? '';
      return fail('network_error', `The URL could not be fetched (${code || (e as Error).message}).`);
    }
    const status = response.statusCode ?? 0;
    const location = response.headers.location;
    if (REDIRECTS.has(status) && location) {
      response.resume();
      if (hop >= o.maxRedirects) return fail('too_many_redirects', `The URL redirected more than ${o.maxRedirects} times.`);
      try {
        current = new URL(location, check.url).toString();
      } catch {
        return fail('invalid_url', 'The URL redirected to an address that is not a valid URL.');
      }
      continue;
    }
    return { ok: true, status, headers: response.headers, body: response, url: check.url, address: check.target.address, done, timedOut: () => timeout.signal.aborted };
  }
}

function get(url: URL, target: PinnedTarget, headers: Record<string, string>, signal: AbortSignal, ca?: string | Buffer): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(
      url,
      { method: 'GET', lookup: pinnedLookup(target), headers, signal, agent: false, ...(ca ? { ca } : {}) },
      resolve,
    );
    request.on('error', reject);
    request.end();
  });
}

/** Reads a body whole, refusing it past `maxBytes` (the stream is destroyed at once). */
export async function readCapped(body: IncomingMessage, maxBytes: number): Promise<{ ok: true; bytes: Buffer } | { ok: false; problem: 'too_large' | 'timeout' | 'network_error' }> {
  const declared = Number(body.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    body.destroy();
    return { ok: false, problem: 'too_large' };
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBytes) {
        body.destroy();
        return { ok: false, problem: 'too_large' };
      }
      chunks.push(chunk);
    }
  } catch (e) {
    return { ok: false, problem: /timeout|abort/i.test(String((e as Error).message) + String((e as Error).name)) ? 'timeout' : 'network_error' };
  }
  return { ok: true, bytes: Buffer.concat(chunks) };
}
