/**
 * Chromium (issue 22): HTML and XHTML printed to PDF, or photographed as PNG, JPEG or WebP,
 * exactly as the browser renders them — CSS grid and flex, colours and backgrounds, SVG,
 * web fonts, and the page's own JavaScript (charts drawn by a script), bounded in time.
 *
 * Nothing leaves the job: the page is opened at a name that cannot resolve
 * (`https://document.invalid/`), and every request it makes goes through request
 * interception — its own file is answered by the engine from the job folder; anything else
 * (other hosts, any scheme, `file:`, another job's folder) is refused and counted. Below
 * that, the browser runs in the sandbox with no network namespace of its own and without
 * the job folders mounted: even a request that slipped past would reach nothing.
 *
 * A page fetched from a URL (`step.job.remotePage`) is opened at its own address instead,
 * and its http(s) sub-resources are asked of the service, which fetches them through its
 * egress guard (public addresses only, pinned, redirects re-checked, budgets): the browser
 * still reaches no network itself.
 *
 * A zip holding a site (`index.html` at its top, or in its one top folder, with its CSS,
 * images, fonts and scripts) is unpacked in the sandbox and its files are served under the
 * page's origin: only regular files inside the unpacked tree, never through a link.
 */
import { constants as fsConstants } from 'node:fs';
import { open, readdir, realpath, stat } from 'node:fs/promises';
import { extname, join, resolve, sep } from 'node:path';
import type { HTTPRequest, Page } from 'puppeteer-core';
import { failed, failedFinally } from '../errors.js';
import { writeJobFile } from '../guards/output-guard.js';
import { CHROMIUM_BIN, ChromiumPool, type ChromiumPoolOptions, type FreshPage } from './chromium-pool.js';
import { unpackArchive } from './archive.engine.js';
import { probeBinaries, type Engine, type EngineProbe, type RemotePage, type Step } from './engine.js';
import { renderMarkdownPage } from './markdown-page.js';

/** The page's origin: `.invalid` never resolves, so the name itself cannot reach a network. */
export const DOCUMENT_ORIGIN = 'https://document.invalid';

const SOURCE_TYPES: Readonly<Record<string, string>> = {
  html: 'text/html; charset=utf-8',
  xhtml: 'application/xhtml+xml; charset=utf-8',
  svg: 'image/svg+xml',
};

/** Page options an SVG takes: it is drawn at its own size (no paper, margins, header or window). */
export const SVG_PAGE_OPTIONS = ['css', 'wait_for', 'media', 'device_scale'] as const;

/** The name the page is served under: Markdown is served as the HTML page made of it, a zip as its index.html. */
const pageExt = (from: string): string => (from === 'md' || from === 'zip' ? 'html' : from);

/** Types of a zipped site's files, by extension; anything else is served as bytes. */
const SITE_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8', '.htm': 'text/html; charset=utf-8', '.xhtml': 'application/xhtml+xml', '.css': 'text/css', '.js': 'text/javascript', '.mjs': 'text/javascript',
  '.json': 'application/json', '.svg': 'image/svg+xml', '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif', '.webp': 'image/webp',
  '.avif': 'image/avif', '.ico': 'image/x-icon', '.bmp': 'image/bmp', '.woff': 'font/woff', '.woff2': 'font/woff2', '.ttf': 'font/ttf', '.otf': 'font/otf', '.txt': 'text/plain',
};

/** Largest file of a zipped site served to the page. */
const SITE_FILE_MAX = 64 * 1024 * 1024;

/** Response headers of a fetched sub-resource the page gets to see (type, and CORS for fonts and scripts). */
const PASSED_HEADERS = ['content-type', 'content-language', 'access-control-allow-origin', 'access-control-allow-credentials', 'access-control-expose-headers', 'timing-allow-origin'];

/** Sub-resources of one remote page at most; the rest are refused. */
export const MAX_REMOTE_REQUESTS = 300;

const withoutHash = (url: string): string => {
  const i = url.indexOf('#');
  return i < 0 ? url : url.slice(0, i);
};

/** Largest screenshot height, in CSS pixels (Chromium's own limit for one bitmap is 16,384). */
const MAX_SHOT_HEIGHT = 16_384;

/** Viewport of screenshots and of the layout before printing. */
const VIEWPORT = { width: 1280, height: 800, deviceScaleFactor: 1 };

/** The Chromium engine. */
export class ChromiumEngine implements Engine {
  readonly name = 'chromium';
  readonly reads = ['html', 'xhtml', 'md', 'zip', 'svg'] as const;
  readonly writes = ['pdf', 'png', 'jpg', 'webp'] as const;
  readonly pool: ChromiumPool;

  constructor(options: ChromiumPoolOptions) {
    this.pool = new ChromiumPool(options);
  }

  tradesQualityForSize(to: string): boolean {
    return to === 'jpg' || to === 'webp';
  }

  probe(): Promise<EngineProbe> {
    return probeBinaries(this.name, [CHROMIUM_BIN], ['--version'], /Chromium (\S+)/);
  }

  async convert(step: Step): Promise<void> {
    let source: Buffer;
    let site: string | undefined;
    if (step.from === 'zip') {
      site = await siteRoot(await unpackArchive(step, 'site'));
      const index = await readSiteFile(site, 'index.html');
      if (!index) throw failed('The zip’s index.html could not be read (it must be a file, not a link).');
      source = index;
    } else {
      // The job's input (the upload's link) or a chain's intermediate, which the converter
      // checked when its engine finished: opened without following a link, a regular file.
      const handle = await open(step.input, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
      try {
        if (!(await handle.stat()).isFile()) throw failed('The conversion produced no output.', 'chromium: the input is not a file');
        source = await handle.readFile();
      } finally {
        await handle.close();
      }
    }
    // Markdown becomes a whole HTML page first: default stylesheet, highlighted code, then `css`.
    if (step.from === 'md') source = await renderMarkdownPage(source, step.options.page?.css, step.job);
    const type = SOURCE_TYPES[step.from] ?? 'text/html; charset=utf-8';
    // The time-out is the page's, counted from when it has a fresh page on a running browser,
    // per attempt (issue 44): a render whose browser died under it is retried on a new one
    // with its whole time, since neither the crash, nor the new browser's start, nor the
    // wait for a free page is the page's doing. Bounded all the same: one retry, and a
    // browser start has its own time-out (ChromiumPoolOptions.startTimeoutMs).
    const bytes = await this.pool.run((fresh) => this.render(fresh, step, source, type, Date.now() + step.job.timeoutMs, site), step.job.signal);
    await writeJobFile(step.output, bytes);
  }

  private async render(fresh: FreshPage, step: Step, source: Buffer, type: string, deadline: number, site?: string): Promise<Uint8Array> {
    const { page } = fresh;
    let blocked = 0;
    // A page from a URL, for the formats that are its own document (not Markdown made into a page).
    const remote: RemotePage | undefined = step.from === 'html' || step.from === 'xhtml' ? step.job.remotePage : undefined;
    const pageUrl = remote ? withoutHash(new URL(remote.url).href) : `${DOCUMENT_ORIGIN}/index.${pageExt(step.from)}`;
    // In-flight fetches of sub-resources stop with the render.
    const fetching = new AbortController();
    const signal = step.job.signal ? AbortSignal.any([step.job.signal, fetching.signal]) : fetching.signal;
    let remoteRequests = 0;
    try {
      const left = () => Math.max(1000, deadline - Date.now());
      const opts = step.options.page ?? {};
      page.setDefaultTimeout(left());
      await page.setViewport({ ...VIEWPORT, width: opts.viewportWidth ?? VIEWPORT.width, deviceScaleFactor: opts.deviceScale ?? VIEWPORT.deviceScaleFactor });
      if (opts.media) await page.emulateMediaType(opts.media);
      // No dialog waiting for a click, no second window (downloads are refused by the pool).
      page.on('dialog', (d) => void d.dismiss().catch(() => undefined));
      page.on('popup', (p) => void p?.close().catch(() => undefined));
      // Interception is on from the page's creation: every request waits for this handler.
      page.on('request', (request: HTTPRequest) => {
        const url = request.url();
        if (withoutHash(url) === pageUrl || (!remote && url === `${DOCUMENT_ORIGIN}/`)) {
          void request.respond({ status: 200, contentType: type, body: source, headers: { 'cache-control': 'no-store' } }).catch(() => undefined);
          return;
        }
        if (url.startsWith('data:') || url.startsWith('blob:') || url === 'about:blank') {
          void request.continue().catch(() => undefined);
          return;
        }
        // The browser's own favicon request is not the page's: answered "none", not counted.
        if (!remote && url === `${DOCUMENT_ORIGIN}/favicon.ico`) {
          void request.respond({ status: 404, contentType: 'text/plain', body: '' }).catch(() => undefined);
          return;
        }
        const leavesPage = request.isNavigationRequest() && request.frame() === page.mainFrame();
        // A zipped site's own files, under the page's origin.
        if (site && !leavesPage && url.startsWith(`${DOCUMENT_ORIGIN}/`)) {
          void serveSiteFile(request, site).then((ok) => {
            if (!ok) blocked++;
          });
          return;
        }
        if (remote && !leavesPage && /^https?:/i.test(url) && request.method() === 'GET' && remoteRequests < MAX_REMOTE_REQUESTS) {
          remoteRequests++;
          void this.fetchFor(request, remote, signal).then((ok) => {
            if (!ok) blocked++;
          });
          return;
        }
        // Everything else: other hosts, other schemes, the job's other names. Never fetched.
        // The page leaving itself (a link clicked, location changed) is cancelled as if it
        // never happened ('aborted' keeps the document; any other code shows an error page).
        blocked++;
        void request.abort(leavesPage ? 'aborted' : 'blockedbyclient').catch(() => undefined);
      });
      await page.goto(pageUrl, { waitUntil: 'load', timeout: left() });
      // A remote page's scripts may still be fetching after load: a short quiet spell, bounded.
      if (remote) await page.waitForNetworkIdle({ idleTime: 250, timeout: Math.min(left(), 10_000) }).catch(() => undefined);
      // The caller's stylesheet on an HTML page (Markdown's is in its page already); an SVG's in its own namespace.
      if (opts.css !== undefined && step.from === 'svg') {
        await page.evaluate((css: string) => {
          const style = document.createElementNS('http://www.w3.org/2000/svg', 'style');
          style.textContent = css;
          document.documentElement.appendChild(style);
        }, opts.css);
      } else if (opts.css !== undefined && step.from !== 'md') await page.addStyleTag({ content: opts.css });
      // A title asked for is the document's: the header's `title` span and the PDF's own say it.
      if (step.options.title !== undefined) await page.evaluate((t: string) => void (document.title = t), step.options.title);
      // Every request is answered at once by the interception (the page's file, or refused),
      // so nothing is in flight after load: web fonts and a frame for scripts that draw on
      // load. A page that draws later names what to wait for (wait_for).
      await page.evaluate('Promise.all([document.fonts ? document.fonts.ready : null, new Promise((r) => requestAnimationFrame(r))]).then(() => true)').catch(() => undefined);
      if (opts.waitFor) {
        await page.waitForSelector(opts.waitFor, { timeout: left() }).catch(() => {
          throw failedFinally(`wait_for: ${JSON.stringify(opts.waitFor).slice(0, 80)} did not appear before the conversion time-out.`, 'chromium: wait_for timed out');
        });
      }
      const shot = step.from === 'svg' ? await this.captureSvg(page, step, left) : await this.capture(page, step, left);
      if (step.job.counts) step.job.counts.blockedRequests += blocked;
      return shot;
    } catch (e) {
      if (e instanceof Error && /timeout/i.test(e.name + e.message)) throw failedFinally('The page took too long to render and was stopped.', `chromium: ${e.message}`);
      throw e;
    } finally {
      fetching.abort();
      this.pool.countBlocked(blocked);
    }
  }

  /** Answers one sub-resource request of a remote page with what the service fetched; false when it was refused. */
  private async fetchFor(request: HTTPRequest, remote: RemotePage, signal: AbortSignal): Promise<boolean> {
    try {
      const answer = await remote.fetch(request.url(), signal);
      if (!answer.ok) {
        await request.abort('blockedbyclient').catch(() => undefined);
        return false;
      }
      const headers: Record<string, string> = { 'cache-control': 'no-store' };
      for (const name of PASSED_HEADERS) if (answer.headers[name] !== undefined) headers[name] = answer.headers[name];
      await request.respond({ status: answer.status, headers, body: answer.body }).catch(() => undefined);
      return true;
    } catch {
      await request.abort('failed').catch(() => undefined);
      return false;
    }
  }

  /**
   * An SVG at its own size: its width and height (its viewBox's when it has none, as librsvg
   * does), one PDF page of exactly that size, or a picture of it — transparent where the
   * drawing is, for PNG and WebP.
   */
  private async captureSvg(page: Page, step: Step, left: () => number): Promise<Uint8Array> {
    const size = (await page.evaluate(`(() => {
      const svg = document.documentElement;
      if (!(svg instanceof SVGSVGElement)) return null;
      const vb = svg.viewBox && svg.viewBox.baseVal;
      if (!svg.hasAttribute('width') && vb && vb.width > 0) svg.setAttribute('width', String(vb.width));
      if (!svg.hasAttribute('height') && vb && vb.height > 0) svg.setAttribute('height', String(vb.height));
      const r = svg.getBoundingClientRect();
      return { width: r.width, height: r.height };
    })()`)) as { width: number; height: number } | null;
    if (!size || !(size.width >= 1) || !(size.height >= 1)) throw failed('The SVG has no size the browser can draw (its root has neither width and height nor a viewBox).');
    const width = Math.min(Math.ceil(size.width), MAX_SHOT_HEIGHT);
    const height = Math.min(Math.ceil(size.height), MAX_SHOT_HEIGHT);
    if (step.to === 'pdf') {
      return page.pdf({ width: `${width}px`, height: `${height}px`, margin: { top: 0, right: 0, bottom: 0, left: 0 }, printBackground: true, pageRanges: '1', timeout: left() });
    }
    await page.setViewport({ width, height, deviceScaleFactor: step.options.page?.deviceScale ?? 1 });
    const type = step.to === 'jpg' ? 'jpeg' : (step.to as 'png' | 'webp');
    return page.screenshot({ type, ...(type === 'png' ? {} : { quality: step.quality }), clip: { x: 0, y: 0, width, height }, omitBackground: type !== 'jpeg' });
  }

  private async capture(page: Page, step: Step, left: () => number): Promise<Uint8Array> {
    const opts = step.options.page ?? {};
    if (opts.singlePage) {
      // One page: the page's own breaks go, and its height is measured as it will be printed.
      await page.addStyleTag({ content: '*{break-before:auto!important;break-after:auto!important;break-inside:auto!important;page-break-before:auto!important;page-break-after:auto!important}' });
      if (!opts.media) await page.emulateMediaType('print');
    }
    const height = Number(await page.evaluate('Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0)'));
    if (step.to === 'pdf') {
      const headerFooter = opts.headerHtml !== undefined || opts.footerHtml !== undefined;
      // A header or footer needs room: 20 mm at the top and bottom unless margins were given.
      const margin = opts.margin ?? (headerFooter ? { top: '20mm', right: '10mm', bottom: '20mm', left: '10mm' } : undefined);
      const width = opts.paper ? `${opts.paper.width}in` : '8.27in';
      // A paper or an orientation asked for in the request wins over the page's own @page
      // size: Chromium takes the orientation from the page's CSS when it has one, so the
      // requested size is written into the page as its @page size.
      const asked = !opts.singlePage && (opts.paper !== undefined || opts.landscape === true) && opts.preferCssPageSize !== true;
      let size: { width: string; height: string } | { format: 'A4' };
      if (opts.singlePage) size = { width, height: `${Math.min(height + 2, 200 * 96)}px` };
      else if (asked) {
        const [w, h] = opts.paper ? [opts.paper.width, opts.paper.height] : [8.27, 11.69];
        const [pw, ph] = opts.landscape ? [Math.max(w, h), Math.min(w, h)] : [w, h];
        size = { width: `${pw}in`, height: `${ph}in` };
        await page.addStyleTag({ content: `@page { size: ${pw}in ${ph}in !important; }` });
      } else size = { format: 'A4' };
      return page.pdf({
        ...size,
        landscape: false,
        printBackground: opts.printBackground ?? true,
        preferCSSPageSize: asked || (opts.preferCssPageSize ?? !opts.singlePage),
        scale: opts.scale ?? 1,
        ...(margin ? { margin: { top: margin.top, right: margin.right, bottom: margin.bottom, left: margin.left } } : {}),
        displayHeaderFooter: headerFooter,
        ...(headerFooter ? { headerTemplate: opts.headerHtml ?? '<span></span>', footerTemplate: opts.footerHtml ?? '<span></span>' } : {}),
        timeout: left(),
      });
    }
    const type = step.to === 'jpg' ? 'jpeg' : (step.to as 'png' | 'webp');
    const tall = height > MAX_SHOT_HEIGHT;
    const width = opts.viewportWidth ?? VIEWPORT.width;
    return page.screenshot({
      type,
      ...(type === 'png' ? {} : { quality: step.quality }),
      ...(tall ? { clip: { x: 0, y: 0, width, height: MAX_SHOT_HEIGHT } } : { fullPage: true }),
      captureBeyondViewport: true,
    });
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}

/** The folder of an unpacked zip that holds `index.html`: its top, or its one top folder. */
async function siteRoot(tree: string): Promise<string> {
  const names = await readdir(tree);
  if (names.includes('index.html')) return tree;
  const folders = [];
  for (const name of names) if ((await stat(join(tree, name)).catch(() => null))?.isDirectory()) folders.push(name);
  if (names.length === 1 && folders.length === 1 && (await readdir(join(tree, folders[0]!))).includes('index.html')) return join(tree, folders[0]!);
  throw failed('A zip converts to PDF or a picture when it holds a web page: index.html at its top (or in its one top folder), with the CSS, images, fonts and scripts it uses.');
}

/**
 * A file of the unpacked site, or null: the path must stay inside the site once every link
 * on the way is resolved, and the file itself must be a regular file opened without
 * following a link, at most {@link SITE_FILE_MAX} bytes.
 */
async function readSiteFile(site: string, relative: string): Promise<Buffer | null> {
  const root = await realpath(site);
  const path = resolve(root, relative);
  if (!path.startsWith(root + sep)) return null;
  let real: string;
  try {
    real = join(await realpath(resolve(path, '..')), path.slice(path.lastIndexOf(sep) + 1));
  } catch {
    return null;
  }
  if (!real.startsWith(root + sep)) return null;
  let handle;
  try {
    handle = await open(real, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const st = await handle.stat();
    if (!st.isFile() || st.size > SITE_FILE_MAX) return null;
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** Answers a request of a zipped site's page from its files (404 when there is no such file); false when refused. */
async function serveSiteFile(request: HTTPRequest, site: string): Promise<boolean> {
  let relative: string;
  try {
    relative = decodeURIComponent(new URL(request.url()).pathname).replace(/^\/+/, '');
  } catch {
    await request.abort('blockedbyclient').catch(() => undefined);
    return false;
  }
  const body = relative && !relative.includes('\0') ? await readSiteFile(site, relative) : null;
  if (!body) {
    await request.respond({ status: 404, contentType: 'text/plain', body: 'not in the zip' }).catch(() => undefined);
    return false;
  }
  const type = SITE_TYPES[extname(relative).toLowerCase()] ?? 'application/octet-stream';
  await request.respond({ status: 200, contentType: type, body, headers: { 'cache-control': 'no-store' } }).catch(() => undefined);
  return true;
}
