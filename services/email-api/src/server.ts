import { runServer } from '@mailconv/platform';
import { buildApp } from './app.js';
import { loadEmailConfig } from './config.js';

await runServer('email-api', () => loadEmailConfig(process.env), buildApp);
