import { ConfigError, redactUrlCredentials } from '@mailconv/platform';
import { formatSelfCheck } from '@mailconv/verifier';
import { engineFromConfig } from './composition.js';
import { loadEmailConfig } from './config.js';
import { selfCheckOnce } from './smtp-self-check.js';

/**
 * `npm run -s admin -- email smtp-check [--json]` (issue 23): the SMTP self-check once, with
 * the service's own settings, printed for a person (or as JSON). Exit 0 when an egress
 * reaches port 25 of the probe host or no probe host is configured, 1 when none does,
 * 2 when SMTP probing is not configured or the settings are wrong.
 */
/** `smtp-check` in the admin CLI's usage text. */
export const SMTP_CHECK_USAGE = `  smtp-check [--json]
      The SMTP self-check (no database needed): per egress, port 25 of EMAIL_SMTP_PROBE_HOST,
      STARTTLS, FCrDNS of the HELO name and the EMAIL_SMTP_BLOCKLISTS. Exit 1 when no egress
      reaches port 25.`;

export async function runSmtpCheckCommand(args: readonly string[], env: Readonly<Record<string, string | undefined>>, io: { out(text: string): void; err(text: string): void }): Promise<number> {
  const unknown = args.filter((a) => a !== '--json');
  if (unknown.length) {
    io.err(`smtp-check: unknown option ${unknown[0]}; usage: npm run -s admin -- email smtp-check [--json]`);
    return 2;
  }
  let config;
  try {
    config = loadEmailConfig(env);
  } catch (err) {
    io.err(`email: ${redactUrlCredentials(err instanceof ConfigError ? err.message : (err as Error).message)}`);
    return 2;
  }
  if (!config.smtp) {
    io.err('smtp-check: SMTP probing is not configured (set EMAIL_SMTP_HELO and EMAIL_SMTP_FROM)');
    return 2;
  }
  const engine = engineFromConfig(config);
  const result = await selfCheckOnce(config.smtp, engine);
  io.out(args.includes('--json') ? JSON.stringify(result, null, 2) : formatSelfCheck(result));
  return result.available === false ? 1 : 0;
}
