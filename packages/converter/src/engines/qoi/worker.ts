/**
 * The worker-thread side of the QOI engine: decodes a QOI file to pixels (sent back, moved not
 * copied) or encodes pixels (moved here) to a QOI file, so that the service's event loop never
 * runs the codec. The header is read and checked before the rest of the file.
 */
import { open } from 'node:fs/promises';
import { writeJobFile } from '../../guards/output-guard.js';
import { parentPort, workerData } from 'node:worker_threads';
import { checkQoiBounds, decodeQoi, encodeQoi, qoiHeader, QoiError, QOI_HEADER_BYTES } from './codec.js';

/** What the engine asks. */
export type QoiJob =
  | { readonly op: 'decode'; readonly input: string; readonly maxPixels: number }
  | { readonly op: 'encode'; readonly output: string; readonly pixels: Uint8Array; readonly width: number; readonly height: number; readonly channels: 3 | 4; readonly maxOutputBytes: number };

/** The worker's answer. */
export type QoiAnswer =
  | { readonly ok: true; readonly width: number; readonly height: number; readonly channels: 3 | 4; readonly pixels?: Uint8Array }
  | { readonly ok: false; readonly message: string; readonly detail?: string };

async function decode(job: Extract<QoiJob, { op: 'decode' }>): Promise<QoiAnswer> {
  const fh = await open(job.input, 'r');
  let file: Buffer;
  try {
    const { size } = await fh.stat();
    const head = Buffer.alloc(QOI_HEADER_BYTES);
    await fh.read(head, 0, QOI_HEADER_BYTES, 0);
    // Before the file is read whole or any pixel allocated.
    checkQoiBounds(qoiHeader(head), size, job.maxPixels);
    file = Buffer.alloc(size);
    await fh.read(file, 0, size, 0);
  } finally {
    await fh.close();
  }
  const img = decodeQoi(file, job.maxPixels);
  return { ok: true, width: img.width, height: img.height, channels: img.channels, pixels: img.pixels };
}

async function encode(job: Extract<QoiJob, { op: 'encode' }>): Promise<QoiAnswer> {
  const bytes = encodeQoi(job.pixels, job.width, job.height, job.channels);
  if (bytes.byteLength > job.maxOutputBytes) return { ok: false, message: `The qoi output would be over ${job.maxOutputBytes} bytes.` };
  await writeJobFile(job.output, bytes);
  return { ok: true, width: job.width, height: job.height, channels: job.channels };
}

const job = workerData as QoiJob;
(job.op === 'decode' ? decode(job) : encode(job)).then(
  (a) => parentPort?.postMessage(a, a.ok && a.pixels ? [a.pixels.buffer as ArrayBuffer] : []),
  (e: unknown) => parentPort?.postMessage({ ok: false, message: e instanceof QoiError ? e.message : 'The QOI conversion failed.', detail: (e as Error).message } satisfies QoiAnswer),
);
