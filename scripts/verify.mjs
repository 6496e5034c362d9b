// `npm run verify -- [options] ADDRESS… | --file PATH`: the verification engine's CLI
// (packages/verifier/src/cli.ts), built first if needed.
import { runBuilt } from './lib/ensure.mjs';
import { ensureSupportedNode } from './lib/runtime.mjs';

// Relative --file paths are taken from where the user ran npm (INIT_CWD), not the project root.
await ensureSupportedNode();
runBuilt('packages/verifier/dist/cli.js', process.argv.slice(2), process.env.INIT_CWD ?? process.cwd());
