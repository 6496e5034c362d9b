// First: on a Node older than 22.12 this exits with one line before any native addon loads (issue 44).
import '@mailconv/platform/node-guard';
import { runAdminMain } from '@mailconv/platform';
import { EMAIL_KEY_PREFIX } from './key-prefix.js';
import { loadEmailConfig } from './config.js';
import { EMAIL_MIGRATIONS } from './db/migrations.js';
import { emailPlans } from './plans.js';
import { runSmtpCheckCommand, SMTP_CHECK_USAGE } from './smtp-check.command.js';

if (process.argv[2] === 'smtp-check') {
  process.exitCode = await runSmtpCheckCommand(process.argv.slice(3), process.env, { out: (t) => process.stdout.write(`${t}\n`), err: (t) => process.stderr.write(`${t}\n`) });
} else {
  await runAdminMain('email', () => {
    const config = loadEmailConfig(process.env);
    return { database: config.database, migrations: EMAIL_MIGRATIONS, keyPrefix: EMAIL_KEY_PREFIX, plans: emailPlans(config.plansFile) };
  }, SMTP_CHECK_USAGE);
}
