/**
 * The worker-thread side of the XML pre-pass: reads the document, expands its internal
 * entities and writes the entity-free copy. Runs under the limits {@link expandInWorker}
 * sets (heap, stack, wall time), so a hostile document cannot stall the event loop.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { ConversionError } from '../errors.js';
import { decodeXml, expandEntities, parseProlog } from './xml-entities.js';
import type { ExpandAnswer, ExpandJob } from './xml-entities-run.js';

async function run(job: ExpandJob): Promise<ExpandAnswer> {
  let text: string;
  try {
    text = decodeXml(await readFile(job.input), job.encoding, true);
  } catch {
    return { ok: false, message: `The ${job.ext} file is not valid ${job.encoding.declared} (the encoding its XML declaration or byte order mark names).` };
  }
  try {
    const parsed = parseProlog(text, job.ext);
    if (parsed.kind !== 'prolog') return { ok: false, message: `The ${job.ext} file's DOCTYPE cannot be read.` };
    const expanded = expandEntities(text, parsed.prolog, job.ext, job.maxExpansion);
    await writeFile(job.output, expanded.text, { encoding: 'utf8', mode: 0o444 });
    return { ok: true, references: expanded.references };
  } catch (e) {
    if (e instanceof ConversionError) return { ok: false, message: e.message };
    const deep = e instanceof RangeError && /call stack/i.test(e.message);
    return { ok: false, message: deep ? `The ${job.ext} file nests entities too deeply.` : `The ${job.ext} file's entities could not be expanded.`, detail: (e as Error).message };
  }
}

run(workerData as ExpandJob).then(
  (a) => parentPort?.postMessage(a),
  (e: unknown) => parentPort?.postMessage({ ok: false, message: 'The XML entities could not be expanded.', detail: (e as Error).message } satisfies ExpandAnswer),
);
