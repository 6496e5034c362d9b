import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
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
  // Every console error counts (issue 30: the session probe's 401 and /favicon.ico's 404 are
  // gone, not filtered); the failing resource's address is kept so a test can say which it expected.
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`${m.text()} ${m.location().url}`.trim());
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

/** The desktop size every test runs at, and the narrowest phone the dashboards support (issue 30). */
export const DESKTOP = { width: 1280, height: 900 };
export const PHONE = { width: 360, height: 780 };

/** Where the page's layout goes wrong at the current size: overflowing elements, clipped controls, blank scroll. */
async function layoutProblems(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const problems: string[] = [];
    const width = window.innerWidth;
    const name = (e: Element) => `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}${e.classList.length ? `.${Array.from(e.classList).join('.')}` : ''} "${(e.textContent ?? '').trim().slice(0, 40)}"`;
    const root = document.documentElement;
    if (root.scrollWidth > width) {
      problems.push(`the page is ${root.scrollWidth} px wide in a ${width} px window`);
      // Name the widest culprits: elements reaching past the right edge whose children do not.
      const past = Array.from(document.querySelectorAll('body *')).filter((e) => e.getBoundingClientRect().right > width + 0.5 && e.getClientRects().length > 0);
      for (const e of past.filter((e) => !past.some((o) => o !== e && e.contains(o))).slice(0, 8)) problems.push(`  past the edge: ${name(e)} (right ${Math.round(e.getBoundingClientRect().right)} px)`);
    }
    // The page ends where its content ends (issue 30: the overview scrolled ~950 px past it).
    const content = document.getElementById('root')!.getBoundingClientRect().bottom + window.scrollY;
    if (root.scrollHeight > Math.max(window.innerHeight, Math.ceil(content)) + 1) problems.push(`the page scrolls to ${root.scrollHeight} px; its content ends at ${Math.ceil(content)} px`);
    // Every control one can act on is inside the window and not cut off by a scrolling box around it.
    for (const e of Array.from(document.querySelectorAll('main button, main a.button, main a[download], main select, main input:not([type=checkbox])'))) {
      const r = e.getBoundingClientRect();
      if (r.width <= 1 || r.height <= 1) continue;
      if (r.left < -0.5 || r.right > width + 0.5) problems.push(`outside the window: ${name(e)} (${Math.round(r.left)}–${Math.round(r.right)} px)`);
      for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
        const style = getComputedStyle(a);
        if (style.overflowX === 'visible') continue;
        const box = a.getBoundingClientRect();
        if (r.left < box.left - 0.5 || r.right > box.right + 0.5) problems.push(`cut off by ${name(a)}: ${name(e)}`);
      }
    }
    return problems;
  });
}

/**
 * Checks the current page at desktop width, then at 360 px: nothing wider than the window,
 * no blank scroll past the content, every button and download link inside the window and
 * not clipped; `visible` names controls that must be there (e.g. `Revoke key ci server`).
 * Takes the phone screenshot `<name>-phone.png` and returns to the desktop size.
 */
export async function checkLayout(b: Browser, name: string, visible: Array<string | RegExp> = []): Promise<void> {
  const { page } = b;
  assert.deepEqual(await layoutProblems(page), [], `${name} at ${DESKTOP.width} px`);
  await page.setViewportSize(PHONE);
  try {
    // Two frames: the media queries apply, then layout settles.
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    assert.deepEqual(await layoutProblems(page), [], `${name} at ${PHONE.width} px`);
    for (const n of visible) {
      const control = page.locator('main').getByRole('button', { name: n }).or(page.locator('main').getByRole('link', { name: n })).first();
      assert.ok(await control.isVisible(), `${name} at ${PHONE.width} px: ${String(n)} is shown`);
    }
    await b.shot(`${name}-phone`);
  } finally {
    await page.setViewportSize(DESKTOP);
  }
}
