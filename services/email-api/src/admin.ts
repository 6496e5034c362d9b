import { runAdminMain } from '@mailconv/platform';
import { EMAIL_KEY_PREFIX } from './key-prefix.js';
import { loadEmailConfig } from './config.js';
import { EMAIL_MIGRATIONS } from './db/migrations.js';
import { emailPlans } from './plans.js';

await runAdminMain('email', () => {
  const config = loadEmailConfig(process.env);
  return { database: config.database, migrations: EMAIL_MIGRATIONS, keyPrefix: EMAIL_KEY_PREFIX, plans: emailPlans(config.plansFile) };
});
