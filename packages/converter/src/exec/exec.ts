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
 * - cap what it may use with util-linux `prlimit`: each file it writes (`RLIMIT_FSIZE`), its
 *   memory (`RLIMIT_DATA`: heap and private writable mappings, which unlike `RLIMIT_AS` does
 *   not count the huge address ranges LibreOffice, ffmpeg and pandoc's GHC runtime reserve
 *   but never touch) and its CPU time (`RLIMIT_CPU`);
 * - run it with a private view of the filesystem (bubblewrap, issue #13): `/usr` and a short
 *   list of `/etc` entries read-only, its job folder read-write, the files the engine names
 *   read-only, fresh `/proc`, `/dev` and `/tmp`; nothing else exists for it (no `/home`, no
 *   storage folder, no `/etc/passwd`). It gets new user, PID, IPC, UTS and network namespaces
 *   (an empty network: only a down loopback), no capabilities, and it runs as an unprivileged
 *   user of its own outside the namespaces too: when the service runs as root, `nobody` (or
 *   the configured engine user) through `setpriv`; when it runs as an unprivileged user (as
 *   `npm start` runs it), the engine user named by {@link useEngineUser} through `sudo`,
 *   whose rule lets the service run commands as that user and no other;
 * - die with the service however it dies (issue 45): a parent-death SIGKILL (`setpriv
 *   --pdeathsig`, bubblewrap's `--die-with-parent`) where the service is the chain's parent,
 *   and, for the sudo chain, whose parent is sudo (a set-uid program, which neither keeps a
 *   parent-death signal nor dies with the service), a reaper process of the service's own
 *   (`reaper.ts`) that kills every group still running once the service is gone;
 * - fall back, where bubblewrap cannot make its namespaces, to the older guard (an empty
 *   network namespace via `unshare -n`); {@link sandboxCapabilities} says what holds.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { chmod, chown, mkdir, rm, stat } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const UNSHARE = '/usr/bin/unshare';
const PRLIMIT = '/usr/bin/prlimit';
const SETPRIV = '/usr/bin/setpriv';
const BWRAP = '/usr/bin/bwrap';
const SUDO = '/usr/bin/sudo';
const ENV = '/usr/bin/env';
/** `/usr/local/bin` is left out on purpose: engines run the distribution's binaries only. */
const SAFE_PATH = '/usr/bin:/bin';
/** The unprivileged user engines run as when the service runs as root (Debian's `nobody`). */
export const SANDBOX_UID = 65534;
export const SANDBOX_GID = 65534;
/** Default memory cap of every engine (RLIMIT_DATA), unless the caller sets its own. */
export const DEFAULT_MAX_MEMORY_BYTES = 2 * 1024 ** 3;
/**
 * The `/etc` entries engines need: the dynamic linker's cache, Debian's alternatives
 * (`/usr/bin/convert` → `/etc/alternatives/convert`), fonts, ImageMagick's and Ghostscript's
 * and LibreOffice's own configuration. Not `passwd`, `hosts` or anything with secrets.
 */
const ETC_ENTRIES = ['ld.so.cache', 'ld.so.conf', 'ld.so.conf.d', 'alternatives', 'fonts', 'ImageMagick-6', 'ImageMagick-7', 'ghostscript', 'libreoffice', 'mime.types', 'localtime', 'papersize', 'libpaper.d'];

/** What the sandbox can enforce on this machine, probed once. */
export interface SandboxCapabilities {
  /** Engines run in an empty network namespace (no route anywhere, loopback down). */
  readonly network_isolated: boolean;
  /** How the namespace is made (`bwrap`, `unshare -n` as root, `unshare -rn` through a user namespace). */
  readonly network_method: string | null;
  /** File-size, memory and CPU-time limits are applied with `prlimit`. */
  readonly resource_limits: boolean;
  /** Engines see only their job folder, the system libraries and their own configuration (bubblewrap). */
  readonly filesystem_isolated: boolean;
  /** Engines run as this uid (outside their namespaces); null when they keep the service's. */
  readonly sandbox_uid: number | null;
  /** …and this gid (the group the service shares inputs and folders with); null likewise. */
  readonly sandbox_gid: number | null;
}

/** How engines get their own user: `setpriv` (the service is root), `sudo` (it is not), or not at all. */
type UserSwitch = 'setpriv' | 'sudo' | null;

interface Probed {
  caps: SandboxCapabilities;
  unsharePrefix: string[];
  orphanGuard: boolean;
  bwrap: boolean;
  /** Engines run as another user than the service's (and {@link Probed.engine} is it). */
  dropUser: boolean;
  switchBy: UserSwitch;
  engine: EngineUser;
}
let capabilities: Probed | undefined;

/** The user engines run as. */
interface EngineUser {
  readonly name: string | null;
  readonly uid: number;
  readonly gid: number;
}
let engineUserName: string | undefined;

/**
 * Names the user engines run as (the service's `CONVERT_ENGINE_USER`), before the first
 * engine runs. A root service switches to it with `setpriv` (default `nobody`); a service
 * running as an unprivileged user needs it, and a sudo rule that lets the service run
 * commands as that user (`scripts/lib/service-user.mjs` writes one), else engines keep the
 * service's own uid inside bubblewrap's user namespace.
 */
export function useEngineUser(name: string | undefined): void {
  if (name === engineUserName) return;
  engineUserName = name;
  capabilities = undefined;
}

/** uid and gid of a user, from the system's user database (`getent`). */
function lookUpUser(name: string): EngineUser | null {
  const r = spawnSync('/usr/bin/getent', ['passwd', name], { encoding: 'utf8', timeout: 10_000, env: { PATH: SAFE_PATH } });
  const fields = r.status === 0 ? r.stdout.trim().split(':') : [];
  return fields.length >= 4 ? { name, uid: Number(fields[2]), gid: Number(fields[3]) } : null;
}

function works(cmd: string, args: string[]): boolean {
  try {
    const r = spawnSync(cmd, args, { stdio: 'ignore', timeout: 10_000, env: { PATH: SAFE_PATH } });
    return r.status === 0;
  } catch {
    return false;
  }
}

function probeCapabilities(): Probed {
  if (capabilities) return capabilities;
  const root = process.getuid?.() === 0;
  const named = engineUserName ? lookUpUser(engineUserName) : null;
  if (engineUserName && !named) throw new Error(`the engine user ${engineUserName} does not exist (CONVERT_ENGINE_USER)`);
  const engine: EngineUser = named ?? { name: null, uid: SANDBOX_UID, gid: SANDBOX_GID };
  const candidate: UserSwitch = root ? 'setpriv' : engine.name ? 'sudo' : null;
  const switchBy: UserSwitch = candidate && works(...run(asEngineUser(candidate, engine), '/bin/true')) ? candidate : null;
  const dropUser = switchBy !== null;
  const userPrefix = switchBy ? asEngineUser(switchBy, engine) : [];
  // The whole sandbox, tried once as it will be used: if the kernel (or a container's
  // seccomp profile) refuses a namespace, bwrap fails here and we fall back.
  const bwrap = existsSync(BWRAP) && works(userPrefix[0] ?? BWRAP, [...userPrefix.slice(1), ...(userPrefix.length ? [BWRAP] : []), ...bwrapArgs({ cwd: '/', network: false }), '/bin/true']);
  let unsharePrefix: string[] = [];
  let method: string | null = bwrap ? 'bwrap' : null;
  if (!bwrap) {
    for (const flags of [['-n'], ['-rn']]) {
      if (works(UNSHARE, [...flags, '--', '/bin/true'])) {
        unsharePrefix = [UNSHARE, ...flags, '--'];
        method = `unshare ${flags.join(' ')}`;
        break;
      }
    }
  }
  const resource = works(PRLIMIT, ['--fsize=1048576', '--data=1073741824', '--cpu=60', '--', '/bin/true']);
  // util-linux setpriv sets the parent-death signal and execs in place: if the service dies
  // without closing (SIGKILL, OOM), its engines (a warm soffice) die with it, not orphaned.
  const orphanGuard = works(SETPRIV, ['--pdeathsig', 'KILL', '--', '/bin/true']);
  capabilities = {
    caps: {
      network_isolated: bwrap || unsharePrefix.length > 0,
      network_method: method,
      resource_limits: resource,
      filesystem_isolated: bwrap,
      sandbox_uid: bwrap && dropUser ? engine.uid : null,
      sandbox_gid: bwrap && dropUser ? engine.gid : null,
    },
    unsharePrefix,
    orphanGuard,
    bwrap,
    dropUser: bwrap && dropUser,
    switchBy: bwrap ? switchBy : null,
    engine,
  };
  return capabilities;
}

/**
 * The command line that runs what follows it as the engine user: `setpriv` (the service is
 * root) or non-interactive `sudo` then `env -i` with `env` (sudo resets the environment), and,
 * with `dieWithParent`, a parent-death SIGKILL for what it starts.
 */
function asEngineUser(by: 'setpriv' | 'sudo', engine: EngineUser, env: readonly string[] = [], dieWithParent = false): string[] {
  if (by === 'setpriv') {
    return [SETPRIV, '--reuid', String(engine.uid), '--regid', String(engine.gid), '--clear-groups', '--inh-caps=-all', ...(dieWithParent ? ['--pdeathsig', 'KILL'] : []), '--'];
  }
  return [SUDO, '-n', '-u', `#${engine.uid}`, '-g', `#${engine.gid}`, '--', ENV, '-i', ...env, ...(dieWithParent ? [SETPRIV, '--pdeathsig', 'KILL', '--'] : [])];
}

/** `prefix` and `args` as the two arguments of {@link works} and `spawnSync`. */
function run(prefix: readonly string[], ...args: string[]): [string, string[]] {
  return [prefix[0] as string, [...prefix.slice(1), ...args]];
}

/** The top-level symlinks of a merged-/usr system (`/bin` → `usr/bin`), or binds where they are folders. */
function rootLinks(): string[] {
  const args: string[] = [];
  for (const name of ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32']) {
    const path = `/${name}`;
    try {
      const st = lstatSync(path);
      if (st.isSymbolicLink()) args.push('--symlink', readlinkSync(path), path);
      else if (st.isDirectory()) args.push('--ro-bind', path, path);
    } catch {
      // absent on this system
    }
  }
  return args;
}

function bwrapArgs(opts: Pick<SandboxOptions, 'cwd' | 'home' | 'network' | 'readOnly' | 'writable' | 'tmp'>): string[] {
  const args = [
    '--unshare-all', ...(opts.network ? ['--share-net'] : []),
    '--die-with-parent', '--cap-drop', 'ALL',
    '--ro-bind', '/usr', '/usr', ...rootLinks(),
    '--proc', '/proc', '--dev', '/dev',
    ...(opts.tmp ? ['--bind', opts.tmp, '/tmp'] : ['--tmpfs', '/tmp']),
  ];
  for (const e of ETC_ENTRIES) args.push('--ro-bind-try', `/etc/${e}`, `/etc/${e}`);
  for (const p of opts.readOnly ?? []) args.push('--ro-bind', p, p);
  const rw = new Set([opts.cwd, ...(opts.home ? [opts.home] : []), ...(opts.writable ?? [])].filter((p) => p !== '/'));
  for (const p of rw) args.push('--bind', p, p);
  args.push('--chdir', opts.cwd, '--');
  return args;
}

/** Reports what {@link runSandboxed} and {@link spawnSandboxed} enforce here. */
export function sandboxCapabilities(): SandboxCapabilities {
  return probeCapabilities().caps;
}

/**
 * Hands a folder the service created to the sandbox user, so engines can write in it (no-op
 * when engines keep the service's own uid). The service, as root, still reads and removes it.
 */
export async function ownForSandbox(path: string): Promise<void> {
  const { switchBy, engine } = probeCapabilities();
  if (switchBy === 'setpriv') await chown(path, engine.uid, engine.gid);
  else if (switchBy === 'sudo') {
    // Not root: the folder stays the service's, shared with the engine user's group (the
    // service is a member), set-gid so what the engines make there keeps that group.
    await chown(path, process.getuid?.() ?? -1, engine.gid);
    await chmod(path, 0o2770);
  }
}

/**
 * Removes a folder engines worked in. An unprivileged service cannot remove what an engine
 * user made inside folders of its own: that part is removed as the engine user first.
 */
export async function removeSandboxTree(path: string): Promise<void> {
  try {
    await rm(path, { recursive: true, force: true });
    return;
  } catch (e) {
    const { switchBy, engine } = probeCapabilities();
    if (switchBy !== 'sudo' || !['EACCES', 'EPERM', 'ENOTEMPTY'].includes((e as NodeJS.ErrnoException).code ?? '')) throw e;
    spawnSync(...run(asEngineUser('sudo', engine, [`PATH=${SAFE_PATH}`]), '/usr/bin/rm', '-rf', '--one-file-system', '--', path), { stdio: 'ignore', timeout: 60_000 });
  }
  await rm(path, { recursive: true, force: true });
}

/**
 * Makes a scratch root (the converter's work folder) reachable by the sandbox user without
 * letting it list the folder (mode 0711): bubblewrap, running as that user, must reach a
 * job folder to show it to the engine. Folders above it that the service itself owns get
 * the same pass-through bit (o+x) where they lack it ({@link allowSandboxTraversal}).
 */
export async function prepareSandboxRoot(path: string): Promise<void> {
  await mkdir(path, { recursive: true });
  if (!probeCapabilities().dropUser) return;
  await chmod(path, 0o711);
  await allowSandboxTraversal(dirname(path));
}

/**
 * Lets the sandbox user pass through `dir` and its ancestors (o+x, never read or list) where
 * the service owns them and they lack it: a private temp or data folder (mode 0700) would
 * otherwise hide the job folders below it from bubblewrap. Folders owned by others are left
 * as they are. No-op without a user switch.
 */
export async function allowSandboxTraversal(dir: string): Promise<void> {
  if (!probeCapabilities().dropUser) return;
  const me = process.getuid?.() ?? 0;
  for (let d = dir; ; d = dirname(d)) {
    const st = await stat(d);
    if (st.uid === me && (st.mode & 0o001) === 0) await chmod(d, (st.mode & 0o777) | 0o001);
    if (dirname(d) === d) break;
  }
}

/**
 * Makes a stored file readable by the sandbox user's group (0640, group {@link SANDBOX_GID}),
 * so the converter can hard-link it into a job folder instead of copying it. The folder that
 * holds it stays closed to that user. No-op without a user switch.
 */
export async function shareWithSandbox(path: string): Promise<void> {
  const { dropUser, engine } = probeCapabilities();
  if (!dropUser) return;
  await chown(path, process.getuid?.() ?? 0, engine.gid);
  await chmod(path, 0o640);
}

/** How one program runs. */
export interface SandboxOptions {
  /** Working directory: the job's own folder, the only writable place the program sees. */
  readonly cwd: string;
  /** `HOME` (and `TMPDIR`); defaults to `cwd`; writable too. */
  readonly home?: string;
  /** Extra variables on top of the minimal environment. */
  readonly env?: Readonly<Record<string, string>>;
  /** Largest file the program may write (RLIMIT_FSIZE); default 4 GiB. */
  readonly maxFileBytes?: number;
  /** Memory cap (RLIMIT_DATA); default {@link DEFAULT_MAX_MEMORY_BYTES}; 0 = none. */
  readonly maxMemoryBytes?: number;
  /** CPU-time cap in seconds (RLIMIT_CPU); unset = none. */
  readonly maxCpuSeconds?: number;
  /** Files or folders (outside `cwd`) the program may read: its own configuration, an input. */
  readonly readOnly?: readonly string[];
  /** Further writable folders (the LibreOffice instance's socket folder). */
  readonly writable?: readonly string[];
  /** A folder shown as `/tmp` (default: an empty one); processes that meet on a socket in /tmp share it. */
  readonly tmp?: string;
  /** Allow the network (default false). Nothing in the converter sets it. */
  readonly network?: boolean;
  /** Feed stdin from a pipe the caller writes to (default: /dev/null). */
  readonly stdin?: 'pipe' | 'ignore';
}

/** A long-lived sandboxed process. */
export interface SandboxedProcess {
  /** The outermost process (bubblewrap, when it is used); its group holds the engine. */
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
  const { caps, unsharePrefix, orphanGuard, bwrap, switchBy, engine } = probeCapabilities();
  const prefix: string[] = [];
  // Under sudo the engine dies with sudo (its parent); sudo keeps the service's real uid, so
  // the service's kill of the process group reaches it, and so does the reaper's when the
  // service is gone (sudo itself does not die with the service).
  if (switchBy) prefix.push(...asEngineUser(switchBy, engine, Object.entries(buildEnv(opts)).map(([k, v]) => `${k}=${v}`), orphanGuard));
  else if (orphanGuard) prefix.push(SETPRIV, '--pdeathsig', 'KILL', '--');
  if (caps.resource_limits) {
    prefix.push(PRLIMIT, `--fsize=${opts.maxFileBytes ?? 4 * 1024 ** 3}`);
    const mem = opts.maxMemoryBytes ?? DEFAULT_MAX_MEMORY_BYTES;
    if (mem > 0) prefix.push(`--data=${mem}`);
    if (opts.maxCpuSeconds) prefix.push(`--cpu=${Math.ceil(opts.maxCpuSeconds)}`);
    prefix.push('--');
  }
  if (bwrap) prefix.push(BWRAP, ...bwrapArgs(opts));
  else if (!opts.network && caps.network_isolated) prefix.push(...unsharePrefix);
  const full = [...prefix, command, ...args];
  return { cmd: full[0] as string, argv: full.slice(1) };
}

/**
 * Every process below `pid` (bubblewrap's monitor, the engine, what it forked), read from
 * /proc: the engine's own pid is not the one {@link spawnSandboxed} answers when bubblewrap
 * stands in between.
 */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      // "pid (comm) state ppid …": comm may hold spaces and parentheses, so split after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(e));
      children.set(ppid, list);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const stack = [pid];
  while (stack.length) {
    for (const c of children.get(stack.pop() as number) ?? []) {
      out.push(c);
      stack.push(c);
    }
  }
  return out;
}

/** A `kB` field of one process's /proc file, in bytes; null when it cannot be read (gone, or another user's). */
function procBytes(pid: number, file: 'status' | 'smaps_rollup', field: RegExp): number | null {
  try {
    const kb = field.exec(readFileSync(`/proc/${pid}/${file}`, 'utf8'))?.[1];
    return kb ? Number(kb) * 1024 : 0;
  } catch {
    return null;
  }
}

const VM_RSS = /VmRSS:\s+(\d+)/;
const PSS = /^Pss:\s+(\d+)/m;

/** Resident memory of a process and everything below it, in bytes (0 when gone). */
export function treeRssBytes(pid: number): number {
  return [pid, ...descendants(pid)].reduce((n, p) => n + (procBytes(p, 'status', VM_RSS) ?? 0), 0);
}

/**
 * Proportional memory of a process tree, in bytes: each shared page counted once over the
 * processes sharing it (`Pss` of /proc/<pid>/smaps_rollup), so a browser's renderers, which
 * share most of their pages, are not counted many times over as their RSS would be. Where
 * the service may not read another user's smaps (sudo mode), that process's RSS is taken.
 */
export function treePssBytes(pid: number): number {
  return [pid, ...descendants(pid)].reduce((n, p) => n + (procBytes(p, 'smaps_rollup', PSS) ?? procBytes(p, 'status', VM_RSS) ?? 0), 0);
}

/** Kills a process group, ignoring "no such process". */
export function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** Whether no process is left in the group `pgid` (one we may not signal still counts). */
function groupGone(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * The reaper (issue 45, `reaper.ts`): one per service process, started with the first
 * sandboxed program, in its own session so that a signal to the service's group spares it.
 * Every sandboxed group is announced to it (`+pgid`) as soon as `spawn` answers, and
 * withdrawn (`-pgid`) once it has been killed or has ended; when the service dies, the pipe
 * closes and the reaper kills what it still holds. The write is a synchronous write(2) into
 * the pipe, so it survives the service being killed a moment later; only a SIGKILL landing
 * between fork and that write, the same turn of the event loop, escapes it. Should the
 * reaper itself be killed, the next one (started at once, or with the next program) is told
 * every group still held. Without its compiled file (the sources run directly) there is no
 * reaper, and the parent-death signals are the only guard.
 */
const REAPER = fileURLToPath(new URL('./reaper.js', import.meta.url));
const heldGroups = new Set<number>();
let reaper: ChildProcess | undefined;

function startReaper(): ChildProcess | undefined {
  if (!existsSync(REAPER)) return undefined;
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, [REAPER], { cwd: '/', env: { PATH: SAFE_PATH }, detached: true, stdio: ['pipe', 'ignore', 'ignore'], shell: false });
  } catch {
    return undefined;
  }
  const started = Date.now();
  // Neither the reaper nor its pipe keeps the service running.
  child.unref();
  (child.stdin as Socket | null)?.unref();
  child.stdin?.on('error', () => undefined);
  child.once('error', () => undefined);
  child.once('exit', () => {
    if (reaper !== child) return;
    reaper = undefined;
    // Killed from outside: a new one at once (not in a loop: one that dies at birth waits for the next program).
    if (heldGroups.size > 0 && Date.now() - started > 1000) reaper = startReaper();
  });
  if (heldGroups.size > 0) child.stdin?.write([...heldGroups].map((g) => `+${g}\n`).join(''));
  return child;
}

function tellReaper(line: string): void {
  reaper ??= startReaper();
  reaper?.stdin?.write(line);
}

function holdGroup(pgid: number): void {
  heldGroups.add(pgid);
  tellReaper(`+${pgid}\n`);
}

function releaseGroup(pgid: number): void {
  if (!heldGroups.delete(pgid)) return;
  reaper?.stdin?.write(`-${pgid}\n`);
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
  if (pid > 0) {
    holdGroup(pid);
    // A group whose last process is gone is withdrawn at once (its number may be reused);
    // one with processes left (under sudo: the engine user's, dying with bubblewrap) when
    // they are gone too, or by `kill()`.
    child.once('exit', () => {
      if (groupGone(pid)) releaseGroup(pid);
      else setTimeout(() => groupGone(pid) && releaseGroup(pid), 2000).unref();
    });
  }
  return {
    pid,
    child,
    exited,
    kill: () => {
      if (pid <= 0) return;
      killGroup(pid);
      releaseGroup(pid);
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

/** CPU time (user + system) of a process and everything below it, in seconds. */
export function treeCpuSeconds(pid: number): number {
  let ticks = 0;
  for (const p of [pid, ...descendants(pid)]) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(f[11]) + Number(f[12]);
    } catch {
      // gone meanwhile
    }
  }
  return ticks / 100; // USER_HZ is 100 on Linux
}

/** The last non-empty line of an engine's stderr, for error details (logged, never sent as is). */
export function lastLine(text: string): string {
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean);
  return (lines[lines.length - 1] ?? '').slice(0, 300);
}
