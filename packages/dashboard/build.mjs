// Builds both dashboards into dist/web/<app>/ (served by each service under /dashboard/):
// a type check of the browser code, then one Vite build per app. Run by scripts/lib/ensure.mjs
// whenever a source is newer than the last build, so `npm start` and `npm test` build it.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import react from '@vitejs/plugin-react';

const HERE = dirname(fileURLToPath(import.meta.url));
export const APPS = ['email', 'convert'];

const tsc = spawnSync(process.execPath, [join(HERE, '..', '..', 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(HERE, 'tsconfig.json')], { stdio: 'inherit' });
if (tsc.status !== 0) process.exit(tsc.status ?? 1);

for (const app of APPS) {
  await build({
    configFile: false,
    root: join(HERE, 'src', app),
    base: '/dashboard/',
    // Shared by both apps: the icon each page links (without one, browsers ask for /favicon.ico and log its 404).
    publicDir: join(HERE, 'public'),
    logLevel: 'warn',
    plugins: [react()],
    build: {
      outDir: join(HERE, 'dist', 'web', app),
      emptyOutDir: true,
      // A strict CSP (script-src 'self') forbids inline scripts: keep everything in files.
      modulePreload: { polyfill: false },
      assetsInlineLimit: 0,
      sourcemap: false,
      reportCompressedSize: false,
    },
  });
}
