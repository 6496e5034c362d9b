// First: on a Node older than 22.12 this exits with one line before any native addon loads (issue 44).
import '@mailconv/platform/node-guard';
import { runAdminMain } from '@mailconv/platform';
import { CONVERT_KEY_PREFIX } from './key-prefix.js';
import { loadConvertConfig } from './config.js';
import { CONVERT_MIGRATIONS } from './db/migrations.js';
import { convertPlans } from './plans.js';

await runAdminMain('convert', () => {
  const config = loadConvertConfig(process.env);
  return { database: config.database, migrations: CONVERT_MIGRATIONS, keyPrefix: CONVERT_KEY_PREFIX, plans: convertPlans(config.plansFile) };
});
