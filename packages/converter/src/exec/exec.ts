/**
 * The one way the converter runs a program. Engines never touch `child_process`: they call
 * {@link runSandboxed} (run to completion) or {@link spawnSandboxed} (long-lived, e.g. the
 * warm LibreOffice instances), which both:
 *
 * - take an absolute program path and an argument array (never a shell);
 * - start the program in its own process group (`detached`), so a time-out or a stop kills
 *   every process it forked (`kill(-pgid, SIGKILL)`), and sweep the group after a normal exit;
 * - give it a minimal environment (fixed `PATH`, `HOME`/`TMPDIR` inside the job's folder, C.UTF-8
 *   locale, plus what the engine adds) instead of inheriting the service's secrets;
 * - cap each file it writes with `RLIMIT_FSIZE` (util-linux `prlimit`), optionally its address space;
 * - run it in an empty network namespace (util-linux `unshare -n`, only a down loopback)
 *   when the kernel lets us create one; {@link sandboxCapabilities} reports whether it does.
 *
 * Not enforced here (say so to operators): no filesystem isolation beyond the job folder
 * being the working directory (engines can read what the service user can read), no CPU
 * quota, no cgroup memory limit. Run the service as an unprivileged user in a container.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';

const UNSHARE = '/usr/bin/unshare';
const PRLIMIT = '/usr/bin/prlimit';
const SETPRIV = '/usr/bin/setpriv';
/** `/usr/local/bin` is left out on purpose: engines run the distribution's binaries only. */
const SAFE_PATH = '/usr/bin:/bin';

/** What the sandbox can enforce on this machine, probed once. */
export interface SandboxCapabilities {
  /** Engines run in an empty network namespace (no route anywhere, loopback down). */
  readonly network_isolated: boolean;
  /** How the namespace is made (`unshare -n` as root, `unshare -rn` through a user namespace). */
  readonly network_method: string | null;
  /** File-size and address-space limits are applied with `prlimit`. */
  readonly resource_limits: boolean;
}

let capabilities: { caps: SandboxCapabilities; unsharePrefix: string[]; orphanGuard: boolean } | undefined;

function probeCapabilities(): { caps: SandboxCapabilities; unsharePrefix: string[]; orphanGuard: boolean } {
  if (capabilities) return capabilities;
  const works = (cmd: string, args: string[]): boolean => {
    try {
      const r = spawnSync(cmd, args, { stdio: 'ignore', timeout: 5000, env: { PATH: SAFE_PATH } });
      return r.status === 0;
    } catch {
      return false;
    }
  };
  let unsharePrefix: string[] = [];
  let method: string | null = null;
  for (const flags of [['-n'], ['-rn']]) {
    if (works(UNSHARE, [...flags, '--', '/bin/true'])) {
      unsharePrefix = [UNSHARE, ...flags, '--'];
      method = `unshare ${flags.join(' ')}`;
      break;
    }
  }
  const resource = works(PRLIMIT, ['--fsize=1048576', '--', '/bin/true']);
  // util-linux setpriv sets the parent-death signal and execs in place: if the service dies
  // without closing (SIGKILL, OOM), its engines (a warm soffice) die with it, not orphaned.
  const orphanGuard = works(SETPRIV, ['--pdeathsig', 'KILL', '--', '/bin/true']);
  capabilities = {
    caps: { network_isolated: unsharePrefix.length > 0, network_method: method, resource_limits: resource },
    unsharePrefix,
    orphanGuard,
  };
  return capabilities;
}

/** Reports what {@link runSandboxed} and {@link spawnSandboxed} enforce here. */
export function sandboxCapabilities(): SandboxCapabilities {
  return probeCapabilities().caps;
}

/** How one program runs. */
export interface SandboxOptions {
  /** Working directory: the job's own folder. */
  readonly cwd: string;
  /** `HOME` (and `TMPDIR`); defaults to `cwd`. */
  readonly home?: string;
  /** Extra variables on top of the minimal environment. */
  readonly env?: Readonly<Record<string, string>>;
  /** Largest file the program may write (RLIMIT_FSIZE); default 4 GiB. */
  readonly maxFileBytes?: number;
  /** Address-space limit (RLIMIT_AS); unset = none (LibreOffice and ffmpeg reserve a lot of virtual memory). */
  readonly maxMemoryBytes?: number;
  /** Allow the network (default false). Nothing in the converter sets it. */
  readonly network?: boolean;
  /** Feed stdin from a pipe the caller writes to (default: /dev/null). */
  readonly stdin?: 'pipe' | 'ignore';
}

/** A long-lived sandboxed process. */
export interface SandboxedProcess {
  readonly pid: number;
  readonly child: ChildProcess;
  /** Resolves when the process has exited (never rejects). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL to the whole process group; safe to call twice. */
  kill(): void;
}

function buildEnv(opts: SandboxOptions): Record<string, string> {
  const home = opts.home ?? opts.cwd;
  return { PATH: SAFE_PATH, HOME: home, TMPDIR: home, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', ...opts.env };
}

function wrap(command: string, args: readonly string[], opts: SandboxOptions): { cmd: string; argv: string[] } {
  if (!command.startsWith('/')) throw new Error(`sandboxed programs need an absolute path, got ${command}`);
  const { caps, unsharePrefix, orphanGuard } = probeCapabilities();
  const prefix: string[] = orphanGuard ? [SETPRIV, '--pdeathsig', 'KILL', '--'] : [];
  if (!opts.network && caps.network_isolated) prefix.push(...unsharePrefix);
  if (caps.resource_limits) {
    prefix.push(PRLIMIT, `--fsize=${opts.maxFileBytes ?? 4 * 1024 ** 3}`);
    if (opts.maxMemoryBytes) prefix.push(`--as=${opts.maxMemoryBytes}`);
    prefix.push('--');
  }
  const full = [...prefix, command, ...args];
  return { cmd: full[0] as string, argv: full.slice(1) };
}

/** Kills a process group, ignoring "no such process". */
export function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/**
 * Starts a long-lived program in the sandbox. The caller owns it: it must call `kill()`
 * (or wait for `exited`) before dropping it.
 */
export function spawnSandboxed(command: string, args: readonly string[], opts: SandboxOptions): SandboxedProcess {
  const { cmd, argv } = wrap(command, args, opts);
  // unshare and prlimit exec() the next program in place, so the pid we get is the engine's.
  const child = spawn(cmd, argv, {
    cwd: opts.cwd,
    env: buildEnv(opts),
    detached: true,
    stdio: [opts.stdin ?? 'ignore', 'pipe', 'pipe'],
    shell: false,
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', () => resolve({ code: null, signal: null }));
  });
  const pid = child.pid ?? -1;
  return {
    pid,
    child,
    exited,
    kill: () => {
      if (pid > 0) killGroup(pid);
    },
  };
}

/** A finished run. */
export interface ExecResult {
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Standard output, up to `maxStdoutBytes`. */
  readonly stdout: Buffer;
  /** The last `maxStderrBytes` of standard error, as text. */
  readonly stderr: string;
  readonly timedOut: boolean;
  /** Killed because stdout passed its cap. */
  readonly stdoutOverflow: boolean;
  /** Killed because the caller's signal aborted. */
  readonly aborted: boolean;
  readonly durationMs: number;
  readonly pid: number;
}

/** Limits of one run-to-completion call. */
export interface RunOptions extends SandboxOptions {
  readonly timeoutMs: number;
  /** Default 8 MiB; past it the run is killed (`stdoutOverflow`). */
  readonly maxStdoutBytes?: number;
  /** Default 64 KiB; only the tail is kept (a chatty engine is never killed for it). */
  readonly maxStderrBytes?: number;
  /** Written to stdin, then stdin is closed. */
  readonly input?: string | Buffer;
  readonly signal?: AbortSignal;
}

/**
 * Runs a program to completion in the sandbox. Never rejects for the program's own failure:
 * the caller reads `exitCode`, `timedOut` and friends.
 */
export function runSandboxed(command: string, args: readonly string[], opts: RunOptions): Promise<ExecResult> {
  const started = Date.now();
  const maxOut = opts.maxStdoutBytes ?? 8 * 1024 * 1024;
  const maxErr = opts.maxStderrBytes ?? 64 * 1024;
  const proc = spawnSandboxed(command, args, { ...opts, stdin: opts.input === undefined ? 'ignore' : 'pipe' });
  const out: Buffer[] = [];
  let outBytes = 0;
  let err = Buffer.alloc(0);
  let timedOut = false;
  let stdoutOverflow = false;
  let aborted = false;

  proc.child.stdout?.on('data', (chunk: Buffer) => {
    if (stdoutOverflow) return;
    outBytes += chunk.length;
    if (outBytes > maxOut) {
      stdoutOverflow = true;
      proc.kill();
      return;
    }
    out.push(chunk);
  });
  proc.child.stderr?.on('data', (chunk: Buffer) => {
    err = Buffer.concat([err, chunk]);
    if (err.length > maxErr) err = err.subarray(err.length - maxErr);
  });
  if (opts.input !== undefined && proc.child.stdin) {
    proc.child.stdin.on('error', () => undefined);
    proc.child.stdin.end(opts.input);
  }
  const timer = setTimeout(() => {
    timedOut = true;
    proc.kill();
  }, opts.timeoutMs);
  const onAbort = (): void => {
    aborted = true;
    proc.kill();
  };
  if (opts.signal?.aborted) onAbort();
  else opts.signal?.addEventListener('abort', onAbort, { once: true });

  // 'close' comes after the pipes drain; sweeping the group at 'exit' makes sure a
  // grandchild holding stdout open cannot keep the run alive.
  const closed = new Promise<void>((resolve) => {
    proc.child.once('close', () => resolve());
    proc.child.once('error', () => resolve());
  });
  return proc.exited.then(async ({ code, signal }) => {
    proc.kill();
    await closed;
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
    return {
      exitCode: code,
      signal,
      stdout: Buffer.concat(out),
      stderr: err.toString('utf8'),
      timedOut,
      stdoutOverflow,
      aborted,
      durationMs: Date.now() - started,
      pid: proc.pid,
    };
  });
}

/** The last non-empty line of an engine's stderr, for error details (logged, never sent as is). */
export function lastLine(text: string): string {
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean);
  return (lines[lines.length - 1] ?? '').slice(0, 300);
}
