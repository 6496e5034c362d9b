import type { FastifyInstance } from 'fastify';
import type { Migration } from 'kysely';
import type { BasePlan, PlanCatalog } from '../accounts/plans.js';
import { runAdminCli } from '../admin/admin-cli.js';
import { ConfigError, redactUrlCredentials, type DatabaseTarget } from '../config/settings.js';
import { serve } from '../http/serve.js';
import { readSecretFromStdin } from './read-secret.js';
import { openServiceCore } from './service-core.js';

function fail(name: string, err: unknown): never {
  const message = err instanceof ConfigError ? err.message : `cannot start: ${(err as Error).message ?? String(err)}`;
  process.stderr.write(`${name}: ${redactUrlCredentials(message)}\n`);
  process.exit(1);
}

/**
 * A service's `server.ts`: read the settings (every problem reported, exit 1), build the
 * app, listen, and log one `ready` line with the public URL. SIGTERM/SIGINT shut it down
 * gracefully.
 */
export async function runServer<C extends { host: string; port: number; publicBaseUrl: string }>(
  name: string,
  load: () => C,
  build: (config: C) => Promise<FastifyInstance>,
): Promise<void> {
  let config: C;
  let app: FastifyInstance;
  try {
    config = load();
    app = await build(config);
  } catch (err) {
    fail(name, err);
  }
  try {
    await serve(app, { host: config.host, port: config.port });
  } catch (err) {
    await app.close().catch(() => undefined);
    fail(name, err);
  }
  app.log.info({ event: 'ready', service: name, url: config.publicBaseUrl }, `${name} ready at ${config.publicBaseUrl}`);
}

/** A service's `admin.ts`: the admin CLI over the service's own database. */
export async function runAdminMain(
  service: string,
  load: () => { database: DatabaseTarget; migrations: Record<string, Migration>; keyPrefix: string; plans: PlanCatalog<BasePlan> },
  moreUsage?: string,
): Promise<void> {
  try {
    process.exitCode = await runAdminCli(
      process.argv.slice(2),
      {
        service,
        ...(moreUsage ? { moreUsage } : {}),
        open: async () => {
          const options = load();
          const core = await openServiceCore({ database: options.database, migrations: options.migrations, keyPrefix: options.keyPrefix });
          return { accounts: core.accounts, plans: options.plans, close: () => core.close() };
        },
      },
      { out: (line) => process.stdout.write(`${line}\n`), err: (line) => process.stderr.write(`${line}\n`), readSecret: readSecretFromStdin },
    );
  } catch (err) {
    process.stderr.write(`${service}: ${redactUrlCredentials(err instanceof ConfigError ? err.message : (err as Error).message)}\n`);
    process.exitCode = 1;
  }
}
