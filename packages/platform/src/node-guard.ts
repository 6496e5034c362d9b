/**
 * The first import of every entry point (issue 44): on a Node older than the project's
 * minimum, prints one line naming the running version, the minimum and the project's own
 * Node, and exits 1 — before a native addon built for a newer Node (better-sqlite3 13,
 * sharp, msgpackr-extract) is loaded and kills the process with a segmentation fault that
 * says nothing. ES modules evaluate their imports in order, so this only works as the
 * entry point's first import; and it imports nothing but Node's own modules, so that nothing
 * native can load before it runs.
 *
 * The minimum is scripts/lib/runtime.mjs's MIN_NODE (node-guard.test.ts checks they agree);
 * those scripts cannot import this module (they run before the build).
 */
import { writeSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The oldest Node the project runs on, as [major, minor]. */
export const MIN_NODE: readonly [number, number] = [22, 12];

/**
 * The project's own Node: the link scripts/runtime/bin/node that `npm start` and `npm test`
 * keep pointing at the supported Node they run under (scripts/lib/runtime.mjs).
 */
export const PROJECT_NODE = fileURLToPath(new URL('../../../scripts/runtime/bin/node', import.meta.url));

/** Whether `version` (`v24.21.0` or `24.21.0`) is one the project runs on. */
export function supportedNode(version: string): boolean {
  const [major = 0, minor = 0] = version.replace(/^v/, '').split('.').map(Number);
  return major > MIN_NODE[0] || (major === MIN_NODE[0] && minor >= MIN_NODE[1]);
}

/** The one line printed on a Node that is too old (without its newline); null when `version` is supported. */
export function tooOldMessage(version: string): string | null {
  if (supportedNode(version)) return null;
  return `mailconv: Node ${version} is too old for this service (needs ${MIN_NODE.join('.')} or newer); run it with the project's Node: ${PROJECT_NODE} (npm start installs it)`;
}

const problem = tooOldMessage(process.version);
if (problem !== null) {
  // Synchronous, so the line is out before the exit whatever stderr is.
  writeSync(2, `${problem}\n`);
  process.exit(1);
}
