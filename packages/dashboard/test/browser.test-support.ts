import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { ROOT } from './services.test-support.js';

/** Debian's chromium (scripts/system-packages/test-dashboard.txt). */
export const CHROMIUM = '/usr/bin/chromium';

const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/**
 * Where screenshots go: the committed docs/screenshots/ when UPDATE_SCREENSHOTS=1 (then look
 * at them before committing), else the suite's own dist folder, so a test run leaves the
 * work tree clean.
 */
export const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? join(ROOT, 'docs', 'screenshots') : join(ROOT, 'packages', 'dashboard', 'test', 'dist', 'screenshots');

export interface Browser {
  page: Page;
  context: BrowserContext;
  /** Requests the page tried to make to anything but the service's own origin (refused). */
  foreign: string[];
  /** Console errors and uncaught exceptions of the page (a CSP violation is one). */
  problems: string[];
  shot(name: string, options?: { fullPage?: boolean }): Promise<void>;
  close(): Promise<void>;
}

/**
 * Chromium with a fresh profile. Every request to another origin is refused and recorded:
 * the dashboards must load nothing from elsewhere, and a test must not reach past loopback.
 */
export async function openBrowser(origin: string, viewport = { width: 1280, height: 900 }): Promise<Browser> {
  const profile = await mkdtemp(join(tmpdir(), 'dashboard-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS, viewport, acceptDownloads: true, timeout: 30_000 });
  const foreign: string[] = [];
  const problems: string[] = [];
  await context.route('**/*', async (route) => {
    const url = route.request().url();
    if (url.startsWith(`${origin}/`) || url.startsWith('data:') || url.startsWith('blob:')) return route.continue();
    foreign.push(url);
    return route.abort('blockedbyclient');
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(20_000);
  page.on('console', (m) => {
    // A 401 on the first GET /api/dashboard/session is how the app learns it must show the sign-in form.
    if (m.type() === 'error' && !/status of 401/.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(String(e)));
  page.on('dialog', (d) => void d.accept());
  await mkdir(SCREENSHOTS, { recursive: true });
  return {
    page,
    context,
    foreign,
    problems,
    shot: async (name, options = {}) => {
      await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: options.fullPage ?? true, animations: 'disabled' });
    },
    close: async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** Signs in through the form. */
export async function signIn(page: Page, url: string, email: string, password: string): Promise<void> {
  await page.goto(`${url}/dashboard/`);
  await page.getByLabel('E-mail address').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}
