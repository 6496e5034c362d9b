/**
 * Test helpers: independent tools (pdfinfo, ffprobe, identify, sha256sum) that check what
 * the engines wrote, and the fixtures folder. Used by tests only.
 */
import { execFile, spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';

/** `packages/converter/test/fixtures/<name>` (tests run from dist/). */
export function fixture(name: string): string {
  return fileURLToPath(new URL(`../../test/fixtures/${name}`, import.meta.url));
}

/** Runs a tool and returns stdout; throws on a non-zero exit. */
export function tool(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

/**
 * Runs a tool and returns stdout; `okStatus`: exit codes that are not failures (qpdf's 3,
 * "succeeded with warnings"), `maxBuffer`: room for a long listing (default 64 MiB).
 */
export function toolWith(cmd: string, args: string[], opts: { okStatus?: readonly number[]; maxBuffer?: number } = {}): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 60_000, maxBuffer: opts.maxBuffer ?? 64 * 1024 ** 2 });
  if (r.status === null || (r.status !== 0 && !opts.okStatus?.includes(r.status))) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

/** Runs a tool and returns its stdout as bytes; throws on a non-zero exit. */
export function toolBytes(cmd: string, args: string[]): Buffer {
  const r = spawnSync(cmd, args, { timeout: 60_000 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr.toString()}`);
  return r.stdout;
}

/** Runs a tool and returns its exit status (null when it was killed). */
export function toolStatus(cmd: string, args: string[]): number | null {
  return spawnSync(cmd, args, { timeout: 60_000 }).status;
}

/** Page count according to poppler's pdfinfo. */
export function pdfPages(path: string): number {
  const m = /^Pages:\s+(\d+)/m.exec(tool('/usr/bin/pdfinfo', [path]));
  return Number(m?.[1]);
}

/** `identify`'s format and size (ImageMagick, system policy). */
export function identify(path: string): { format: string; width: number; height: number } {
  const [format, w, h] = tool('/usr/bin/identify', ['-format', '%m %w %h\n', `${path}[0]`]).trim().split(/\s+/);
  return { format: format ?? '', width: Number(w), height: Number(h) };
}

/** ffprobe's view of a media file. */
export function ffprobe(path: string): { format: string; codecs: string[]; duration: number } {
  const info = JSON.parse(tool('/usr/bin/ffprobe', ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', path])) as {
    format: { format_name: string; duration: string };
    streams: { codec_name: string }[];
  };
  return { format: info.format.format_name, codecs: info.streams.map((s) => s.codec_name), duration: Number(info.format.duration) };
}

/** coreutils' SHA-256 of a file. */
export function sha256sum(path: string): string {
  return tool('/usr/bin/sha256sum', [path]).split(/\s+/)[0] ?? '';
}

/** True when no process with this pid is alive (zombies count as gone). */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    const stat = tool('/bin/cat', [`/proc/${pid}/stat`]);
    return / Z /.test(stat);
  } catch {
    return true;
  }
}

/**
 * A scratch folder under the system temp folder that sandboxed engines may write in (owned
 * by the sandbox user when the tests run as root). Tests use it as a job folder.
 */
export async function scratchDir(prefix: string): Promise<string> {
  const { mkdtemp } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { ownForSandbox } = await import('../exec/exec.js');
  const dir = await mkdtemp(join(tmpdir(), prefix));
  await ownForSandbox(dir);
  return dir;
}

/** An independent tool's run, for the matrix referees. */
export interface ToolRun {
  readonly code: number;
  readonly stdout: Buffer;
  readonly stderr: string;
}

/**
 * Runs a reference tool asynchronously with a time and output cap (the matrix runs two at a
 * time); never throws for a failing tool. `home`: its HOME (calibre writes settings there).
 */
export function runTool(cmd: string, args: readonly string[], timeoutMs = 60_000, home: string = tmpdir()): Promise<ToolRun> {
  return new Promise((resolve) => {
    execFile(cmd, args, { encoding: 'buffer', timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, env: { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8', HOME: home, QT_QPA_PLATFORM: 'offscreen' } }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolve({ code, stdout, stderr: stderr.toString('utf8') });
    });
  });
}

/** ImageMagick's PSNR of two pictures of one size, in dB (Infinity when identical). */
export function psnr(a: string, b: string): number {
  // compare prints the metric on stderr and exits 1 when the pictures differ at all.
  const r = spawnSync('/usr/bin/compare', ['-metric', 'PSNR', a, b, 'null:'], { encoding: 'utf8', timeout: 60_000 });
  const m = /^([\d.]+|inf)/.exec(r.stderr.trim());
  if (!m) throw new Error(`compare failed: ${r.stderr.slice(-500)}`);
  return m[1] === 'inf' ? Infinity : Number(m[1]);
}

/** ffmpeg's SSIM of two pictures of one size ("All", 0–1; alpha left out): the issue 31 yardstick against a reference decode. */
export function ssim(a: string, b: string): number {
  const r = spawnSync('/usr/bin/ffmpeg', ['-hide_banner', '-nostdin', '-i', a, '-i', b, '-lavfi', '[0:v]format=rgb24[x];[1:v]format=rgb24[y];[x][y]ssim', '-f', 'null', '-'], { encoding: 'utf8', timeout: 60_000 });
  const m = /All:([\d.]+)/.exec(r.stderr);
  if (!m) throw new Error(`ffmpeg ssim failed: ${r.stderr.slice(-500)}`);
  return Number(m[1]);
}

/**
 * `fn` over every item, at most two at a time (issue 44): one conversion's sandbox start-up
 * or worker overlaps another's checks. Resolves with the results in the items' order.
 */
export async function atMostTwo<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i] as T);
    }
  };
  await Promise.all([worker(), worker()]);
  return results;
}

/**
 * Watches how much CPU this thread (the event loop's) spends from now on: `stop()` answers
 * milliseconds of user and system time (`process.threadCpuUsage`). Unlike a pause measured
 * on the clock it does not grow when the machine is busy, so a test of work that must run
 * in a worker thread asserts on it; `worstPauseMs` is the longest pause seen, for the report.
 */
export function watchThreadCpu(): { stop(): { cpuMs: number; worstPauseMs: number } } {
  const start = process.threadCpuUsage();
  let worst = 0;
  let last = performance.now();
  const tick = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 5);
  return {
    stop: () => {
      clearInterval(tick);
      const used = process.threadCpuUsage(start);
      return { cpuMs: Math.round((used.user + used.system) / 1000), worstPauseMs: Math.round(worst) };
    },
  };
}
