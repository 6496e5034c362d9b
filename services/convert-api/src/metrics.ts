import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { ServiceCore } from '@mailconv/platform';
import type { ChromiumPoolStats, PoolStats, SecurityEvent } from '@mailconv/converter';
import type { ConvertTables } from './db/schema.js';

/** Conversion durations in seconds: 50 ms to 10 min (the default engine time-out is 120 s a step). */
const DURATION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

/**
 * The conversion service's own metrics on the app's registry (README, "Metrics"):
 * conversions this process ran, by engine and outcome, with their durations; this
 * process's LibreOffice pool (restarts, documents waiting for an instance) read from the
 * pool's own counters (`pool`: null when the engine is absent); and the queue read from
 * the database at each scrape (all processes together).
 */
export function registerConvertMetrics(
  registry: Registry,
  core: ServiceCore<ConvertTables>,
  pool: PoolStats | null,
  browsers: { stats(): ChromiumPoolStats } | null = null,
): { onFinished: (f: { engine: string; outcome: string; seconds: number }) => void; onSecurityEvent: (e: SecurityEvent) => void } {
  const conversions = new Counter({ name: 'convert_conversions_total', help: 'Conversions this process finished, by engine(s) (`+`-joined, none when none ran) and outcome (completed or the error code).', labelNames: ['engine', 'outcome'], registers: [registry] });
  const duration = new Histogram({ name: 'convert_conversion_duration_seconds', help: 'Time the engines took per conversion, by engine(s) and outcome.', labelNames: ['engine', 'outcome'], buckets: DURATION_BUCKETS, registers: [registry] });
  new Gauge({
    name: 'convert_queue_depth',
    help: 'Conversions not finished, all processes together, by status (queued: waiting for a worker; processing: running).',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      const rows = await core.database.db
        .selectFrom('conversions')
        .select((eb) => ['status', eb.fn.countAll<number>().as('n')])
        .where('status', 'in', ['queued', 'processing'])
        .groupBy('status')
        .execute();
      for (const status of ['queued', 'processing']) this.set({ status }, Number(rows.find((r) => r.status === status)?.n ?? 0));
    },
  });
  // The pool may be lent by an earlier app (tests): count from what it had done when this registry began.
  let restartsSeen = pool?.restarts ?? 0;
  new Counter({
    name: 'convert_libreoffice_restarts_total',
    help: 'LibreOffice instances of this process restarted after a crash, a hang, a time-out or a failed recycle.',
    registers: [registry],
    collect() {
      const now = pool?.restarts ?? 0;
      if (now > restartsSeen) this.inc(now - restartsSeen);
      restartsSeen = now;
    },
  });
  new Gauge({
    name: 'convert_libreoffice_queue_depth',
    help: 'Office documents of this process waiting for a free LibreOffice instance (past 16 waiting, more are refused until one frees).',
    registers: [registry],
    collect() {
      this.set(pool?.queued ?? 0);
    },
  });
  registerChromiumMetrics(registry, browsers);
  const security = new Counter({
    name: 'convert_security_events_total',
    help: 'Engine files this process refused to read (symlink, hardlink, special_file, escape, foreign_owner, swapped), by engine: each is a possible exploit and failed its conversion.',
    labelNames: ['kind', 'engine'],
    registers: [registry],
  });
  return {
    onSecurityEvent: ({ kind, engine }) => {
      security.inc({ kind, engine });
    },
    onFinished: ({ engine, outcome, seconds }) => {
      conversions.inc({ engine, outcome });
      duration.observe({ engine, outcome }, seconds);
    },
  };
}

/**
 * The browser pool of HTML rendering (issue 22): browsers running, pages rendering, pages
 * waiting, browsers replaced (crashed, worn out, over the memory mark), renders and their
 * time, and requests of pages that were refused (anything but the page's own file).
 */
function registerChromiumMetrics(registry: Registry, browsers: { stats(): ChromiumPoolStats } | null): void {
  const read = () => browsers?.stats() ?? { instances: 0, busy: 0, queued: 0, restarts: 0, renders: 0, renderSeconds: 0, blockedRequests: 0 };
  const gauges: Array<[string, string, keyof ChromiumPoolStats]> = [
    ['convert_chromium_instances', 'Browsers of this process\'s Chromium pool that are running.', 'instances'],
    ['convert_chromium_busy', 'Pages this process\'s browsers are rendering now.', 'busy'],
    ['convert_chromium_queue_depth', 'Conversions of this process waiting for a free browser page.', 'queued'],
  ];
  for (const [name, help, key] of gauges) {
    new Gauge({ name, help, registers: [registry], collect() { this.set(read()[key]); } });
  }
  const counters: Array<[string, string, keyof ChromiumPoolStats]> = [
    ['convert_chromium_restarts_total', 'Browsers of this process replaced: crashed, worn out (conversions per browser) or over the memory mark.', 'restarts'],
    ['convert_chromium_renders_total', 'Pages this process\'s browsers rendered.', 'renders'],
    ['convert_chromium_render_seconds_total', 'Time this process\'s browsers spent rendering pages.', 'renderSeconds'],
    ['convert_chromium_blocked_requests_total', 'Requests of rendered pages that were refused (any URL but the page\'s own file): a page trying to reach out.', 'blockedRequests'],
  ];
  for (const [name, help, key] of counters) {
    // The pool may be lent by an earlier app (tests): count from what it had done when this registry began.
    let seen = read()[key];
    new Counter({ name, help, registers: [registry], collect() { const now = read()[key]; if (now > seen) this.inc(now - seen); seen = now; } });
  }
}
