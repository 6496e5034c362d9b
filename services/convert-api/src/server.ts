import { runServer } from '@mailconv/platform';
import { buildApp } from './app.js';
import { loadConvertConfig } from './config.js';

await runServer('convert-api', () => loadConvertConfig(process.env), buildApp);
