import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findProjectRoot } from '@mailconv/platform';
import { createTestDatabase, freePort, testBackends } from '@mailconv/platform/testing';
import { buildApp as buildEmail, loadEmailConfig } from '@mailconv/email-api';
import { buildApp as buildConvert, loadConvertConfig } from '@mailconv/convert-api';
import { useRig, type RigHandle } from '@mailconv/test-rig';

/** Helpers of the SDK and CLI suites (not a test file: importing it registers no tests). */

export const ROOT = findProjectRoot();

export interface RunningService {
  url: string;
  /** Env of the service (for its admin CLI). */
  env: Record<string, string>;
  close(): Promise<void>;
}

/** Creates an account with the service's own admin CLI (as an operator would) and returns its API key. */
export function createAccount(service: 'email-api' | 'convert-api', env: Record<string, string>, email: string, plan: string): string {
  const res = spawnSync(process.execPath, [join(ROOT, 'services', service, 'dist', 'admin.js'), 'create-account', '--email', email, '--plan', plan, '--json'], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  if (res.status !== 0) throw new Error(`admin create-account failed: ${res.stderr}`);
  return (JSON.parse(res.stdout.trim().split('\n').pop()!) as { api_key: string }).api_key;
}

/**
 * The email service listening on 127.0.0.1 (first test backend), verifying through the
 * loopback DNS/SMTP rig, with small job chunks so a few dozen addresses make a multi-chunk job.
 */
export async function startEmailService(): Promise<RunningService & { rig: RigHandle }> {
  const rig = await useRig();
  const db = await createTestDatabase(testBackends()[0]!);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env = {
    EMAIL_DATABASE_URL: db.url,
    EMAIL_LOG_LEVEL: 'silent',
    EMAIL_DNS_SERVERS: rig.dnsServer,
    EMAIL_DNS_TIMEOUT_MS: '150',
    EMAIL_PUBLIC_BASE_URL: url,
    EMAIL_JOBS_CHUNK_SIZE: '10',
    EMAIL_JOBS_POLL_MS: '20',
    EMAIL_SMTP_HELO: 'probe.mailconv.test',
    EMAIL_SMTP_FROM: 'probe@mailconv.test',
    EMAIL_SMTP_ALLOW_PRIVATE: 'true',
    EMAIL_SMTP_RESTRICT_TO: '127.0.0.0/8',
    EMAIL_SMTP_PORT: String(rig.smtpPort),
    // Webhook endpoints on loopback (http allowed, as in development); deliveries reach loopback only.
    EMAIL_WEBHOOKS_RESTRICT_TO: '127.0.0.0/8,::1/128',
    EMAIL_WEBHOOKS_ALLOW_INSECURE: 'true',
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

/**
 * The conversion service listening on 127.0.0.1 with its real engines; plan `tiny` allows 3
 * requests a minute. `extraEnv` adds or overrides settings.
 */
export async function startConvertService(extraEnv: Record<string, string> = {}): Promise<RunningService> {
  const db = await createTestDatabase(testBackends()[0]!);
  const work = await mkdtemp(join(tmpdir(), 'client-convert-'));
  const plansFile = join(work, 'plans.json');
  await writeFile(plansFile, JSON.stringify({ plans: { api: { rateLimitRpm: 10_000 }, tiny: { name: 'Tiny', monthlyQuota: 10, maxFileBytes: 1_000_000, rateLimitRpm: 3, maxConcurrentJobs: 1 } } }));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env = {
    CONVERT_DATABASE_URL: db.url,
    CONVERT_LOG_LEVEL: 'silent',
    CONVERT_STORAGE_DIR: join(work, 'storage'),
    // Its own data folder (the secrets key sealing export credentials), not the checkout's.
    CONVERT_DATA_DIR: join(work, 'data'),
    CONVERT_PLANS_FILE: plansFile,
    CONVERT_PUBLIC_BASE_URL: url,
    // URL imports (--from-url): the test's page server on 127.0.0.2 is admitted; every fetch stays fenced to loopback.
    CONVERT_URL_ALLOW: '127.0.0.2/32',
    CONVERT_URL_RESTRICT_TO: '127.0.0.0/8,::1/128',
    ...extraEnv,
  };
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

export const FIXTURES = join(ROOT, 'packages', 'converter', 'test', 'fixtures');
