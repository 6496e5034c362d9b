import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { dirname, extname, join, posix, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyReply } from 'fastify';
import { findProjectRoot } from '../config/settings.js';
import { AppError } from '../errors/app-error.js';
import type { ServiceApp } from './create-app.js';

/** Where the dashboards are served. */
export const DASHBOARD_PATH = '/dashboard';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

/**
 * Where `packages/dashboard` put the build of one app (`npm start` and `npm test` build it;
 * see scripts/lib/ensure.mjs). Found from this module's location, not the working directory.
 */
export function dashboardBuildDir(appName: 'email' | 'convert'): string {
  return join(findProjectRoot(dirname(fileURLToPath(import.meta.url))), 'packages', 'dashboard', 'dist', 'web', appName);
}

/**
 * Everything from this origin, nothing from any other; no inline scripts or styles (the
 * built apps have none), no framing, no plugins.
 */
export const DASHBOARD_CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

function securityHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', DASHBOARD_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'no-referrer')
    .header('cross-origin-opener-policy', 'same-origin');
}

async function fileAt(path: string): Promise<{ size: number; mtime: Date } | null> {
  try {
    const s = await stat(path);
    return s.isFile() ? { size: s.size, mtime: s.mtime } : null;
  } catch {
    return null;
  }
}

/**
 * Serves a built single-page app (packages/dashboard) under `/dashboard/`: files of `root`
 * with their content type; hashed `assets/` cached for a year, everything else revalidated;
 * any other page path answered with `index.html` (the app routes in the browser); nothing
 * outside `root`; `/` redirects (302) to `/dashboard/`. Hidden from the OpenAPI document:
 * these are pages, not API.
 */
export function registerDashboard(app: ServiceApp, root: string): void {
  const base = resolve(root);
  const notBuilt = () => new AppError('not_found', 'The dashboard is not built on this server: run `npm start` (or `npm run build -w packages/dashboard`).');

  /** `immutable`: hashed assets; `long`: a month (the icon, whose name cannot change); else revalidated. */
  const send = async (reply: FastifyReply, file: string, cache: 'immutable' | 'long' | 'revalidate') => {
    const info = await fileAt(file);
    if (!info) return null;
    securityHeaders(reply)
      .header('content-type', TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream')
      .header('content-length', info.size)
      .header('last-modified', info.mtime.toUTCString())
      .header('cache-control', cache === 'immutable' ? 'public, max-age=31536000, immutable' : cache === 'long' ? 'public, max-age=2592000' : 'no-cache');
    return reply.send(createReadStream(file));
  };

  const page = async (reply: FastifyReply) => (await send(reply, join(base, 'index.html'), 'revalidate')) ?? Promise.reject(notBuilt());

  // A person who types the bare host reaches the dashboard, not a JSON 404 (issue 30). A 302:
  // the root may one day answer something else.
  app.get('/', { schema: { hide: true } }, async (_request, reply) => reply.redirect(`${DASHBOARD_PATH}/`, 302));
  // Browsers ask for /favicon.ico whatever the page links (a JSON 404 logged in every tab, issue 44):
  // the dashboards' mark, cached for a month.
  app.get('/favicon.ico', { schema: { hide: true } }, async (_request, reply) => (await send(reply, join(base, 'favicon.ico'), 'long')) ?? Promise.reject(notBuilt()));
  app.get(DASHBOARD_PATH, { schema: { hide: true } }, async (_request, reply) => reply.redirect(`${DASHBOARD_PATH}/`, 301));
  app.get(`${DASHBOARD_PATH}/`, { schema: { hide: true } }, async (_request, reply) => page(reply));
  app.get(`${DASHBOARD_PATH}/*`, { schema: { hide: true } }, async (request, reply) => {
    const raw = (request.params as { '*': string })['*'];
    // Normalised as a URL path, then checked again as a file path: `..`, encoded slashes
    // and NUL bytes cannot leave the build folder.
    const rel = posix.normalize(`/${raw}`).slice(1);
    if (raw.includes('\0') || rel.split('/').includes('..')) throw new AppError('not_found', 'No such page.');
    const file = resolve(base, rel);
    if (file !== base && !file.startsWith(base + sep)) throw new AppError('not_found', 'No such page.');
    const served = rel && (await send(reply, file, rel.startsWith('assets/') ? 'immutable' : 'revalidate'));
    if (served) return served;
    // A missing file (a name with an extension) is a 404; any other path is a page of the app.
    if (extname(rel)) throw new AppError('not_found', 'No such file.');
    return page(reply);
  });
}
