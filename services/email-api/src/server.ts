// First: on a Node older than 22.12 this exits with one line before any native addon loads (issue 44).
import '@mailconv/platform/node-guard';
import { runServer } from '@mailconv/platform';
import { buildApp } from './app.js';
import { loadEmailConfig } from './config.js';

await runServer('email-api', () => loadEmailConfig(process.env), buildApp);
