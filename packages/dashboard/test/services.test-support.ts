import { spawnSync } from 'node:child_process';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findProjectRoot } from '@mailconv/platform';
import { createTestDatabase, freePort, testBackends } from '@mailconv/platform/testing';
import { buildApp as buildEmail, loadEmailConfig } from '@mailconv/email-api';
import { buildApp as buildConvert, loadConvertConfig } from '@mailconv/convert-api';
import { useRig, type RigHandle } from '@mailconv/test-rig';

/** Helpers of the browser suite (not a test file: importing it registers no tests). */

export const ROOT = findProjectRoot();
export const FIXTURES = join(ROOT, 'packages', 'converter', 'test', 'fixtures');

export interface RunningService {
  url: string;
  env: Record<string, string>;
  close(): Promise<void>;
}

function admin(service: 'email-api' | 'convert-api', env: Record<string, string>, args: string[], input?: string): string {
  const res = spawnSync(process.execPath, [join(ROOT, 'services', service, 'dist', 'admin.js'), ...args], { env: { ...process.env, ...env }, encoding: 'utf8', input });
  if (res.status !== 0) throw new Error(`admin ${args[0]} failed: ${res.stderr}`);
  return res.stdout;
}

/**
 * An account with a dashboard password, made with the service's admin CLI as an operator
 * would (`create-account`, then `set-password --password-stdin`).
 */
export function createUser(service: 'email-api' | 'convert-api', env: Record<string, string>, email: string, plan: string, password: string): void {
  admin(service, env, ['create-account', '--email', email, '--plan', plan, '--json']);
  admin(service, env, ['set-password', '--email', email, '--password-stdin'], `${password}\n`);
}

/** The email service on 127.0.0.1, verifying through the loopback rig, webhooks allowed to loopback over http. */
/** `extra`: settings that win, made from the rig (e.g. the SMTP self-check's probe host). */
export async function startEmailService(extra: (rig: RigHandle) => Record<string, string> = () => ({})): Promise<RunningService & { rig: RigHandle }> {
  const rig = await useRig();
  const db = await createTestDatabase(testBackends()[0]!);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env = {
    EMAIL_DATABASE_URL: db.url,
    EMAIL_LOG_LEVEL: 'silent',
    EMAIL_DNS_SERVERS: rig.dnsServer,
    EMAIL_DNS_TIMEOUT_MS: '300',
    EMAIL_PUBLIC_BASE_URL: url,
    EMAIL_JOBS_CHUNK_SIZE: '50',
    EMAIL_JOBS_POLL_MS: '20',
    EMAIL_SMTP_HELO: 'probe.mailconv.test',
    EMAIL_SMTP_FROM: 'probe@mailconv.test',
    EMAIL_SMTP_ALLOW_PRIVATE: 'true',
    EMAIL_SMTP_RESTRICT_TO: '127.0.0.0/8',
    EMAIL_SMTP_PORT: String(rig.smtpPort),
    EMAIL_WEBHOOKS_RESTRICT_TO: '127.0.0.0/8,::1/128',
    EMAIL_WEBHOOKS_ALLOW_INSECURE: 'true',
    ...extra(rig),
  };
  const app = await buildEmail(loadEmailConfig(env), { webhookDnsServers: [rig.dnsServer] });
  await app.listen({ host: '127.0.0.1', port });
  return {
    url,
    env,
    rig,
    close: async () => {
      await app.close();
      await db.drop();
      await rig.release();
    },
  };
}

/** The conversion service on 127.0.0.1 with its real engines; `extra` settings win (`CONVERT_ROLE: 'api'`: no converter runs). */
export async function startConvertService(extra: Record<string, string> = {}): Promise<RunningService> {
  const db = await createTestDatabase(testBackends()[0]!);
  const work = await mkdtemp(join(tmpdir(), 'dashboard-convert-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // Web pages to convert come from a server of the test's own on 127.0.0.2, the one non-public
  // address admitted; every fetch is fenced to loopback.
  const env = {
    CONVERT_DATABASE_URL: db.url,
    CONVERT_LOG_LEVEL: 'silent',
    CONVERT_STORAGE_DIR: join(work, 'storage'),
    CONVERT_PUBLIC_BASE_URL: url,
    CONVERT_URL_ALLOW: '127.0.0.2/32',
    CONVERT_URL_RESTRICT_TO: '127.0.0.0/8,::1/128',
    // Webhooks to the test's plain-HTTP receiver on 127.0.0.1, and nowhere else.
    CONVERT_WEBHOOKS_ALLOW_INSECURE: 'true',
    CONVERT_WEBHOOKS_RESTRICT_TO: '127.0.0.0/8,::1/128',
    ...extra,
  };
  await writeFile(join(work, '.keep'), '');
  const app = await buildConvert(loadConvertConfig(env));
  await app.listen({ host: '127.0.0.1', port });
  return {
    url,
    env,
    close: async () => {
      await app.close();
      await db.drop();
      await rm(work, { recursive: true, force: true });
    },
  };
}

/**
 * A conversion worker on the database and storage of a service started by
 * {@link startConvertService} (`CONVERT_ROLE=worker`, in this process, not listening): it
 * claims the conversions that service queued.
 */
export async function startConvertWorker(env: Record<string, string>): Promise<{ close(): Promise<void> }> {
  const app = await buildConvert(loadConvertConfig({ ...env, CONVERT_ROLE: 'worker' }));
  await app.ready();
  return { close: () => app.close() };
}

export interface Hit {
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A plain HTTP webhook receiver on 127.0.0.1 that answers 204 and keeps every request. */
export async function startReceiver(): Promise<{ port: number; hits: Hit[]; waitFor(n: number): Promise<Hit[]>; close(): Promise<void> }> {
  const hits: Hit[] = [];
  const waiters = new Set<() => void>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      hits.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(204).end();
      for (const w of [...waiters]) {
        waiters.delete(w);
        w();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as AddressInfo).port,
    hits,
    async waitFor(n) {
      while (hits.length < n) await new Promise<void>((r) => waiters.add(r));
      return hits;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
