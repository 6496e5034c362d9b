/**
 * Who holds a maintenance lease (issue 45), told so that a process on the same machine can
 * see the holder has died and take the lease at once, instead of waiting out a dead
 * process's lease (two sweep intervals and 10 s: 610 s on the defaults) while what it left
 * behind stays on disk.
 *
 * A holder names its machine's boot (`/proc/sys/kernel/random/boot_id`), its PID namespace,
 * its pid and that process's start time (a pid can be reused; the pair cannot), plus the
 * host name for people reading the table. A holder of another boot or namespace (another
 * machine, container or a reboot) is never judged: its lease runs out as before.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

interface Holder {
  readonly host: string;
  readonly boot: string;
  readonly pidns: string;
  readonly pid: number;
  /** Start time of the process, in clock ticks after boot (/proc/<pid>/stat, field 22). */
  readonly start: string;
  readonly id: string;
}

/** State and start time of a process, or null when there is none with that pid. */
function processStat(pid: number): { state: string; start: string } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid …": comm may hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] ?? '', start: fields[19] ?? '' };
  } catch {
    return null;
  }
}

function read(path: string, how: (p: string) => string): string {
  try {
    return how(path).trim();
  } catch {
    return '';
  }
}

/** This machine's boot and this process's PID namespace; empty where /proc does not tell. */
function here(): { boot: string; pidns: string } {
  return { boot: read('/proc/sys/kernel/random/boot_id', (p) => readFileSync(p, 'utf8')), pidns: read('/proc/self/ns/pid', readlinkSync) };
}

/** A new holder name for this process (one per lease user: two in one process differ). */
export function leaseHolderId(): string {
  const holder: Holder = { host: hostname(), ...here(), pid: process.pid, start: processStat(process.pid)?.start ?? '', id: randomUUID() };
  return JSON.stringify(holder);
}

function parse(owner: string): Holder | null {
  try {
    const h = JSON.parse(owner) as Partial<Holder>;
    return typeof h.boot === 'string' && typeof h.pidns === 'string' && typeof h.pid === 'number' && typeof h.start === 'string' ? (h as Holder) : null;
  } catch {
    return null;
  }
}

/**
 * Whether the holder `owner` (a {@link leaseHolderId}) is known to be dead: it ran on this
 * boot of this machine, in this PID namespace, and its process is gone, a zombie, or another
 * process now has its pid. Anything else (another machine, an older holder name, a holder
 * still running) is not known dead.
 */
export function holderIsGone(owner: string): boolean {
  const holder = parse(owner);
  const { boot, pidns } = here();
  if (!holder || !boot || !pidns || holder.boot !== boot || holder.pidns !== pidns || !holder.start) return false;
  const stat = processStat(holder.pid);
  return !stat || stat.state === 'Z' || stat.start !== holder.start;
}
