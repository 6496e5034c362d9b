import { runAdminMain } from '@mailconv/platform';
import { CONVERT_KEY_PREFIX } from './key-prefix.js';
import { loadConvertConfig } from './config.js';
import { CONVERT_MIGRATIONS } from './db/migrations.js';
import { convertPlans } from './plans.js';

await runAdminMain('convert', () => {
  const config = loadConvertConfig(process.env);
  return { database: config.database, migrations: CONVERT_MIGRATIONS, keyPrefix: CONVERT_KEY_PREFIX, plans: convertPlans(config.plansFile) };
});
