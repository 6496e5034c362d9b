import { z } from 'zod';
import { commonConfig, commonSettings, findProjectRoot, parseSettings, type CommonServiceConfig } from '@mailconv/platform';

const DEFAULTS = { port: 8080, dataDir: 'data/email', databaseFile: 'email.db' };

/**
 * Every setting of the email service, each `EMAIL_…` (documented with its default in
 * `.env.example`). The names fixed by email-decisions.md are used as written.
 */
const EmailSettings = z.object({
  ...commonSettings('EMAIL', DEFAULTS),
});

export type EmailConfig = CommonServiceConfig;

/** Reads the email service's settings from `env`; throws ConfigError listing every problem. */
export function loadEmailConfig(env: Readonly<Record<string, string | undefined>> = process.env, root = findProjectRoot()): EmailConfig {
  const parsed = parseSettings(EmailSettings, env) as Record<string, unknown>;
  return { ...commonConfig('EMAIL', parsed, DEFAULTS, root) };
}
