import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { rigFromEnvironment } from './config.js';
import type { HostRole } from './zones.js';

/** Where the rig's servers are. Every address is in one 127.X.Y.0/24 chosen at start. */
export interface RigInfo {
  /** Scratch directory (configs, logs, certificate); removed at stop. */
  dir: string;
  /** `127.X.Y` */
  subnet: string;
  /** dnsmasq serving the test zone, `host:port`: give it to the resolver under test. */
  dnsServer: string;
  /** A resolver that never answers, `host:port` (for time-out tests). */
  silentDnsServer: string;
  /** Port every SMTP peer listens on: 25, unless a system MTA holds port 25 on every address. */
  smtpPort: number;
  /** SOCKS5 proxy (login `rig` / `rig-secret`, see socks5-server.ts) that reaches only the rig. */
  socks: { host: string; port: number };
  /** Address of each SMTP peer role. */
  hosts: Record<HostRole, string>;
  /** PID of the rig process. */
  pid: number;
}

/** A running rig and the way to let go of it. */
export interface RigHandle extends RigInfo {
  /** Stops the rig if this handle started it; a no-op for a rig shared by the test command. */
  release(): Promise<void>;
}

const DAEMON = fileURLToPath(new URL('./daemon.js', import.meta.url));

/**
 * Starts a rig in its own process (dnsmasq, Postfix, scripted peers) and resolves once all
 * of it answers. Needs root (ports 53 and 25, Postfix) and the Debian packages listed in
 * scripts/system-packages/test-rig.txt.
 */
export function startRig(options: { benchDelayMs?: number } = {}): Promise<RigHandle> {
  // benchDelayMs: put a relay that delays each direction by this much in front of the
  // benchmark's MX hosts (a simulated network; the tests never use it).
  const args = options.benchDelayMs ? [`--bench-delay=${Math.round(options.benchDelayMs)}`] : [];
  const child = spawn(process.execPath, [DAEMON, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    const onExit = (code: number | null) => reject(new Error(`test rig exited (${code}) before it was ready:\n${err}`));
    child.once('exit', onExit);
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
      const line = out.split('\n').find((l) => l.startsWith('RIG-READY '));
      if (!line) return;
      child.stdout.removeAllListeners('data');
      child.stdout.resume();
      child.off('exit', onExit);
      const info = JSON.parse(line.slice('RIG-READY '.length)) as RigInfo;
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      resolve({
        ...info,
        release: async () => {
          if (child.exitCode !== null) return;
          child.stdin.end();
          await exited;
        },
      });
    });
  });
}

/**
 * The rig for a test file: the one the test command started (see `RIG_ENV`), or a fresh
 * one that the file must `release()` in its `after` hook.
 */
export async function useRig(): Promise<RigHandle> {
  const shared = rigFromEnvironment();
  if (shared) return { ...shared, release: async () => {} };
  return startRig();
}
