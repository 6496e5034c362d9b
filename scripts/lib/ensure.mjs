// Makes a fresh clone runnable: Debian packages, npm dependencies (native addons prebuilt,
// nothing compiled), and the TypeScript build. Every step checks first and does
// nothing when its work is already done, so `npm start` and `npm test` stay fast.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export function log(message) {
  process.stderr.write(`[setup] ${message}\n`);
}

export function run(cmd, args, options = {}) {
  // Child output goes to stderr: stdout stays clean for commands whose output is parsed (admin --json).
  const res = spawnSync(cmd, args, { cwd: ROOT, stdio: ['ignore', 2, 2], ...options, env: { ...process.env, ...(options.env ?? {}) } });
  if (res.error) throw res.error;
  if (res.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${res.status ?? res.signal}`);
}

function listedPackages(includeTest) {
  const dir = join(ROOT, 'scripts', 'system-packages');
  const names = new Set();
  for (const file of readdirSync(dir).sort()) {
    if (!file.endsWith('.txt')) continue;
    if (!includeTest && file.startsWith('test-')) continue;
    for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) {
      const name = line.replace(/#.*/, '').trim();
      if (name) names.add(name);
    }
  }
  return [...names];
}

function missingPackages(names) {
  if (names.length === 0) return [];
  const res = spawnSync('dpkg-query', ['-W', '-f=${Package} ${db:Status-Status}\n', ...names], { encoding: 'utf8' });
  const installed = new Set(
    (res.stdout ?? '')
      .split('\n')
      .filter((l) => l.endsWith(' installed'))
      .map((l) => l.split(' ')[0].split(':')[0]),
  );
  return names.filter((n) => !installed.has(n));
}

/** Installs the Debian packages listed under scripts/system-packages that are missing. */
export function ensureSystemPackages({ includeTest }) {
  if (!existsSync('/usr/bin/dpkg-query')) {
    log('not a Debian system: install the packages in scripts/system-packages/*.txt yourself');
    return;
  }
  const missing = missingPackages(listedPackages(includeTest));
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0) throw new Error(`missing Debian packages: ${missing.join(' ')}; run as root or install them with apt-get`);
  log(`installing Debian packages: ${missing.join(' ')}`);
  const env = { DEBIAN_FRONTEND: 'noninteractive' };
  run('apt-get', ['update', '-qq'], { env });
  run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], { env });
}

function newer(a, b) {
  return statSync(a).mtimeMs > statSync(b).mtimeMs;
}

/** Installs npm dependencies when node_modules is missing or older than the lockfile. */
export function ensureNodeModules() {
  const marker = join(ROOT, 'node_modules', '.package-lock.json');
  const lock = join(ROOT, 'package-lock.json');
  const manifests = [join(ROOT, 'package.json'), lock];
  const stale = !existsSync(marker) || manifests.some((m) => existsSync(m) && newer(m, marker));
  // Native addons come prebuilt inside their npm packages (better-sqlite3 13's N-API
  // binaries, msgpackr-extract's platform package): nothing is compiled, and no install step
  // fetches anything from outside the npm registry. npm runs under the Node that runs this.
  const env = { npm_config_fund: 'false', npm_config_audit: 'false', npm_config_update_notifier: 'false' };
  if (stale) {
    log('installing npm dependencies');
    run('npm', [existsSync(lock) ? 'ci' : 'install', '--no-fund', '--no-audit'], { env });
  }
  const probe = spawnSync(process.execPath, ['-e', "new (require('better-sqlite3'))(':memory:').prepare('select 1').get()"], { cwd: ROOT, encoding: 'utf8' });
  if (probe.status !== 0) throw new Error(`the SQLite driver (better-sqlite3) does not load under Node ${process.version}: ${probe.stderr.trim().split('\n').pop()}`);
}

function newestMtime(path, keep = () => true) {
  if (!existsSync(path)) return 0;
  const s = statSync(path);
  if (!s.isDirectory()) return keep(path) ? s.mtimeMs : 0;
  return Math.max(s.mtimeMs, ...readdirSync(path).map((name) => (name === 'node_modules' || name === 'dist' ? 0 : newestMtime(join(path, name), keep))));
}

const BUILD_STAMP = join(ROOT, 'node_modules', '.cache', 'mailconv-build');
const TS_INPUT = /\.(?:[cm]?ts|tsx|json)$/;

/** The TypeScript projects `tsc -b` builds (the root tsconfig's references). */
function projects() {
  return JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8')).references.map((r) => join(ROOT, r.path));
}

/**
 * Whether the last `tsc -b` is still current: every project has its output, and no
 * TypeScript source, tsconfig or manifest changed since (a stamp written after each
 * successful build). Checked in about 50 ms where `tsc -b` itself takes seconds to say so.
 */
function buildIsCurrent() {
  if (!existsSync(BUILD_STAMP)) return false;
  const stamp = statSync(BUILD_STAMP).mtimeMs;
  const dirs = projects();
  if (dirs.some((dir) => !existsSync(join(dir, 'dist')))) return false;
  const inputs = [...dirs, join(ROOT, 'tsconfig.json'), join(ROOT, 'tsconfig.base.json'), join(ROOT, 'package-lock.json')];
  return Math.max(...inputs.map((path) => newestMtime(path, (file) => TS_INPUT.test(file)))) < stamp;
}

/** Compiles every workspace when a source changed since the last build (incremental). */
export function ensureBuild() {
  if (buildIsCurrent()) return;
  const started = Date.now();
  run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-b']);
  mkdirSync(dirname(BUILD_STAMP), { recursive: true });
  // Dated when the build started: a source saved during the build makes the next one run.
  writeFileSync(BUILD_STAMP, `${new Date(started).toISOString()}\n`);
  utimesSync(BUILD_STAMP, started / 1000, started / 1000);
}

/**
 * Builds the two dashboards (packages/dashboard: React + Vite) into static files when a
 * source is newer than the last build; the services serve them under /dashboard/.
 */
export function ensureDashboard() {
  const dir = join(ROOT, 'packages', 'dashboard');
  const stamp = join(dir, 'dist', 'web', '.built');
  const inputs = ['src', 'public', 'build.mjs', 'package.json', 'tsconfig.json'].map((p) => join(dir, p)).concat([join(ROOT, 'packages', 'client', 'src', 'generated'), join(ROOT, 'package-lock.json')]);
  if (existsSync(stamp) && Math.max(...inputs.map((path) => newestMtime(path))) <= statSync(stamp).mtimeMs) return;
  log('building the dashboards (packages/dashboard)');
  run(process.execPath, [join(dir, 'build.mjs')]);
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
}

export function ensureAll({ includeTest }) {
  ensureSystemPackages({ includeTest });
  ensureNodeModules();
  ensureBuild();
  ensureDashboard();
}

export function commandExists(cmd) {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs a built entry point of the project after making sure it is installed and built
 * (setup output on stderr, so the command's stdout stays its own), and exits with its code.
 */
export function runBuilt(relativePath, args, cwd = ROOT, prefix = []) {
  ensureNodeModules();
  ensureBuild();
  const argv = [...prefix.slice(1), process.execPath, join(ROOT, relativePath), ...args];
  const res = spawnSync(prefix[0] ?? argv.shift(), argv, { cwd, stdio: 'inherit' });
  process.exit(res.status ?? 1);
}
