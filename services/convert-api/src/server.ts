// First: on a Node older than 22.12 this exits with one line before any native addon loads (issue 44).
import '@mailconv/platform/node-guard';
import { runServer, tuneGcForStreamedBodies } from '@mailconv/platform';
import { buildApp } from './app.js';
import { loadConvertConfig } from './config.js';

// One setting chooses the process's role: `worker` runs conversions without HTTP; `api`
// and `all` (the default) serve the API (see worker.ts and runtime.ts). Bad settings are
// reported by whichever path reads them.
tuneGcForStreamedBodies();
let role: string | undefined;
try {
  role = loadConvertConfig(process.env).role;
} catch {
  role = undefined;
}
if (role === 'worker') await import('./worker.js');
else await runServer('convert-api', () => loadConvertConfig(process.env), buildApp);
