// Makes sure the servers the test suite talks to (PostgreSQL, Redis) are running on
// loopback: start them if installed, install them from Debian if not, and fail loudly if
// neither works. Suites never skip a backend.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import net from 'node:net';
import { log, run } from './ensure.mjs';

function reachable(port, host = '127.0.0.1', timeoutMs = 1000) {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

async function waitFor(port, seconds) {
  for (let i = 0; i < seconds * 4; i++) {
    if (await reachable(port)) return true;
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

function aptInstall(packages) {
  const env = { DEBIAN_FRONTEND: 'noninteractive' };
  run('apt-get', ['update', '-qq'], { env });
  run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...packages], { env });
}

/** PostgreSQL on 127.0.0.1:5432 with trust auth for local connections, as the suite expects. */
export async function ensurePostgres() {
  if (await reachable(5432)) return;
  if (!existsSync('/etc/postgresql') || readdirSync('/etc/postgresql').length === 0) {
    log('PostgreSQL is not installed: installing it from Debian');
    aptInstall(['postgresql']);
  }
  const versions = readdirSync('/etc/postgresql');
  for (const v of versions) {
    log(`starting PostgreSQL ${v}`);
    spawnSync('pg_ctlcluster', ['--skip-systemctl-redirect', v, 'main', 'start'], { stdio: 'inherit' });
  }
  if (!(await waitFor(5432, 30))) throw new Error('PostgreSQL did not come up on 127.0.0.1:5432; the PostgreSQL suites cannot run');
  // A freshly installed cluster asks for passwords on TCP; the suite connects as postgres.
  const probe = spawnSync('psql', ['-h', '127.0.0.1', '-U', 'postgres', '-c', 'select 1'], { encoding: 'utf8', env: { ...process.env, PGCONNECT_TIMEOUT: '5' } });
  if (probe.status !== 0) {
    throw new Error(`PostgreSQL at 127.0.0.1:5432 refused user postgres (${probe.stderr.trim()}); allow trust auth for local connections or set TEST_POSTGRES_URL`);
  }
}

/** Redis on 127.0.0.1:6379 (nothing kept on disk), for shared rate limits and queues. */
export async function ensureRedis() {
  if (await reachable(6379)) return;
  if (spawnSync('sh', ['-c', 'command -v redis-server'], { stdio: 'ignore' }).status !== 0) {
    log('Redis is not installed: installing it from Debian');
    aptInstall(['redis-server']);
  }
  log('starting Redis on 127.0.0.1:6379');
  spawnSync('redis-server', ['--daemonize', 'yes', '--bind', '127.0.0.1', '-::1', '--port', '6379', '--save', '', '--appendonly', 'no'], { stdio: 'inherit' });
  if (!(await waitFor(6379, 15))) throw new Error('Redis did not come up on 127.0.0.1:6379; the Redis suites cannot run');
}
