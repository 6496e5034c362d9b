// `npm stop`: ends the `npm start` of this checkout that runs in the background (or in
// another terminal) as Ctrl-C would: SIGTERM, requests in flight finish, usage is written,
// databases are closed. Waits until it is gone (at most 30 s) and says so.
import { rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { pidFile, runningStart } from './lib/pid-file.mjs';

const file = pidFile();
const pid = runningStart(file);
if (pid === null) {
  rmSync(file, { force: true }); // stale, if any
  process.stdout.write('mailconv is not running (no npm start of this checkout).\n');
  process.exit(0);
}
process.kill(pid, 'SIGTERM');
// Gone once /proc no longer shows it as a start (an exited process awaiting its parent shows no command line).
const alive = () => runningStart(file) === pid;
for (let waited = 0; waited < 30_000 && alive(); waited += 100) await sleep(100);
if (alive()) {
  process.stderr.write(`npm start (pid ${pid}) is still running 30 s after SIGTERM; see its output, or end it with: kill -9 ${pid}\n`);
  process.exit(1);
}
process.stdout.write(`Stopped mailconv (npm start, pid ${pid}).\n`);
