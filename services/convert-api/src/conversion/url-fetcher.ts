import type { IncomingMessage } from 'node:http';
import { parse as parseDisposition } from 'content-disposition';
import type { RemoteAnswer, RemotePage } from '@mailconv/converter';
import { AppError, fetchThroughGuard, networkFence, readCapped, resolverLookup, type EgressPolicy, type FetchProblem } from '@mailconv/platform';
import type { ConvertConfig } from '../config.js';

/** Bytes one remote page's sub-resources may bring in all (stylesheets, scripts, images, fonts). */
export const PAGE_BYTES_BUDGET = 50 * 1024 * 1024;

/** Names the service to the servers it fetches from. */
export const FETCH_USER_AGENT = 'MailconvFileConversion/1.0 (+url import)';

/** The egress guard's policy from the settings: http(s), public addresses unless the operator says otherwise. */
export function urlPolicy(urls: ConvertConfig['urls']): EgressPolicy {
  return {
    schemes: ['https:', 'http:'],
    allowPrivate: urls.allowPrivate,
    ...(urls.allow.length ? { allow: networkFence(urls.allow) } : {}),
    ...(urls.denyNetworks.length ? { deny: networkFence(urls.denyNetworks) } : {}),
    ...(urls.denyHosts.length ? { denyHosts: urls.denyHosts } : {}),
    ...(urls.restrictTo ? { fence: networkFence(urls.restrictTo) } : {}),
    ...(urls.dnsServers.length ? { lookup: resolverLookup(urls.dnsServers) } : {}),
  };
}

/** What an import opened: the body to store, and what the answer says about the file. */
export interface OpenedUrl {
  readonly body: IncomingMessage;
  /** The URL that answered, after redirects. */
  readonly url: string;
  /** A file name for the upload, with an extension the content type names when the URL's has none. */
  readonly filename: string;
  /** Ends the fetch's time-out (call once the body is stored or given up). */
  done(): void;
  /** What to answer when reading the body failed: 422 `fetch_failed`, a time-out said as such. */
  readFailure(err: unknown): AppError;
}

const EXTENSIONS: Readonly<Record<string, string>> = {
  'text/html': 'html',
  'application/xhtml+xml': 'xhtml',
  'text/markdown': 'md',
  'text/plain': 'txt',
  'text/csv': 'csv',
  'application/pdf': 'pdf',
  'image/svg+xml': 'svg',
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'application/json': 'json',
};

/** Problems that are the request's fault (a URL the service will not fetch): 400 naming `url`. */
const REFUSALS = new Set<FetchProblem>(['invalid_url', 'not_https', 'scheme_not_allowed', 'credentials', 'private_address', 'denied', 'outside_restrict_to']);

/**
 * Every fetch the conversion service makes goes through here and the platform's egress guard
 * (issue 22): imports of a URL (`POST /api/v1/convert` with `url`) and the sub-resources of a
 * page rendered from one. Engines never reach a network themselves.
 */
export class UrlFetcher {
  constructor(
    private readonly o: {
      policy: EgressPolicy;
      timeoutMs: number;
      maxRedirects: number;
    },
  ) {}

  /** Opens a URL to import: refused addresses are 400 `invalid_request` (field `url`), failures 422 `fetch_failed`. */
  async open(raw: string, headers?: Readonly<Record<string, string>>): Promise<OpenedUrl> {
    const r = await fetchThroughGuard(raw, { ...this.common(), ...(headers ? { headers } : {}) });
    if (!r.ok) {
      if (REFUSALS.has(r.problem)) throw new AppError('invalid_request', `url: ${r.message}`, { field: 'url' });
      throw new AppError('fetch_failed', r.message, { field: 'url', reason: r.problem });
    }
    if (r.status < 200 || r.status > 299) {
      r.body.resume();
      r.done();
      throw new AppError('fetch_failed', `The URL answered HTTP ${r.status}; only a 2xx answer is converted.`, { field: 'url', reason: `http_${r.status}` });
    }
    const seconds = Math.round(this.o.timeoutMs / 1000);
    return {
      body: r.body,
      url: r.url.href,
      filename: fileNameOf(r.url, r.headers['content-type'], r.headers['content-disposition']),
      done: r.done,
      readFailure: (err) =>
        r.timedOut()
          ? new AppError('fetch_failed', `The URL did not finish answering within ${seconds} s.`, { field: 'url', reason: 'timeout' })
          : new AppError('fetch_failed', `The URL’s answer broke off (${(err as Error).message}).`, { field: 'url', reason: 'network_error' }),
    };
  }

  /** The fetcher a page rendered from `url` asks for its sub-resources, within {@link PAGE_BYTES_BUDGET} in all. */
  forPage(url: string): RemotePage {
    let left = PAGE_BYTES_BUDGET;
    const fetch = async (target: string, signal: AbortSignal): Promise<RemoteAnswer> => {
      if (left <= 0) return { ok: false, reason: 'page_budget_spent' };
      const r = await fetchThroughGuard(target, { ...this.common(), signal });
      if (!r.ok) return { ok: false, reason: r.problem };
      const body = await readCapped(r.body, left);
      r.done();
      if (!body.ok) {
        left = 0;
        return { ok: false, reason: body.problem };
      }
      left -= body.bytes.length;
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(r.headers)) if (typeof value === 'string') headers[name] = value;
      return { ok: true, status: r.status, headers, body: body.bytes };
    };
    return { url, fetch };
  }

  private common() {
    return { policy: this.o.policy, timeoutMs: this.o.timeoutMs, maxRedirects: this.o.maxRedirects, userAgent: FETCH_USER_AGENT };
  }
}

/** The upload's name: Content-Disposition's, else the URL's last segment, else `download`; an extension from the type when it has none. */
export function fileNameOf(url: URL, contentType: string | undefined, disposition: string | undefined): string {
  let name = '';
  if (disposition) {
    try {
      name = String(parseDisposition(disposition).parameters.filename ?? '');
    } catch {
      name = '';
    }
  }
  if (!name) {
    const last = url.pathname.split('/').filter(Boolean).pop() ?? '';
    try {
      name = decodeURIComponent(last);
    } catch {
      name = last;
    }
  }
  if (!name) name = 'download';
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  const ext = EXTENSIONS[type];
  if (ext && !/\.[A-Za-z0-9]{1,8}$/.test(name)) name = `${name}.${ext}`;
  // A page served as HTML under a name like `report.php` is an HTML page.
  if (ext === 'html' && !/\.x?html?$/i.test(name)) name = `${name.replace(/\.[A-Za-z0-9]{1,8}$/, '')}.html`;
  return name;
}
