/**
 * The worker-thread side of the structured-data engines: reads the input, converts it with
 * the pure modules and writes the output. Runs under the limits {@link runInWorker} sets (heap,
 * stack, wall time); the input size is checked before the file is read.
 */
import { readFile, stat, writeFile } from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { readEvents, readVcards, writeEvents, writeVcards } from './contacts.js';
import { DataError, parseData, writeData } from './records.js';
import { convertSubtitles } from './subtitles.js';
import type { WorkerJob, WorkerAnswer } from './run-in-worker.js';

function readValue(text: string, from: string): unknown {
  if (from === 'vcf') return readVcards(text);
  if (from === 'ics') return readEvents(text);
  return parseData(text, from);
}

function convertText(text: string, job: WorkerJob): string {
  if (job.kind === 'subtitle') return convertSubtitles(text, job.from, job.to);
  const value = readValue(text, job.from);
  if (job.to === 'vcf') return writeVcards(value);
  if (job.to === 'ics') return writeEvents(value);
  return writeData(value, job.to);
}

async function run(job: WorkerJob): Promise<WorkerAnswer> {
  const { size } = await stat(job.input);
  if (size > job.maxInputBytes) return { ok: false, message: `The ${job.from} file is ${size} bytes, over the ${job.maxInputBytes} bytes a data conversion accepts.` };
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(await readFile(job.input));
  } catch {
    return { ok: false, message: `The ${job.from} file is not UTF-8 text.` };
  }
  let out: string;
  try {
    out = convertText(text, job);
  } catch (e) {
    // Library messages name a line and a cause, never a path: safe to show.
    const msg = e instanceof DataError ? e.message : `The ${job.from} file could not be read: ${(e as Error).message}`.slice(0, 300);
    return { ok: false, message: e instanceof RangeError ? `The ${job.from} file is nested too deeply to convert.` : msg, detail: (e as Error).message };
  }
  const bytes = Buffer.from(out, 'utf8');
  if (bytes.length > job.maxOutputBytes) return { ok: false, message: `The ${job.to} output would be over ${job.maxOutputBytes} bytes.` };
  await writeFile(job.output, bytes, { mode: 0o644 });
  return { ok: true };
}

run(workerData as WorkerJob).then(
  (a) => parentPort?.postMessage(a),
  (e: unknown) => parentPort?.postMessage({ ok: false, message: 'The conversion failed.', detail: (e as Error).message } satisfies WorkerAnswer),
);
