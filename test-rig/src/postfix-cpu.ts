import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

let ticksPerSecond: number | null = null;

/**
 * CPU time (ms, user + system) the rig's Postfix has used so far: its master process,
 * the daemons it runs now (smtpd, cleanup, trivial-rewrite, tlsmgr, …) and those it has
 * reaped. Benchmarks take the difference around a run to see what the server spent.
 * Linux only (reads /proc).
 */
export function postfixCpuMs(rigDir: string): number {
  const master = Number(readFileSync(join(rigDir, 'postfix-queue', 'pid', 'master.pid'), 'utf8').trim());
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  let ticks = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    // Fields after "(comm)": state ppid … utime(14) stime(15) cutime(16) cstime(17), 1-based.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const pid = Number(entry);
    if (pid !== master && Number(f[1]) !== master) continue;
    ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  }
  return (ticks * 1000) / ticksPerSecond;
}
