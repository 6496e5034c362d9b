import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './processes.js';

const run = promisify(execFile);

/**
 * A PostgreSQL or Redis server of one test's own (a fresh data folder on its own loopback
 * port), so that a fault test can stop, restart or start it without disturbing anything
 * else. `stop()` and `start()` keep the port and the data; `close()` removes both.
 */
export interface OwnServer {
  /** Connection URL (PostgreSQL: the `postgres` database as user `postgres`; Redis: db 0). */
  readonly url: string;
  readonly port: number;
  /** Stops the server (PostgreSQL: fast shutdown, connections cut; Redis: SHUTDOWN NOSAVE, its data gone). */
  stop(): Promise<void>;
  /** Starts it again on the same port and resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops it for good and removes its folder. */
  close(): Promise<void>;
}

/** The newest PostgreSQL server binaries installed by Debian (`/usr/lib/postgresql/<major>/bin`). */
function postgresBin(): string {
  const root = '/usr/lib/postgresql';
  const majors = existsSync(root) ? readdirSync(root).filter((d) => existsSync(join(root, d, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a)) : [];
  if (!majors[0]) throw new Error(`no PostgreSQL server binaries under ${root} (scripts/system-packages lists the package)`);
  return join(root, majors[0], 'bin');
}

/** As root, PostgreSQL's tools must run as the `postgres` user. */
const asPostgres = (file: string, args: string[]): [string, string[]] => (process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args]);

/** Processes to stop if the test process ends without closing them (a failed assertion, a time-out). */
const leftovers = new Set<() => void>();
process.once('exit', () => {
  for (const kill of leftovers) kill();
});

/**
 * Starts a PostgreSQL of the test's own: `initdb` into a temporary folder, trust auth,
 * listening on 127.0.0.1 only at a free port with its socket in that folder, small memory
 * settings and no fsync (a test's data need not survive a power cut).
 */
export async function startOwnPostgres(): Promise<OwnServer> {
  const bin = postgresBin();
  const dir = mkdtempSync(join(tmpdir(), 'mailconv-own-pg-'));
  const data = join(dir, 'data');
  if (process.getuid?.() === 0) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const port = await freePort();
  const pgctl = (args: string[]) => {
    const [file, argv] = asPostgres(join(bin, 'pg_ctl'), args);
    return run(file, argv, { timeout: 60_000 });
  };
  const pidOf = () => {
    try {
      return Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    } catch {
      return 0;
    }
  };
  // Immediate shutdown of the postmaster, synchronously (used on process exit).
  const kill = () => {
    const pid = pidOf();
    if (pid > 0) {
      try {
        process.kill(pid, 'SIGQUIT');
      } catch {
        // already gone
      }
    }
  };
  const [initdb, initArgs] = asPostgres(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--no-instructions']);
  await run(initdb, initArgs, { timeout: 60_000 });
  const options = ['-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'shared_buffers=16MB', '-c', 'max_connections=100'].join(' ');
  const start = async () => {
    await pgctl(['-D', data, '-l', join(dir, 'postgres.log'), '-o', options, '-w', '-t', '30', 'start']);
  };
  leftovers.add(kill);
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    start,
    stop: async () => {
      await pgctl(['-D', data, '-m', 'fast', '-w', '-t', '30', 'stop']);
    },
    close: async () => {
      await pgctl(['-D', data, '-m', 'immediate', '-w', '-t', '30', 'stop']).catch(() => undefined);
      leftovers.delete(kill);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Starts a Redis of the test's own on a free loopback port, persisting nothing (`--save ""`, no AOF). */
export async function startOwnRedis(): Promise<OwnServer> {
  const dir = mkdtempSync(join(tmpdir(), 'mailconv-own-redis-'));
  const port = await freePort();
  let child: ChildProcess | null = null;
  const kill = () => child?.kill('SIGKILL');
  const start = async () => {
    const c = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--maxmemory', '256mb'], { stdio: ['ignore', 'pipe', 'inherit'] });
    child = c;
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const onData = (b: Buffer) => {
        out += b.toString();
        if (out.includes('Ready to accept connections')) {
          c.stdout!.off('data', onData);
          c.stdout!.resume();
          resolve();
        }
      };
      c.stdout!.on('data', onData);
      c.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${out.slice(-500)}`)));
    });
  };
  const stop = async () => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    await exited;
    child = null;
  };
  leftovers.add(kill);
  await start();
  return {
    url: `redis://127.0.0.1:${port}/0`,
    port,
    start,
    stop,
    close: async () => {
      await stop();
      leftovers.delete(kill);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
