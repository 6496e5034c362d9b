// `npm start`: install what is missing, then run both services on their embedded defaults
// (SQLite files under data/, in-process workers), each in its own process. On first start
// each service gets an owner account whose API key is printed once. Ctrl-C stops both.
// Run as root, it installs as root and then runs the services as the unprivileged user
// `mailconv` (engines as `mailconv-engine`): scripts/lib/service-user.mjs.
import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { ensureAll, log, ROOT } from './lib/ensure.mjs';
import { runningStart, writePidFile } from './lib/pid-file.mjs';
import { ensureSupportedNode, linkProjectNode } from './lib/runtime.mjs';
import { asServiceUser, ensureServiceUsers } from './lib/service-user.mjs';

const SERVICES = [
  { name: 'email', dir: 'email-api', label: 'Email verification API' },
  { name: 'convert', dir: 'convert-api', label: 'File conversion API' },
];

// On a Node older than 22.12 this runs again under the pinned Node 24 (scripts/lib/runtime.mjs).
const runtime = await ensureSupportedNode();
// scripts/runtime/bin/node: this Node, at a path that unit files and the docs can name (issue 44).
linkProjectNode();
const already = runningStart();
if (already !== null) {
  log(`mailconv is already running from this checkout (npm start, pid ${already}); stop it first with: npm stop`);
  process.exit(1);
}
ensureAll({ includeTest: false });
// Root only installs: the services run as the unprivileged service user from here on.
const drop = ensureServiceUsers();
const prefix = asServiceUser(drop);
const serviceEnv = { ...process.env, ...(drop && !process.env.CONVERT_ENGINE_USER ? { CONVERT_ENGINE_USER: drop.engineUser } : {}) };
/** A program run as the service user (or as the caller when not root). */
const command = (args) => (prefix.length ? [prefix[0], [...prefix.slice(1), process.execPath, ...args]] : [process.execPath, args]);

// Owner accounts first (each in the service's own database), so their keys can be shown.
for (const s of SERVICES) {
  const [cmd, args] = command([join(ROOT, 'services', s.dir, 'dist', 'admin.js'), 'bootstrap-owner', '--json']);
  const res = spawnSync(cmd, args, { cwd: ROOT, encoding: 'utf8', env: serviceEnv });
  if (res.status !== 0) {
    process.stderr.write(res.stderr);
    process.exit(1);
  }
  s.owner = JSON.parse(res.stdout.trim().split('\n').pop());
}

const LEVELS = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
function format(name, line) {
  try {
    const e = JSON.parse(line);
    const time = new Date(e.time).toISOString().slice(11, 19);
    const extra = e.path ? ` ${e.method} ${e.path} ${e.status} ${e.ms}ms` : e.err ? ` ${e.err.message ?? ''}` : e.detail ? ` ${e.conversion ?? ''} ${e.code ?? ''}: ${e.detail}` : '';
    return `[${name}] ${time} ${LEVELS[e.level] ?? e.level} ${e.msg}${extra}`;
  } catch {
    return `[${name}] ${line}`;
  }
}

// For `npm stop` (scripts/stop.mjs); removed when this process exits.
writePidFile();

const children = [];
let stopping = false;
function stopAll(code) {
  if (stopping) return;
  stopping = true;
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
  const timer = setTimeout(() => process.exit(code), 12_000);
  timer.unref();
  Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : null))).then(() => process.exit(code));
}
process.on('SIGINT', () => stopAll(0));
process.on('SIGTERM', () => stopAll(0));

const ready = SERVICES.map(
  (s) =>
    new Promise((resolve, reject) => {
      const [cmd, args] = command([join(ROOT, 'services', s.dir, 'dist', 'server.js')]);
      const child = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: serviceEnv });
      children.push(child);
      for (const stream of [child.stdout, child.stderr]) {
        createInterface({ input: stream }).on('line', (line) => {
          process.stdout.write(`${format(s.name, line)}\n`);
          try {
            const e = JSON.parse(line);
            if (e.event === 'ready') {
              s.url = e.url;
              resolve();
            }
          } catch {
            // not a JSON log line
          }
        });
      }
      child.once('exit', (code, signal) => {
        if (!stopping) {
          log(`${s.label} stopped (${signal ?? `exit ${code}`}); stopping the other service`);
          reject(new Error(`${s.name} exited`));
          stopAll(1);
        }
      });
    }),
);

try {
  await Promise.all(ready);
} catch {
  // stopAll is already under way
}
if (!stopping) {
  const [email, convert] = SERVICES;
  const key = (s) => (s.owner.created ? s.owner.api_key : null);
  const lines = [
    '',
    '================================================================================',
    ` ${email.label}: ${email.url}   (OpenAPI: ${email.url}/openapi.json)`,
    ` ${convert.label}:    ${convert.url}   (OpenAPI: ${convert.url}/openapi.json)`,
    ` Node ${runtime.version} from ${runtime.source}.`,
    drop
      ? ` Running as the unprivileged user ${drop.user} (uid ${drop.uid}); conversion engines as ${drop.engineUser}.`
      : ` Running as uid ${process.getuid?.()} (not root: no separate service or engine user).`,
    ` Dashboards: ${email.url}/dashboard/ and ${convert.url}/dashboard/`,
    '   sign in as owner@localhost after giving it a password (each service has its own):',
    ...SERVICES.map((s) => `   npm run -s admin -- ${s.name} set-password --email owner@localhost`),
    '',
  ];
  for (const s of SERVICES) {
    if (key(s)) lines.push(` New owner API key for the ${s.label} (${s.owner.email}, plan ${s.owner.plan}), shown once:`, `   ${key(s)}`);
    else lines.push(` ${s.label}: accounts exist already (the owner key was shown at the first start); a new key:`, `   npm run -s admin -- ${s.name} create-key --email owner@localhost`);
  }
  const ek = key(email) ?? '<email key>';
  const ck = key(convert) ?? '<convert key>';
  lines.push(
    '',
    ' Try:',
    `   export EMAIL_KEY=${ek} CONVERT_KEY=${ck}`,
    `   curl -H "Authorization: Bearer $EMAIL_KEY" ${email.url}/api/v1/account`,
    `   curl -H "Authorization: Bearer $CONVERT_KEY" ${convert.url}/api/v1/account/limits`,
    '',
    ' More accounts: npm run -s admin -- email create-account --email you@example.com --plan starter',
    ' Stop with Ctrl-C, or from another terminal with: npm stop',
    '================================================================================',
    '',
  );
  process.stdout.write(lines.join('\n'));
}
