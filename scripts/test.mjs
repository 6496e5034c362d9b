// `npm test`: install what is missing, then lint, typecheck/build and run every suite
// (unit, API on SQLite and PostgreSQL, engines). Extra arguments are passed to the test
// runner as file filters, e.g. `npm test -- quota`.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ensureAll, log, ROOT, run } from './lib/ensure.mjs';
import { slowestFilesTable } from './lib/file-times-reporter.mjs';
import { ensureSupportedNode, linkProjectNode } from './lib/runtime.mjs';
import { ensurePostgres, ensureRedis } from './lib/services.mjs';

// On a Node older than 22.12 this runs again under the pinned Node 24 (scripts/lib/runtime.mjs).
const runtime = await ensureSupportedNode();
// scripts/runtime/bin/node: this Node, at a path that unit files and the docs can name (issue 44).
linkProjectNode();
log(`Node ${runtime.version} from ${runtime.source}`);
const filters = process.argv.slice(2);

ensureAll({ includeTest: true });
// The same rule the suites apply (packages/platform testing): TEST_BACKENDS narrows a local
// run only; under CI=true both databases always run.
const { isCi, testBackends } = await import(join(ROOT, 'packages', 'platform', 'dist', 'testing', 'test-database.js'));
const backends = testBackends(process.env);
if (isCi(process.env) && process.env.TEST_BACKENDS && backends.join(',') !== process.env.TEST_BACKENDS.replace(/\s/g, '')) {
  log(`CI: TEST_BACKENDS=${process.env.TEST_BACKENDS} ignored; running ${backends.join(' and ')}`);
}
if (backends.includes('postgres') && !process.env.TEST_POSTGRES_URL) await ensurePostgres();
if (!process.env.TEST_REDIS_URL) await ensureRedis();

if (filters.length === 0) {
  log('lint');
  run(process.execPath, [join(ROOT, 'node_modules', 'eslint', 'bin', 'eslint.js'), '--max-warnings=0', '.']);
}

function testFiles(dir, out = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) testFiles(path, out);
    else if (entry.name.endsWith('.test.js') && path.includes(`${'/'}dist${'/'}`)) out.push(path);
  }
  return out;
}

const roots = ['packages', 'services', 'test-rig'].map((d) => join(ROOT, d)).filter((d) => {
  try {
    return statSync(d).isDirectory();
  } catch {
    return false;
  }
});
let files = roots.flatMap((r) => testFiles(r)).sort();
if (filters.length) files = files.filter((f) => filters.some((p) => relative(ROOT, f).includes(p)));
// The slowest files first (scripts/slow-tests.txt), so that both runners finish together.
const slowFirst = readFileSync(join(ROOT, 'scripts', 'slow-tests.txt'), 'utf8')
  .split('\n')
  .map((l) => l.replace(/#.*/, '').trim())
  .filter(Boolean)
  .map((src) => join(ROOT, src.replace('/src/', '/dist/').replace(/^(packages\/(?:client|dashboard)\/)test\//, '$1test/dist/').replace(/\.ts$/, '.js')));
for (const f of slowFirst) if (!existsSync(f)) log(`scripts/slow-tests.txt names ${relative(ROOT, f)}, which is not built: remove or fix the line`);
const rank = (f) => (slowFirst.includes(f) ? slowFirst.indexOf(f) : slowFirst.length);
files.sort((a, b) => rank(a) - rank(b));
if (files.length === 0) {
  log('no test files matched');
  process.exit(1);
}
// The loopback DNS/SMTP rig (test-rig/) starts once for the whole run when a selected test
// file needs it, and is handed to the test processes through MAILCONV_TEST_RIG.
const rigEnv = {};
let rig = null;
if (files.some((f) => /[/\\](packages[/\\]verifier|packages[/\\]client[/\\]test|packages[/\\]dashboard[/\\]test|services[/\\]email-api|test-rig)[/\\]/.test(f))) {
  const { startRig, RIG_ENV } = await import(join(ROOT, 'test-rig', 'dist', 'index.js'));
  log('starting the loopback DNS/SMTP test rig');
  rig = await startRig();
  const { release: _release, ...info } = rig;
  rigEnv[RIG_ENV] = JSON.stringify(info);
}
log(`running ${files.length} test files`);
// Each file's time goes to a second reporter's file, printed as a table at the end (issue 44).
const timesDir = mkdtempSync(join(tmpdir(), 'mailconv-test-times-'));
const timesFile = join(timesDir, 'files.jsonl');
const reporter = pathToFileURL(join(ROOT, 'scripts', 'lib', 'file-times-reporter.mjs')).href;
const res = spawnSync(
  process.execPath,
  // Every test process checks every answer of every app against its OpenAPI document (issue #29).
  ['--enable-source-maps', `--import=${pathToFileURL(join(ROOT, 'packages', 'platform', 'dist', 'testing', 'answer-guard.js')).href}`, '--test', '--test-reporter=spec', '--test-reporter-destination=stdout', `--test-reporter=${reporter}`, `--test-reporter-destination=${timesFile}`, `--test-concurrency=${process.env.TEST_CONCURRENCY ?? 2}`, ...files],
  { cwd: ROOT, stdio: 'inherit', env: { ...process.env, TEST_BACKENDS: backends.join(','), ...rigEnv } },
);
if (rig) await rig.release();
try {
  const table = slowestFilesTable(readFileSync(timesFile, 'utf8').split('\n'), ROOT);
  if (table) process.stdout.write(table);
} catch (err) {
  log(`no file times: ${err.message}`);
}
rmSync(timesDir, { recursive: true, force: true });
process.exit(res.status ?? 1);
