// `node scripts/node.mjs <script.mjs|.js> [args…]`: runs a project script (a benchmark, the
// matrix runner) on a supported Node — the machine's when it is 22.12 or newer, else the
// pinned Node 24 the project brings (scripts/lib/runtime.mjs). The script sees its own path
// as process.argv[1], as if run directly.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ensureSupportedNode } from './lib/runtime.mjs';

await ensureSupportedNode();
const [script, ...rest] = process.argv.slice(2);
if (!script) {
  process.stderr.write('Usage: node scripts/node.mjs <script> [args…]\n');
  process.exit(2);
}
process.argv = [process.argv[0], resolve(script), ...rest];
await import(pathToFileURL(resolve(script)).href);
