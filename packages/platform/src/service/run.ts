import { setFlagsFromString } from 'node:v8';
import type { FastifyInstance } from 'fastify';
import type { Migration } from 'kysely';
import type { BasePlan, PlanCatalog } from '../accounts/plans.js';
import { runAdminCli } from '../admin/admin-cli.js';
import { ConfigError, redactUrlCredentials, type DatabaseTarget } from '../config/settings.js';
import { serve } from '../http/serve.js';
import { readSecretFromStdin } from './read-secret.js';
import { openServiceCore } from './service-core.js';

/**
 * Counts Buffer memory (every socket read of a request body is one) into V8's global heap
 * limit instead of a fixed external-memory step. With the fixed step V8 starts a full
 * mark-compact after every ~64 MB of Buffers, however short-lived: a 2 GB upload cost the
 * conversion service 39–47 full collections of its ~200 MB heap (3–3.5 s of GC threads, a
 * third of the upload's CPU; issue 24's profile). With the global limit the young
 * generation frees them: no full collection during the upload. The price: the Buffers
 * wait for a scavenge, so the process holds ~150 MB more during a long upload. Called
 * by the conversion service's processes (2 GB uploads), before anything else.
 */
export function tuneGcForStreamedBodies(): void {
  setFlagsFromString('--external-memory-accounted-in-global-limit');
}

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
