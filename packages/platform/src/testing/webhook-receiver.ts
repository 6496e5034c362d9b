import { execFileSync } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A request the receiver got, as it came off the wire. */
export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** performance.now() when the body had arrived. */
  at: number;
}

/** What the receiver does with a request: answer with a status (and headers), or never answer. */
export type Behaviour = number | 'hang' | { status: number; headers: Record<string, string> };

/**
 * Checks a delivery's signature the way an independent receiver would: HMAC-SHA256 of the
 * raw body with node:crypto, compared in constant time (not the project's helper).
 */
export function signatureValid(r: Received, secret: string): boolean {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(r.body).digest('hex')}`);
  const given = Buffer.from(String(r.headers['x-service-signature'] ?? ''));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * A real HTTPS webhook receiver on 127.0.0.1 with a certificate from a throw-away test CA
 * made with openssl (valid for 127.0.0.1 and hooks.example.test). Each path answers as
 * `behave` says (204 by default), per request number, and every request is kept.
 */
export class TestReceiver {
  readonly requests: Received[] = [];
  private readonly rules = new Map<string, (n: number, r: Received) => Behaviour>();
  private readonly waiters = new Set<() => void>();

  private constructor(
    private readonly server: Server,
    private readonly dir: string,
    readonly port: number,
    /** The CA certificate (PEM) and a file holding it, for `EMAIL_WEBHOOKS_CA_FILE`. */
    readonly ca: Buffer,
    readonly caFile: string,
  ) {}

  static async start(): Promise<TestReceiver> {
    const dir = mkdtempSync(join(tmpdir(), 'webhook-ca-'));
    const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
    ssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '1', '-subj', '/CN=mailconv test CA');
    ssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'srv.key', '-out', 'srv.csr', '-subj', '/CN=hooks.example.test');
    writeFileSync(join(dir, 'ext'), 'subjectAltName=DNS:hooks.example.test,IP:127.0.0.1\n');
    ssl('x509', '-req', '-in', 'srv.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'srv.crt', '-days', '1', '-extfile', 'ext');
    const ref: { self?: TestReceiver } = {};
    const server = createServer({ key: readFileSync(join(dir, 'srv.key')), cert: readFileSync(join(dir, 'srv.crt')) }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => ref.self!.handle({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks), at: performance.now() }, res));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    ref.self = new TestReceiver(server, dir, (server.address() as AddressInfo).port, readFileSync(join(dir, 'ca.crt')), join(dir, 'ca.crt'));
    return ref.self;
  }

  /** `https://127.0.0.1:<port><path>`. */
  url(path: string): string {
    return `https://127.0.0.1:${this.port}${path}`;
  }

  /** How `path` answers its n-th request (1-based). */
  behave(path: string, rule: (n: number, r: Received) => Behaviour): void {
    this.rules.set(path, rule);
  }

  /** Requests to `path` so far. */
  at(path: string): Received[] {
    return this.requests.filter((r) => r.path === path);
  }

  /** Resolves with the requests to `path` once there are at least `count`; the test's own time-out bounds it. */
  async waitFor(path: string, count: number): Promise<Received[]> {
    while (this.at(path).length < count) await new Promise<void>((resolve) => this.waiters.add(resolve));
    return this.at(path);
  }

  private handle(r: Received, res: ServerResponse): void {
    this.requests.push(r);
    const behaviour = (this.rules.get(r.path) ?? (() => 204))(this.at(r.path).length, r);
    if (typeof behaviour === 'number') res.writeHead(behaviour).end(behaviour === 204 ? undefined : `status ${behaviour}`);
    else if (behaviour !== 'hang') res.writeHead(behaviour.status, behaviour.headers).end();
    for (const wake of [...this.waiters]) {
      this.waiters.delete(wake);
      wake();
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
