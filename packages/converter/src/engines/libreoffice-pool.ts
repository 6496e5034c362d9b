/**
 * A warm pool of headless LibreOffice instances (field notes §c). Each instance is one
 * `soffice.bin` with its own profile folder, listening on a named pipe (a Unix socket in
 * /tmp: no TCP port at all, so it works inside the empty network namespace), plus one
 * long-lived Python UNO client (`python/uno-bridge.py`) that loads and stores documents on
 * it. Node owns both processes:
 *
 * - one conversion per instance at a time; a FIFO queue, bounded in length and in waiting
 *   time (`service_unavailable` past either);
 * - a hard time-out per conversion: the instance's process groups are killed, the job
 *   fails, the instance is restarted (the file is marked failed, not the worker);
 * - a crash (soffice exits) fails the job's attempt, which is retried once on a fresh
 *   instance, and the instance restarts;
 * - recycling after `maxConversionsPerInstance` conversions or when soffice's RSS passes
 *   `maxRssBytes`, done right after a job so it adds no latency to the next one;
 * - a memory ceiling during a job (`killRssBytes`, sampled every 250 ms): a document that
 *   makes soffice balloon (a zip bomb, a runaway spreadsheet) is killed like a hang.
 */
import { randomBytes } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { chmod, copyFile, link, mkdir, readFile, readdir, readlink, rename, rm, writeFile } from 'node:fs/promises';
import { copyEngineOutput } from '../guards/output-guard.js';
import { availableParallelism } from 'node:os';
import { dirname, extname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { ConversionError, failed } from '../errors.js';
import { ownForSandbox, prepareSandboxRoot, removeSandboxTree, spawnSandboxed, treeCpuSeconds, treeRssBytes, type SandboxedProcess } from '../exec/exec.js';
import { packageFile } from './engine.js';

/** The soffice binary itself (the `soffice` wrapper is a shell script we do not need). */
export const SOFFICE_BIN = '/usr/lib/libreoffice/program/soffice.bin';
/** Debian's Python, which has the python3-uno bridge (a pyenv or venv python would not). */
export const PYTHON = '/usr/bin/python3';

/** One document to convert. */
export interface LibreOfficeJob {
  readonly input: string;
  readonly output: string;
  /** Export filter name (`writer_pdf_Export`, `MS Word 2007 XML`, …). */
  readonly filter: string;
  readonly filterOptions?: string;
  readonly filterData?: Readonly<Record<string, string | number | boolean>>;
  /** Import filter, where detection is ambiguous (CSV, plain text). */
  readonly inputFilter?: string;
  readonly inputOptions?: string;
  /** The document title written into the export (PDF/UA needs one); the document's own otherwise. */
  readonly title?: string;
}

/** Pool settings. */
export interface LibreOfficePoolOptions {
  /** Folder for profiles (one sub-folder per instance generation). */
  readonly workDir: string;
  /** Default max(1, cores / 2): each conversion keeps one core busy. */
  readonly instances?: number;
  /** Default 50. */
  readonly maxConversionsPerInstance?: number;
  /** Recycle threshold after a job; default 700 MiB. */
  readonly maxRssBytes?: number;
  /** Kill threshold during a job; default 2 GiB. */
  readonly killRssBytes?: number;
  /** Jobs waiting beyond the busy instances; default 16. */
  readonly maxQueue?: number;
  /** Start-up deadline of one instance; default 60 s. */
  readonly startTimeoutMs?: number;
  /** Longest wait in the queue before `service_unavailable`; default 120 s. */
  readonly maxQueueWaitMs?: number;
  /** Hard memory cap of each soffice (RLIMIT_DATA), under `killRssBytes`' sampling; default 3 GiB. */
  readonly maxMemoryBytes?: number;
  /** CPU time one conversion may use, in seconds (sampled with the memory); default 120. */
  readonly maxCpuSecondsPerJob?: number;
}

/** Counters for metrics and tests. */
export interface PoolStats {
  conversions: number;
  failures: number;
  timeouts: number;
  crashes: number;
  restarts: number;
  recycles: number;
  queued: number;
}

interface Pending {
  readonly id: string;
  resolve(): void;
  reject(e: Error): void;
}

/** Security settings of every profile: macros never run, untrusted links are not followed. */
const REGISTRY = `<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="MacroSecurityLevel" oor:op="fuse"><value>3</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="DisableMacrosExecution" oor:op="fuse"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="BlockUntrustedRefererLinks" oor:op="fuse"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="UseLocking" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Save/Document"><prop oor:name="CreateBackup" oor:op="fuse"><value>false</value></prop></item>
</oor:items>
`;

class Instance {
  soffice: SandboxedProcess | undefined;
  bridge: SandboxedProcess | undefined;
  conversions = 0;
  busy = false;
  ready = false;
  private pending: Pending | undefined;
  private pipe = '';
  private dir = '';
  private stopping = false;
  /** Set when soffice died on its own; the pool restarts the instance. */
  crashed = false;
  /** Pipe sockets soffice made in /tmp (its accept pipe and SingleOfficeIPC_<hash>), removed on stop. */
  private sockets: string[] = [];

  constructor(
    readonly index: number,
    private readonly opts: Required<LibreOfficePoolOptions>,
    private readonly onCrash: (inst: Instance) => void,
  ) {}

  get pid(): number | undefined {
    return this.soffice?.pid;
  }

  async start(): Promise<void> {
    this.stopping = false;
    this.crashed = false;
    this.conversions = 0;
    const tag = randomBytes(6).toString('hex');
    this.pipe = `mailconv_lo_${process.pid}_${this.index}_${tag}`;
    this.dir = join(this.opts.workDir, `lo-${this.index}-${tag}`);
    await prepareSandboxRoot(this.opts.workDir);
    const profile = await prepareProfile(join(this.dir, 'profile'));
    await mkdir(join(this.dir, 'tmp'));
    await mkdir(join(this.dir, 'io'));
    // The instance's folder is all soffice and its bridge may write (profile, the pipe
    // socket in the folder shown to both as /tmp, the documents of the job at hand).
    for (const p of [this.dir, join(this.dir, 'tmp'), join(this.dir, 'io')]) await ownForSandbox(p);
    const deadline = Date.now() + this.opts.startTimeoutMs;
    // A fresh profile makes soffice exit once with code 81 ("restart required") after
    // creating it (Gotenberg's first-start quirk); start again then.
    for (let attempt = 0; attempt < 3; attempt++) {
      // close() stopped this instance while it was starting: spawn nothing more.
      if (this.stopping) throw failed('LibreOffice did not start.', `instance ${this.index} was stopped while starting`);
      this.soffice = spawnSandboxed(
        SOFFICE_BIN,
        [
          `-env:UserInstallation=${profile}`,
          '--headless', '--invisible', '--nocrashreport', '--nodefault', '--nologo',
          '--nofirststartwizard', '--norestore', '--nolockcheck',
          `--accept=pipe,name=${this.pipe};urp;StarOffice.ComponentContext`,
        ],
        {
          cwd: this.dir, home: this.dir, tmp: join(this.dir, 'tmp'), env: { SAL_USE_VCLPLUGIN: 'svp' },
          maxMemoryBytes: this.opts.maxMemoryBytes,
          // A backstop for the whole life of the instance; each job is held to maxCpuSecondsPerJob.
          maxCpuSeconds: this.opts.maxCpuSecondsPerJob * (this.opts.maxConversionsPerInstance + 2),
        },
      );
      this.soffice.child.stdout?.resume();
      this.soffice.child.stderr?.resume();
      const connected = await this.connectBridge(deadline, this.soffice);
      if (connected) break;
      this.bridge?.kill();
      this.soffice.kill();
      await this.soffice.exited;
      if (Date.now() > deadline || attempt === 2) {
        throw failed('LibreOffice did not start.', `instance ${this.index} did not become ready`);
      }
    }
    const soffice = this.soffice as SandboxedProcess;
    void soffice.exited.then(() => {
      if (this.stopping || this.soffice !== soffice) return;
      this.crashed = true;
      this.ready = false;
      this.bridge?.kill();
      this.pending?.reject(new ConversionError('conversion_failed', 'LibreOffice crashed while converting the document.', { detail: 'soffice exited' }));
      this.pending = undefined;
      this.onCrash(this);
    });
    this.sockets = await listeningSockets(soffice.pid);
    this.ready = true;
  }

  /** Starts the bridge and waits for its "ready" line; false when soffice exited first. */
  private connectBridge(deadline: number, soffice: SandboxedProcess): Promise<boolean> {
    const seconds = Math.max(1, Math.ceil((deadline - Date.now()) / 1000));
    const script = packageFile('python/uno-bridge.py');
    const bridge = spawnSandboxed(PYTHON, ['-I', script, this.pipe, String(seconds)], {
      cwd: this.dir, home: this.dir, tmp: join(this.dir, 'tmp'), stdin: 'pipe', readOnly: [dirname(script)], maxMemoryBytes: 512 * 1024 ** 2,
    });
    this.bridge = bridge;
    bridge.child.stderr?.resume();
    bridge.child.stdin?.on('error', () => undefined);
    const lines = createInterface({ input: bridge.child.stdout as NodeJS.ReadableStream });
    return new Promise<boolean>((resolve) => {
      let settled = false;
      const settle = (v: boolean): void => {
        if (!settled) {
          settled = true;
          resolve(v);
        }
      };
      lines.on('line', (line) => {
        let msg: { ready?: boolean; id?: string; ok?: boolean; error?: string };
        try {
          msg = JSON.parse(line) as typeof msg;
        } catch {
          return;
        }
        if (msg.ready) return settle(true);
        const p = this.pending;
        if (p && msg.id === p.id) {
          this.pending = undefined;
          if (msg.ok) p.resolve();
          else {
            // The office died under the bridge (its exit event may not have reached us yet).
            if (/Disposed|bridge disposed|Connection lost/i.test(msg.error ?? '')) this.crashed = true;
            p.reject(failed('LibreOffice could not convert the document.', msg.error ?? 'unknown'));
          }
        }
      });
      void soffice.exited.then(() => settle(false));
      void bridge.exited.then(() => {
        settle(false);
        if (!this.stopping && this.pending) {
          this.pending.reject(failed('LibreOffice could not convert the document.', 'UNO bridge exited'));
          this.pending = undefined;
        }
      });
    });
  }

  /**
   * Runs one job on copies inside the instance's folder (soffice sees nothing else): the
   * input is hard-linked (or copied) into `io/`, the output is moved out when it is done.
   */
  async convertStaged(job: LibreOfficeJob, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const tag = randomBytes(8).toString('hex');
    const input = join(this.dir, 'io', `${tag}-in${extname(job.input)}`);
    const output = join(this.dir, 'io', `${tag}-out${extname(job.output)}`);
    try {
      try {
        await link(job.input, input);
      } catch {
        await copyFile(job.input, input, fsConstants.COPYFILE_FICLONE);
        await chmod(input, 0o444);
      }
      await this.convert({ ...job, input, output }, timeoutMs, signal);
      // A move keeps whatever soffice left as it is (a link stays a link, for the converter's
      // output guard to refuse); a copy, across file systems, goes through the guard itself.
      await rename(output, job.output).catch(async () => {
        await copyEngineOutput(output, job.output, { dir: this.dir }, 'libreoffice');
      });
    } finally {
      await rm(input, { force: true });
      await rm(output, { force: true });
    }
  }

  /** Runs one job; rejects on failure, time-out or abort (then the instance is dead). */
  convert(job: LibreOfficeJob, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    // soffice may have died after the job was handed to this instance (while its input was
    // staged): its exit found no job to fail, so nothing would ever answer this one. Fail it
    // as a crash at once; the pool retries it on the restarted instance.
    if (this.crashed || !this.ready) {
      return Promise.reject(new ConversionError('conversion_failed', 'LibreOffice crashed while converting the document.', { detail: 'soffice exited before the job was sent' }));
    }
    const id = randomBytes(8).toString('hex');
    return new Promise<void>((resolve, reject) => {
      const timer: { t?: NodeJS.Timeout; rss?: NodeJS.Timeout } = {};
      const done = (): void => {
        clearTimeout(timer.t);
        clearInterval(timer.rss);
        signal?.removeEventListener('abort', onAbort);
      };
      const kill = (e: ConversionError): void => {
        if (this.pending?.id !== id) return;
        this.pending = undefined;
        done();
        this.crashed = true; // a hung or cancelled instance is not reused
        this.ready = false;
        this.stopping = true;
        this.bridge?.kill();
        this.soffice?.kill();
        reject(e);
      };
      const onAbort = (): void => kill(failed('The conversion was cancelled.', 'aborted'));
      this.pending = {
        id,
        resolve: () => {
          done();
          resolve();
        },
        reject: (e) => {
          done();
          reject(e);
        },
      };
      timer.t = setTimeout(
        () => kill(new ConversionError('conversion_failed', 'The conversion took too long (LibreOffice) and was stopped.', { detail: `timed out after ${timeoutMs} ms` })),
        timeoutMs,
      );
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      const cpuAtStart = this.cpuSeconds();
      const checkMemory = (): void => {
        void this.rssBytes().then((rss) => {
          if (rss > this.opts.killRssBytes) {
            kill(new ConversionError('conversion_failed', 'The document needed too much memory to convert.', { detail: `soffice RSS ${rss} bytes` }));
          }
          const cpu = this.cpuSeconds() - cpuAtStart;
          if (cpu > this.opts.maxCpuSecondsPerJob) {
            kill(new ConversionError('conversion_failed', `The document needs more processing than the ${this.opts.maxCpuSecondsPerJob} s of CPU time allowed per conversion; it was stopped.`, { detail: `soffice CPU ${cpu} s` }));
          }
        });
      };
      checkMemory();
      timer.rss = setInterval(checkMemory, 250);
      this.bridge?.child.stdin?.write(`${JSON.stringify({ id, ...job })}\n`);
    });
  }

  /** Resident memory of soffice.bin and the sandbox around it, from /proc. */
  async rssBytes(): Promise<number> {
    return this.soffice ? treeRssBytes(this.soffice.pid) : 0;
  }

  /** CPU seconds soffice.bin has used so far. */
  cpuSeconds(): number {
    return this.soffice ? treeCpuSeconds(this.soffice.pid) : 0;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.ready = false;
    this.pending?.reject(failed('The LibreOffice pool is stopped.', 'instance stopped during a job'));
    this.pending = undefined;
    const procs = [this.bridge, this.soffice].filter((p): p is SandboxedProcess => p !== undefined);
    this.bridge?.child.stdin?.end();
    for (const p of procs) p.kill();
    await Promise.all(procs.map((p) => p.exited));
    this.bridge = undefined;
    this.soffice = undefined;
    // soffice leaves its pipe sockets in /tmp (OSL_PIPE_<uid>_<name>); sweep ours, only ours.
    const uid = process.getuid?.() ?? 0;
    for (const path of new Set([...this.sockets, `/tmp/OSL_PIPE_${uid}_${this.pipe}`])) await rm(path, { force: true });
    this.sockets = [];
    if (this.dir) await removeSandboxTree(this.dir);
  }
}

interface Waiting {
  readonly job: LibreOfficeJob;
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
  retried: boolean;
  resolve(): void;
  reject(e: Error): void;
}

/** The warm LibreOffice pool. */
/**
 * Creates a LibreOffice user profile in `dir` with our settings (macros off, nothing linked
 * fetched) and returns its URL for `-env:UserInstallation`.
 */
export async function prepareProfile(dir: string): Promise<string> {
  await mkdir(join(dir, 'user'), { recursive: true });
  await writeFile(join(dir, 'user', 'registrymodifications.xcu'), REGISTRY);
  // soffice runs as the sandbox user and writes its profile.
  for (const p of [dir, join(dir, 'user'), join(dir, 'user', 'registrymodifications.xcu')]) await ownForSandbox(p);
  return pathToFileURL(dir).href;
}

export class LibreOfficePool {
  private readonly opts: Required<LibreOfficePoolOptions>;
  private readonly instances: Instance[] = [];
  private readonly queue: Waiting[] = [];
  private starting: Promise<void> | undefined;
  private started = false;
  /** Restarts under way; close() waits for them so none spawns after it. */
  private readonly restarts = new Set<Promise<void>>();
  /** Recycles under way (inside run()), for the same reason. */
  private readonly running = new Set<Promise<void>>();
  private closed = false;
  /** Counters since start. */
  readonly stats: PoolStats = { conversions: 0, failures: 0, timeouts: 0, crashes: 0, restarts: 0, recycles: 0, queued: 0 };

  constructor(options: LibreOfficePoolOptions) {
    this.opts = {
      instances: Math.max(1, Math.floor(availableParallelism() / 2)),
      maxConversionsPerInstance: 50,
      maxRssBytes: 700 * 1024 * 1024,
      killRssBytes: 2 * 1024 ** 3,
      maxQueue: 16,
      startTimeoutMs: 60_000,
      maxQueueWaitMs: 120_000,
      maxMemoryBytes: 3 * 1024 ** 3,
      maxCpuSecondsPerJob: 120,
      ...options,
    };
  }

  /** soffice.bin process ids of the live instances (for tests and metrics). */
  pids(): number[] {
    return this.instances.map((i) => i.pid).filter((p): p is number => p !== undefined);
  }

  /** Starts every instance (idempotent); `convert` calls it lazily. */
  start(): Promise<void> {
    this.starting ??= (async () => {
      try {
        for (let i = 0; i < this.opts.instances; i++) {
          const inst = new Instance(i, this.opts, (x) => this.handleCrash(x));
          this.instances.push(inst);
          // One at a time: two cold starts at once double the start-up of each on 2 cores.
          await inst.start();
        }
        this.started = true;
      } catch (e) {
        // A failed start must not poison the pool: stop what did start, let the next job retry.
        await Promise.all(this.instances.splice(0).map((i) => i.stop()));
        this.starting = undefined;
        throw e;
      }
    })();
    return this.starting;
  }

  /** Converts one document; rejects with `service_unavailable` when the queue is full. */
  convert(job: LibreOfficeJob, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.closed) return Promise.reject(failed('The LibreOffice pool is stopped.'));
    // Checked and enqueued in one synchronous stretch, so concurrent callers cannot overfill it.
    const busy = this.instances.filter((i) => i.busy || !i.ready).length;
    if (this.queue.length >= this.opts.maxQueue && busy >= this.opts.instances) {
      return Promise.reject(new ConversionError('service_unavailable', 'Too many office documents are waiting; try again shortly.'));
    }
    const done = new Promise<void>((resolve, reject) => {
      const w: Waiting = {
        job, timeoutMs, signal, retried: false,
        resolve: () => {
          clearTimeout(wait);
          resolve();
        },
        reject: (e) => {
          clearTimeout(wait);
          reject(e);
        },
      };
      // Waiting in the queue is bounded too: past maxQueueWaitMs, or on a cancel, the job leaves it.
      const leave = (e: ConversionError): void => {
        const at = this.queue.indexOf(w);
        if (at < 0) return;
        this.queue.splice(at, 1);
        this.stats.queued = this.queue.length;
        w.reject(e);
      };
      const wait = setTimeout(() => leave(new ConversionError('service_unavailable', 'Office conversions are backed up; try again shortly.')), this.opts.maxQueueWaitMs);
      signal?.addEventListener('abort', () => leave(failed('The conversion was cancelled.', 'aborted while queued')), { once: true });
      this.queue.push(w);
      this.stats.queued = this.queue.length;
    });
    if (this.started) this.pump();
    else {
      this.start().then(
        () => this.pump(),
        (e: unknown) => {
          for (const w of this.queue.splice(0)) w.reject(e instanceof Error ? e : failed('LibreOffice did not start.'));
        },
      );
    }
    return done;
  }

  private pump(): void {
    while (this.queue.length) {
      const inst = this.instances.find((i) => i.ready && !i.busy);
      if (!inst) return;
      const w = this.queue.shift() as Waiting;
      this.stats.queued = this.queue.length;
      if (w.signal?.aborted) {
        w.reject(failed('The conversion was cancelled.', 'aborted while queued'));
        continue;
      }
      const p = this.run(inst, w);
      this.running.add(p);
      void p.finally(() => this.running.delete(p));
    }
  }

  private async run(inst: Instance, w: Waiting): Promise<void> {
    inst.busy = true;
    let error: Error | undefined;
    try {
      await inst.convertStaged(w.job, w.timeoutMs, w.signal);
      inst.conversions += 1;
      this.stats.conversions += 1;
    } catch (e) {
      error = e as Error;
    }
    // Crashed on its own (not a time-out or a cancel): retry once on a fresh instance.
    const timedOut = error?.message.includes('took too long') ?? false;
    const cancelled = w.signal?.aborted ?? false;
    if (error && inst.crashed && !timedOut && !cancelled && !w.retried) {
      w.retried = true;
      this.queue.unshift(w);
      error = undefined;
    } else if (error) {
      this.stats.failures += 1;
      if (timedOut) this.stats.timeouts += 1;
      w.reject(error);
    } else {
      w.resolve();
    }
    try {
      if (!inst.crashed && !this.closed && (inst.conversions >= this.opts.maxConversionsPerInstance || (await inst.rssBytes()) > this.opts.maxRssBytes)) {
        this.stats.recycles += 1;
        await inst.stop();
        await inst.start();
      }
    } catch {
      // A failed recycle leaves the instance not ready; restart() below tries again.
      inst.crashed = true;
    } finally {
      inst.busy = false;
    }
    if (inst.crashed || !inst.ready) await this.restart(inst);
    else if (this.closed) this.failQueued();
    else this.pump();
  }

  /**
   * Restarts a dead instance (crash, hang, failed recycle) unless one restart is already
   * under way; exit events and job endings can both ask for it.
   */
  private restart(inst: Instance): Promise<void> {
    if (inst.busy || this.closed) return Promise.resolve();
    const p = this.doRestart(inst);
    this.restarts.add(p);
    return p.finally(() => this.restarts.delete(p));
  }

  private async doRestart(inst: Instance): Promise<void> {
    inst.busy = true;
    this.stats.restarts += 1;
    try {
      // A few attempts with a pause: a start can fail while the machine is overloaded.
      for (let attempt = 0; attempt < 3 && !this.closed; attempt++) {
        try {
          await inst.stop();
          await inst.start();
          break;
        } catch {
          await new Promise((r) => setTimeout(r, 1000 * (attempt + 1)));
        }
      }
    } finally {
      inst.busy = false;
      if (this.closed) this.failQueued();
      else this.pump();
    }
  }

  /** soffice died: a busy instance is restarted when its job ends, an idle one now. */
  private handleCrash(inst: Instance): void {
    this.stats.crashes += 1;
    void this.restart(inst);
  }

  private failQueued(): void {
    for (const w of this.queue.splice(0)) w.reject(failed('The LibreOffice pool is stopped.'));
  }

  /** Stops every instance and removes its profile. */
  async close(): Promise<void> {
    this.closed = true;
    this.failQueued();
    await this.starting?.catch(() => undefined);
    // Stop every instance (a running job fails), let jobs and restarts settle (they check
    // `closed` before starting anything new), then stop again: a restart that was already
    // half-way through start() when we closed has spawned processes by now.
    await Promise.all(this.instances.map((i) => i.stop()));
    while (this.running.size || this.restarts.size) {
      await Promise.allSettled([...this.running, ...this.restarts]);
    }
    await Promise.all(this.instances.map((i) => i.stop()));
  }
}

/**
 * Paths of the Unix sockets a process listens on under /tmp/OSL_PIPE_*: its socket inodes
 * (from /proc/PID/fd) matched against its network namespace's socket table.
 */
async function listeningSockets(pid: number): Promise<string[]> {
  try {
    const inodes = new Set<string>();
    for (const fd of await readdir(`/proc/${pid}/fd`)) {
      const link = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      const m = /^socket:\[(\d+)\]$/.exec(link);
      if (m?.[1]) inodes.add(m[1]);
    }
    const table = await readFile(`/proc/${pid}/net/unix`, 'utf8');
    const paths: string[] = [];
    for (const line of table.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      const inode = cols[6];
      const path = cols[7];
      if (inode && path && inodes.has(inode) && path.startsWith('/tmp/OSL_PIPE_')) paths.push(path);
    }
    return paths;
  } catch {
    return [];
  }
}
