/**
 * Markdown as the browser prints it (issue 22): markdown-it (CommonMark with GitHub's
 * tables and strikethrough, links recognised), code highlighted by highlight.js, in a clean
 * default stylesheet, plus the caller's own `css` after it. Raw HTML in the Markdown is
 * kept: the page is rendered by the sandboxed browser under the same rules as an HTML
 * upload (nothing outside the page is fetched).
 *
 * The engine renders in a worker thread ({@link renderMarkdownPage}, issue 45): markdown-it and
 * highlight.js are linear, but at about 1–2.5 s of CPU per MiB (an 8 MiB table took 20 s) they
 * held the service's event loop for as long.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import hljs from 'highlight.js';
import MarkdownIt from 'markdown-it';
import { failed } from '../errors.js';
import type { JobContext } from './engine.js';
import { runWorkerThread } from './structured/run-in-worker.js';

/** Largest Markdown source rendered. */
export const MAX_MARKDOWN_BYTES = 8 * 1024 * 1024;
/** Heap of the rendering worker, in MiB (an 8 MiB table needs about 300). */
const MARKDOWN_HEAP_MB = 2048;
const WORKER_URL = new URL('./markdown-page-worker.js', import.meta.url);

/** What the rendering worker is given and answers. */
export interface MarkdownJob {
  readonly source: Uint8Array;
  readonly css?: string;
}
export type MarkdownAnswer = { readonly ok: true; readonly html: Uint8Array } | { readonly ok: false; readonly message: string; readonly detail?: string };

const require = createRequire(import.meta.url);
/** highlight.js's GitHub theme, shipped in its package. */
const HIGHLIGHT_CSS = readFileSync(require.resolve('highlight.js/styles/github.css'), 'utf8');

const escapeHtml = (s: string): string => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string);

const md = new MarkdownIt({
  html: true,
  linkify: true,
  typographer: false,
  highlight(code: string, lang: string): string {
    const language = lang && hljs.getLanguage(lang) ? lang : null;
    const body = language ? hljs.highlight(code, { language, ignoreIllegals: true }).value : escapeHtml(code);
    return `<pre class="hljs"><code${language ? ` class="language-${escapeHtml(language)}"` : ''}>${body}</code></pre>`;
  },
});

/** The default stylesheet: readable type, tables with rules and stripes, code blocks, print page. */
export const MARKDOWN_CSS = `
@page { size: A4; margin: 18mm 16mm; }
html { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
body { font-family: "Liberation Sans", "Noto Sans", "DejaVu Sans", sans-serif; font-size: 11pt; line-height: 1.5; color: #1f2328; max-width: 46em; margin: 0 auto; }
h1, h2, h3, h4, h5, h6 { line-height: 1.25; margin: 1.4em 0 0.5em; break-after: avoid; }
h1 { font-size: 1.9em; border-bottom: 1px solid #d1d9e0; padding-bottom: 0.25em; }
h2 { font-size: 1.45em; border-bottom: 1px solid #d1d9e0; padding-bottom: 0.2em; }
h3 { font-size: 1.2em; }
p, ul, ol, table, pre, blockquote { margin: 0 0 0.9em; }
a { color: #0969da; text-decoration: none; }
code { font-family: "Liberation Mono", "Noto Sans Mono", "DejaVu Sans Mono", monospace; font-size: 0.88em; background: #f6f8fa; padding: 0.1em 0.35em; border-radius: 4px; }
pre { background: #f6f8fa; padding: 0.8em 1em; border-radius: 6px; overflow: hidden; white-space: pre-wrap; word-break: break-word; break-inside: avoid; }
pre code { background: none; padding: 0; font-size: 0.85em; }
blockquote { border-left: 4px solid #d1d9e0; padding: 0 1em; color: #59636e; }
table { border-collapse: collapse; width: auto; break-inside: auto; }
th, td { border: 1px solid #d1d9e0; padding: 0.35em 0.7em; }
th { background: #f6f8fa; font-weight: 600; }
tr:nth-child(even) td { background: #f6f8fa; }
img { max-width: 100%; }
hr { border: 0; border-top: 1px solid #d1d9e0; margin: 1.5em 0; }
`;

/** A Markdown source as a whole HTML page: title from the first heading, default styles, highlighting, then `css`. */
export function markdownPage(source: Buffer, css?: string): Buffer {
  if (source.length > MAX_MARKDOWN_BYTES) throw failed(`The Markdown file is over the ${MAX_MARKDOWN_BYTES / 1024 / 1024} MiB rendered through the browser.`);
  const text = source.toString('utf8');
  const body = md.render(text);
  const title = /^#\s+(.+)$/m.exec(text)?.[1]?.trim() ?? 'Document';
  return Buffer.from(
    `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>` +
      `<style>${MARKDOWN_CSS}</style><style>${HIGHLIGHT_CSS}</style>${css ? `<style>${css.replace(/<\/style/gi, '<\\/style')}</style>` : ''}` +
      `</head><body>${body}</body></html>`,
  );
}

/**
 * {@link markdownPage} in a worker thread under the job's limits (its time-out, then
 * `terminate()`; a heap cap; its cancel signal), so that rendering never holds the event loop.
 */
export async function renderMarkdownPage(source: Buffer, css: string | undefined, job: JobContext): Promise<Buffer> {
  if (source.length > MAX_MARKDOWN_BYTES) throw failed(`The Markdown file is over the ${MAX_MARKDOWN_BYTES / 1024 / 1024} MiB rendered through the browser.`);
  const data: MarkdownJob = { source, ...(css !== undefined ? { css } : {}) };
  const answer = await runWorkerThread<Extract<MarkdownAnswer, { ok: true }>>(WORKER_URL, data, job, { kind: 'markdown', maxHeapMb: MARKDOWN_HEAP_MB, failure: 'The Markdown file could not be rendered.' });
  return Buffer.from(answer.html.buffer, answer.html.byteOffset, answer.html.byteLength);
}
