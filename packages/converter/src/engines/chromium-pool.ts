/**
 * A warm pool of headless Chromium browsers (issue 22), on the pattern of the LibreOffice
 * pool: a few browser processes started once, each conversion in a fresh isolated browser
 * context, an instance recycled after N conversions or past a memory mark, a crashed one
 * replaced (the conversion in flight retried once on the new one, with its whole time:
 * the render callback starts its own clock, see ChromiumEngine.convert).
 *
 * Each browser runs in the engine sandbox like every engine (bubblewrap: no network at all,
 * its own folder the only writable place, the engine user, memory caps) and is driven over
 * the DevTools protocol through a pipe — its stdin and stdout, which a shell inside the
 * sandbox hands to Chromium as the descriptors 3 and 4 it reads and writes
 * (`--remote-debugging-pipe`): no port is opened, and no descriptor has to survive sudo.
 * The browser never sees the job folders; pages get their files from the engine, through
 * request interception (chromium.engine.ts).
 */
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { connect, type Browser, type BrowserContext, type ConnectionTransport, type Page } from 'puppeteer-core';
import { ConversionError, failed } from '../errors.js';
import { ownForSandbox, prepareSandboxRoot, removeSandboxTree, spawnSandboxed, treePssBytes, type SandboxedProcess } from '../exec/exec.js';

/** Debian's browser binary (`/usr/bin/chromium` is a shell wrapper reading /etc/chromium.d). */
export const CHROMIUM_BIN = '/usr/lib/chromium/chromium';

/**
 * A browser that cannot reach a network even where the sandbox has no network namespace of
 * its own: every connection (http, https, WebSocket; loopback included) goes to a proxy on
 * 127.0.0.1:9 where nothing answers, no name resolves, and WebRTC sends no UDP outside the
 * proxy. Below request interception and the sandbox, the third wall; the reference browser
 * of the tests and of `bench:html` runs with them too.
 */
export const CHROMIUM_OFFLINE_FLAGS = [
  '--proxy-server=http://127.0.0.1:9', '--proxy-bypass-list=<-loopback>', '--host-resolver-rules=MAP * ~NOTFOUND',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp', '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

/** Flags of every instance: headless, nothing phoning home, no GPU, the sandbox is bubblewrap's. */
const FLAGS = [
  ...CHROMIUM_OFFLINE_FLAGS,
  '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--no-default-browser-check', '--disable-extensions',
  '--disable-default-apps', '--disable-breakpad', '--disable-crash-reporter', '--disable-dev-shm-usage',
  '--disable-domain-reliability', '--disable-client-side-phishing-detection', '--metrics-recording-only',
  '--disable-features=Translate,MediaRouter,OptimizationHints,InterestFeedContentSuggestions,AutofillServerCommunication,ServiceWorker',
  '--mute-audio', '--hide-scrollbars', '--font-render-hinting=none', '--force-color-profile=srgb',
  '--remote-debugging-pipe',
];

export interface ChromiumPoolOptions {
  /** Folder of the instances' own folders (profile, caches). */
  readonly workDir: string;
  /** Browser processes; default 1. */
  readonly instances?: number;
  /** Conversions one browser renders at once; default 2. */
  readonly pagesPerInstance?: number;
  /** Conversions after which a browser is replaced by a fresh one; default 200. */
  readonly maxConversionsPerInstance?: number;
  /** Memory of a browser and its children (proportional: shared pages once) past which it is replaced after its conversions; default 1.5 GiB. */
  readonly maxRssBytes?: number;
  /** RLIMIT_DATA of each browser process; default 4 GiB (V8 reserves generously). */
  readonly maxMemoryBytes?: number;
  /** How long a browser may take to start; default 20 s. */
  readonly startTimeoutMs?: number;
  /** Conversions waiting for a page at most; more are refused (`service_unavailable`). Default 32. */
  readonly maxQueue?: number;
  /**
   * Contexts with a page each that a browser opens ahead of its next conversions, once a
   * conversion is done (a new renderer takes ~100 ms of CPU to start); default 1. Opening
   * them while a page renders was slower on two cores: they take the render's CPU.
   */
  readonly sparePages?: number;
}

/** What the pool reports for metrics. */
export interface ChromiumPoolStats {
  instances: number;
  busy: number;
  queued: number;
  restarts: number;
  renders: number;
  renderSeconds: number;
  blockedRequests: number;
}

/** CDP messages over the browser's pipe: JSON texts, each ended by a NUL byte. */
class PipeTransport implements ConnectionTransport {
  onmessage?: (message: string) => void;
  onclose?: () => void;
  private pending: Buffer[] = [];

  constructor(private readonly proc: SandboxedProcess) {
    const out = proc.child.stdout!;
    out.on('data', (buf: Buffer) => {
      let start = 0;
      for (let end = buf.indexOf(0); end !== -1; end = buf.indexOf(0, start)) {
        this.pending.push(buf.subarray(start, end));
        const message = Buffer.concat(this.pending).toString('utf8');
        this.pending = [];
        this.onmessage?.(message);
        start = end + 1;
      }
      if (start < buf.length) this.pending.push(buf.subarray(start));
    });
    out.on('close', () => this.onclose?.());
    proc.child.stdin!.on('error', () => undefined);
  }

  send(message: string): void {
    const input = this.proc.child.stdin!;
    if (!input.writable) return;
    input.write(message);
    input.write('\0');
  }

  close(): void {
    this.proc.child.stdin?.end();
  }
}

/** A fresh browser context with one page in it, ready for one conversion and then closed. */
export interface FreshPage {
  readonly context: BrowserContext;
  readonly page: Page;
}

/**
 * Opens a context and its page (a new renderer process: the costliest part of a render),
 * with downloads refused and request interception on: no request leaves the page before
 * the conversion's own handler is attached.
 */
async function openFreshPage(browser: Browser): Promise<FreshPage> {
  const context = await browser.createBrowserContext();
  try {
    const page = await context.newPage();
    const cdp = await page.createCDPSession();
    await cdp.send('Browser.setDownloadBehavior', { behavior: 'deny' }).catch(() => undefined);
    await page.setRequestInterception(true);
    return { context, page };
  } catch (e) {
    await context.close().catch(() => undefined);
    throw e;
  }
}

class ChromiumInstance {
  conversions = 0;
  active = 0;
  dead = false;
  /** Contexts and pages opened ahead of the next conversions (never one used before). */
  private spares: Array<Promise<FreshPage | null>> = [];
  private constructor(
    readonly proc: SandboxedProcess,
    readonly browser: Browser,
    readonly dir: string,
    private readonly stderr: () => string,
  ) {}

  static async start(opts: Required<ChromiumPoolOptions>, index: number): Promise<ChromiumInstance> {
    await prepareSandboxRoot(opts.workDir);
    const dir = join(opts.workDir, `cr-${index}-${randomBytes(6).toString('hex')}`);
    await mkdir(dir);
    await ownForSandbox(dir);
    // The shell hands the pipe to Chromium on the descriptors it expects: stdin as 3, stdout as 4.
    const proc = spawnSandboxed('/bin/sh', ['-c', 'exec "$0" "$@" 3<&0 4>&1 </dev/null >&2', CHROMIUM_BIN, ...FLAGS, `--user-data-dir=${dir}/profile`, 'about:blank'], {
      // TMPDIR: the sandbox's own /tmp; Chromium's singleton socket path must stay short (108 bytes).
      cwd: dir, home: dir, env: { TMPDIR: '/tmp' }, stdin: 'pipe', maxMemoryBytes: opts.maxMemoryBytes,
    });
    let tail = '';
    proc.child.stderr?.on('data', (b: Buffer) => {
      tail = (tail + b.toString()).slice(-4000);
    });
    const transport = new PipeTransport(proc);
    let timer: NodeJS.Timeout | undefined;
    try {
      const browser = await Promise.race([
        connect({ transport, defaultViewport: null, protocolTimeout: 60_000 }),
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('did not start in time')), opts.startTimeoutMs))),
        proc.exited.then((e) => Promise.reject(new Error(`exited with ${e.code ?? e.signal}`))),
      ]);
      const instance = new ChromiumInstance(proc, browser, dir, () => tail);
      browser.once('disconnected', () => {
        instance.dead = true;
      });
      void proc.exited.then(() => {
        instance.dead = true;
      });
      return instance;
    } catch (e) {
      proc.kill();
      await proc.exited;
      await removeSandboxTree(dir).catch(() => undefined);
      throw failed('The browser did not start.', `chromium ${index}: ${(e as Error).message}; ${tail.split('\n').filter((l) => !l.includes('dbus')).slice(-5).join(' | ')}`);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The browser's memory: proportional (shared pages once), see treePssBytes. */
  memory(): number {
    return treePssBytes(this.proc.pid);
  }

  /** A fresh context and page: the one opened ahead, or a new one. */
  async freshPage(): Promise<FreshPage> {
    const spare = this.spares.shift();
    return (spare ? await spare : null) ?? openFreshPage(this.browser);
  }

  /** Opens the next conversions' contexts and pages now, off their critical path. */
  prepareSpares(count: number): void {
    while (!this.dead && this.spares.length < count) this.spares.push(openFreshPage(this.browser).catch(() => null));
  }

  lastWords(): string {
    return this.stderr().split('\n').filter((l) => l && !l.includes('dbus')).slice(-3).join(' | ');
  }

  async close(): Promise<void> {
    this.dead = true;
    this.spares = [];
    await Promise.race([this.browser.close().catch(() => undefined), new Promise((r) => setTimeout(r, 2000))]);
    this.proc.kill();
    await this.proc.exited;
    await removeSandboxTree(this.dir).catch(() => undefined);
  }
}

/** How often (in conversions) a browser's proportional memory is read against its mark. */
const MEMORY_CHECK_EVERY = 5;

/** Thrown by a render whose browser died under it: the pool retries once on a new one. */
export class BrowserCrashed extends Error {}

/** The pool: instances started on first use, a queue of conversions waiting for a page. */
export class ChromiumPool {
  private readonly opts: Required<ChromiumPoolOptions>;
  private readonly slots: Array<ChromiumInstance | Promise<ChromiumInstance> | null>;
  private readonly waiting: Array<() => void> = [];
  private closed = false;
  private readonly counters = { restarts: 0, renders: 0, renderSeconds: 0, blockedRequests: 0 };

  constructor(options: ChromiumPoolOptions) {
    this.opts = {
      instances: 1, pagesPerInstance: 2, maxConversionsPerInstance: 200, maxRssBytes: 1.5 * 1024 ** 3,
      maxMemoryBytes: 4 * 1024 ** 3, startTimeoutMs: 20_000, maxQueue: 32, sparePages: 1, ...options,
    };
    this.slots = Array.from({ length: Math.max(1, this.opts.instances) }, () => null);
  }

  stats(): ChromiumPoolStats {
    const live = this.slots.filter((s): s is ChromiumInstance => s instanceof ChromiumInstance && !s.dead);
    return { instances: live.length, busy: live.reduce((n, s) => n + s.active, 0), queued: this.waiting.length, ...this.counters };
  }

  /** Counts requests a page made that were refused (anything but its own files). */
  countBlocked(n: number): void {
    this.counters.blockedRequests += n;
  }

  /**
   * Runs `render` with a browser that has a free page, in order of arrival; a browser that
   * crashes under it is replaced and `render` runs once more on the new one. Each call of
   * `render` is one attempt: a deadline it sets starts with it, not before the restart.
   */
  async run<T>(render: (fresh: FreshPage) => Promise<T>, signal?: AbortSignal): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const instance = await this.acquire(signal);
      const started = performance.now();
      let fresh: FreshPage | undefined;
      try {
        fresh = await instance.freshPage();
        const result = await render(fresh);
        this.counters.renders++;
        this.counters.renderSeconds += (performance.now() - started) / 1000;
        return result;
      } catch (e) {
        if (!instance.dead || signal?.aborted) throw e;
        if (attempt >= 1) throw new ConversionError('conversion_failed', 'The browser crashed while rendering the page.', { detail: `chromium crashed twice: ${instance.lastWords()}` });
      } finally {
        // The context (its cookies, storage, renderer) goes; the next one is opened ahead.
        const used = fresh;
        void used?.context.close().catch(() => undefined);
        await this.release(instance);
        instance.prepareSpares(this.opts.sparePages);
      }
    }
  }

  private async acquire(signal?: AbortSignal): Promise<ChromiumInstance> {
    for (;;) {
      if (this.closed) throw failed('The browser pool is closed.');
      signal?.throwIfAborted();
      for (let i = 0; i < this.slots.length; i++) {
        const slot = this.slots[i];
        if (slot instanceof ChromiumInstance) {
          if (slot.dead && slot.active === 0) {
            this.slots[i] = null;
            void slot.close();
            this.counters.restarts++;
          } else if (!slot.dead && slot.active < this.opts.pagesPerInstance && slot.conversions < this.opts.maxConversionsPerInstance) {
            slot.active++;
            slot.conversions++;
            return slot;
          }
        }
      }
      const free = this.slots.findIndex((s) => s === null);
      if (free !== -1) {
        const starting = ChromiumInstance.start(this.opts, free);
        this.slots[free] = starting;
        try {
          this.slots[free] = await starting;
        } catch (e) {
          this.slots[free] = null;
          throw e;
        }
        continue;
      }
      if (this.waiting.length >= this.opts.maxQueue) throw new ConversionError('service_unavailable', 'The browser queue is full; retry shortly.');
      await new Promise<void>((resolve, reject) => {
        const wake = () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        };
        const onAbort = () => {
          const i = this.waiting.indexOf(wake);
          if (i !== -1) this.waiting.splice(i, 1);
          reject(signal!.reason as Error);
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        this.waiting.push(wake);
      });
    }
  }

  private async release(instance: ChromiumInstance): Promise<void> {
    instance.active--;
    // The memory mark is read every MEMORY_CHECK_EVERY conversions: reading the tree's PSS
    // from /proc takes about 19 ms of the event loop with a warm browser (bench:html).
    const worn = instance.conversions >= this.opts.maxConversionsPerInstance || (instance.conversions % MEMORY_CHECK_EVERY === 0 && instance.memory() > this.opts.maxRssBytes);
    if ((instance.dead || worn) && instance.active === 0) {
      const i = this.slots.indexOf(instance);
      if (i !== -1) this.slots[i] = null;
      this.counters.restarts++;
      await instance.close();
    }
    this.waiting.shift()?.();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const wake of this.waiting.splice(0)) wake();
    const instances = await Promise.all(this.slots.map((s) => (s instanceof Promise ? s.catch(() => null) : s)));
    this.slots.fill(null);
    await Promise.all(instances.map((s) => s?.close()));
  }
}
