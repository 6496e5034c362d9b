/**
 * The worker-thread side of {@link renderMarkdownPage} (issue 45): renders one Markdown source
 * under the limits the parent set (heap, time-out) and answers the HTML page.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { ConversionError } from '../errors.js';
import { markdownPage, type MarkdownAnswer, type MarkdownJob } from './markdown-page.js';

function render(job: MarkdownJob): MarkdownAnswer {
  try {
    return { ok: true, html: markdownPage(Buffer.from(job.source.buffer, job.source.byteOffset, job.source.byteLength), job.css) };
  } catch (e) {
    if (e instanceof ConversionError) return { ok: false, message: e.message };
    return { ok: false, message: 'The Markdown file could not be rendered.', detail: (e as Error).message };
  }
}

parentPort?.postMessage(render(workerData as MarkdownJob));
