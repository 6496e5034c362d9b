import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';

// A small, bounded load generator (issue #15): several kinds of request mixed by weight over
// keep-alive connections, with latency percentiles, status counts and errors per kind. Used
// by the load test and by `npm run bench:load`. Loopback only: it refuses any other host.

/** One request to send. */
export interface LoadRequest {
  method: string;
  /** Path and query, e.g. `/api/v1/jobs/job_…`. */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/** A kind of request: how to make the next one and which answers count as success. */
export interface LoadKind {
  name: string;
  weight: number;
  /** The next request, or undefined when this kind has nothing to send now (another kind is picked). */
  next(): LoadRequest | undefined;
  /** Statuses that are success for this kind (429 is counted apart, as documented refusals). */
  expected: readonly number[];
  /** Called with each answer that had an expected status (e.g. to remember a job id). */
  onAnswer?(status: number, body: string): void;
}

/** Kinds sent to one service over `connections` concurrent keep-alive connections. */
export interface LoadLane {
  baseUrl: string;
  connections: number;
  kinds: LoadKind[];
}

/** What one kind did during the run. Latencies in milliseconds. */
export interface KindFigures {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  max: number;
  statuses: Record<string, number>;
  /** Documented refusals (429 with Retry-After). */
  limited: number;
  /** Network errors and time-outs. */
  errors: number;
  /** Answers with a status neither expected nor a documented 429. */
  unexpected: number;
  /** The first unexpected answer or error, for the report. */
  firstProblem?: string;
}

export interface LoadResult {
  durationMs: number;
  kinds: Record<string, KindFigures>;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|\[::1\]|localhost)$/;

/** The value at quantile `q` of sorted `values`. */
function quantile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** Percentiles from at most `cap` samples per kind (reservoir sampling past the cap). */
class Samples {
  private readonly values: Float64Array;
  private seen = 0;
  constructor(private readonly cap: number) {
    this.values = new Float64Array(cap);
  }
  add(ms: number): void {
    if (this.seen < this.cap) this.values[this.seen] = ms;
    else {
      const i = Math.floor(Math.random() * (this.seen + 1));
      if (i < this.cap) this.values[i] = ms;
    }
    this.seen++;
  }
  sorted(): Float64Array {
    return this.values.slice(0, Math.min(this.seen, this.cap)).sort();
  }
}

/**
 * Sends the lanes' requests for `durationMs` (each connection sends one request at a time,
 * picking a kind by weight), waits for those in flight, and returns figures per kind.
 * Bounded: each request times out after `requestTimeoutMs`, bodies kept for `onAnswer` are
 * cut at 1 MiB, and at most `maxSamples` latencies are kept per kind.
 */
export async function runMixedLoad(lanes: readonly LoadLane[], options: { durationMs: number; requestTimeoutMs: number; maxSamples?: number }): Promise<LoadResult> {
  const figures = new Map<string, KindFigures & { samples: Samples }>();
  for (const lane of lanes) {
    const host = new URL(lane.baseUrl).hostname;
    if (!LOOPBACK.test(host)) throw new Error(`load generator: ${lane.baseUrl} is not a loopback address`);
    for (const k of lane.kinds) {
      figures.set(k.name, { requests: 0, rps: 0, p50: 0, p99: 0, max: 0, statuses: {}, limited: 0, errors: 0, unexpected: 0, samples: new Samples(options.maxSamples ?? 200_000) });
    }
  }
  const started = performance.now();
  const deadline = started + options.durationMs;

  const send = (agent: Agent, base: URL, req: LoadRequest) =>
    new Promise<{ status: number; body: string; retryAfter: boolean }>((resolve, reject) => {
      const body = req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body);
      const r = request(
        { host: base.hostname, port: base.port, method: req.method, path: req.path, agent, headers: { ...req.headers, ...(body ? { 'content-length': String(body.length) } : {}) }, timeout: options.requestTimeoutMs },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size <= 1024 * 1024) chunks.push(c);
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), retryAfter: res.headers['retry-after'] !== undefined }));
          res.on('error', reject);
        },
      );
      r.on('timeout', () => r.destroy(new Error(`timed out after ${options.requestTimeoutMs} ms`)));
      r.on('error', reject);
      r.end(body);
    });

  const connection = async (lane: LoadLane, agent: Agent, base: URL) => {
    const total = lane.kinds.reduce((s, k) => s + k.weight, 0);
    while (performance.now() < deadline) {
      // Pick by weight; a kind with nothing to send yields to the others.
      let roll = Math.random() * total;
      let kind = lane.kinds[lane.kinds.length - 1]!;
      for (const k of lane.kinds) {
        roll -= k.weight;
        if (roll < 0) {
          kind = k;
          break;
        }
      }
      let req = kind.next();
      if (!req) {
        for (const k of lane.kinds) {
          req = k.next();
          if (req) {
            kind = k;
            break;
          }
        }
      }
      if (!req) {
        await new Promise((r) => setTimeout(r, 20));
        continue;
      }
      const which = kind;
      const f = figures.get(which.name)!;
      const t0 = performance.now();
      try {
        const res = await send(agent, base, req);
        const ms = performance.now() - t0;
        f.requests++;
        f.samples.add(ms);
        f.statuses[res.status] = (f.statuses[res.status] ?? 0) + 1;
        if (which.expected.includes(res.status)) which.onAnswer?.(res.status, res.body);
        else if (res.status === 429 && res.retryAfter) f.limited++;
        else {
          f.unexpected++;
          f.firstProblem ??= `${req.method} ${req.path.slice(0, 120)} → ${res.status} ${res.body.slice(0, 300)}`;
        }
      } catch (err) {
        f.requests++;
        f.errors++;
        f.firstProblem ??= `${req.method} ${req.path.slice(0, 120)}: ${(err as Error).message}`;
      }
    }
  };

  const agents: Agent[] = [];
  const loops: Promise<void>[] = [];
  for (const lane of lanes) {
    const agent = new Agent({ keepAlive: true, maxSockets: lane.connections });
    agents.push(agent);
    const base = new URL(lane.baseUrl);
    for (let i = 0; i < lane.connections; i++) loops.push(connection(lane, agent, base));
  }
  await Promise.all(loops);
  for (const a of agents) a.destroy();
  const durationMs = performance.now() - started;
  const kinds: Record<string, KindFigures> = {};
  for (const [name, { samples, ...f }] of figures) {
    const sorted = samples.sorted();
    kinds[name] = { ...f, rps: Math.round((f.requests / durationMs) * 1000 * 10) / 10, p50: round(quantile(sorted, 0.5)), p99: round(quantile(sorted, 0.99)), max: round(sorted.length ? sorted[sorted.length - 1]! : 0) };
  }
  return { durationMs: Math.round(durationMs), kinds };
}

const round = (ms: number) => Math.round(ms * 10) / 10;

/** The figures as a fixed-width table, one line per kind. */
export function formatLoadTable(result: LoadResult): string {
  const head = `${'kind'.padEnd(22)}${'requests'.padStart(9)}${'req/s'.padStart(9)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'max ms'.padStart(9)}${'429'.padStart(6)}${'errors'.padStart(8)}${'unexpected'.padStart(11)}  statuses`;
  const lines = Object.entries(result.kinds).map(
    ([name, f]) =>
      `${name.padEnd(22)}${String(f.requests).padStart(9)}${String(f.rps).padStart(9)}${String(f.p50).padStart(9)}${String(f.p99).padStart(9)}${String(f.max).padStart(9)}${String(f.limited).padStart(6)}${String(f.errors).padStart(8)}${String(f.unexpected).padStart(11)}  ${JSON.stringify(f.statuses)}`,
  );
  return [head, ...lines].join('\n');
}
