/**
 * The engines' reaper (issue 45): a tiny process of its own that kills every engine left
 * running when the service that started them dies, however it dies (SIGKILL, OOM killer).
 *
 * The service (exec.ts) starts one, detached into its own session, with its stdin a pipe
 * from the service, and writes `+<pgid>` when a sandboxed process group starts and
 * `-<pgid>` when it has ended. When that pipe reaches end-of-file (the kernel closes it when
 * the service dies, or the service exits) the reaper SIGKILLs every group it still holds
 * and exits. It is needed where the parent-death signal cannot help: an engine started
 * through `sudo` has sudo as its parent, and sudo, a set-uid program, does not die with the
 * service. Killing sudo, which the service's user may signal, brings down the rest of the
 * chain (setpriv's parent-death signal, then bubblewrap's `--die-with-parent`).
 *
 * It reads nothing else, writes nothing, and runs as the service's user.
 */
import { createInterface } from 'node:readline';

const held = new Set<number>();
const LINE = /^([+-])(\d+)$/;

createInterface({ input: process.stdin, crlfDelay: Infinity })
  .on('line', (line) => {
    const m = LINE.exec(line.trim());
    const pgid = Number(m?.[2]);
    // Never 0 or 1: kill(-0) is our own group, kill(-1) every process we may signal.
    if (!m || !Number.isSafeInteger(pgid) || pgid <= 1) return;
    if (m[1] === '+') held.add(pgid);
    else held.delete(pgid);
  })
  .once('close', () => {
    for (const pgid of held) {
      try {
        process.kill(-pgid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    process.exit(0);
  });
