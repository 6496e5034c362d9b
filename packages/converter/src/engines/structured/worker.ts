/**
 * The worker-thread side of the structured-data engines: reads the input, converts it with
 * the pure modules and writes the output. Runs under the limits {@link runInWorker} sets (heap,
 * stack, wall time); the input size is checked before the file is read.
 */
import { readFile, stat } from 'node:fs/promises';
import { writeJobFile } from '../../guards/output-guard.js';
import { parentPort, workerData } from 'node:worker_threads';
import { readEvents, readVcards, writeEvents, writeVcards } from './contacts.js';
import { DataError, parseBytes, writeData } from './records.js';
import { convertSubtitles } from './subtitles.js';
import type { WorkerJob, WorkerAnswer } from './run-in-worker.js';

const utf8 = (bytes: Uint8Array, from: string): string => {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new DataError(`The ${from} file is not UTF-8 text.`);
  }
};

function readValue(bytes: Uint8Array, from: string): unknown {
  if (from === 'vcf') return readVcards(utf8(bytes, from));
  if (from === 'ics') return readEvents(utf8(bytes, from));
  return parseBytes(bytes, from);
}

function convertBytes(bytes: Uint8Array, job: WorkerJob): string | Uint8Array {
  if (job.kind === 'subtitle') return convertSubtitles(utf8(bytes, job.from), job.from, job.to);
  const value = readValue(bytes, job.from);
  if (job.to === 'vcf') return writeVcards(value);
  if (job.to === 'ics') return writeEvents(value);
  return writeData(value, job.to);
}

async function run(job: WorkerJob): Promise<WorkerAnswer> {
  const { size } = await stat(job.input);
  if (size > job.maxInputBytes) return { ok: false, message: `The ${job.from} file is ${size} bytes, over the ${job.maxInputBytes} bytes a data conversion accepts.` };
  // Text formats must be UTF-8; MessagePack, CBOR and BSON are read as bytes (records.ts's parseBytes).
  const input = await readFile(job.input);
  let out: string | Uint8Array;
  try {
    out = convertBytes(input, job);
  } catch (e) {
    // Library messages name a line and a cause, never a path: safe to show.
    const msg = e instanceof DataError ? e.message : `The ${job.from} file could not be read: ${(e as Error).message}`.slice(0, 300);
    // A RangeError is the stack running out (deep nesting) or a decoder reading past the end (a length prefix larger than the file).
    const deep = e instanceof RangeError && /call stack/i.test(e.message);
    const short = e instanceof RangeError && !deep;
    return { ok: false, message: deep ? `The ${job.from} file is nested too deeply to convert.` : short ? `The ${job.from} file is truncated or declares more data than it holds.` : msg, detail: (e as Error).message };
  }
  const bytes = typeof out === 'string' ? Buffer.from(out, 'utf8') : out;
  if (bytes.length > job.maxOutputBytes) return { ok: false, message: `The ${job.to} output would be over ${job.maxOutputBytes} bytes.` };
  await writeJobFile(job.output, bytes);
  return { ok: true };
}

run(workerData as WorkerJob).then(
  (a) => parentPort?.postMessage(a),
  (e: unknown) => parentPort?.postMessage({ ok: false, message: 'The conversion failed.', detail: (e as Error).message } satisfies WorkerAnswer),
);
