/**
 * Typst documents to PDF and SVG with the Typst compiler the npm registry ships for Node
 * (`@myriaddreamin/typst-ts-node-compiler`, its native binary inside the package; PNG and the
 * rest come from the PDF through the registry's chains: typ → pdf → png by poppler).
 *
 * An upload is hostile and Typst can read files (`#read`, `#image`, `#include`) and download
 * packages (`#import "@preview/…"`), so the compiler never runs in the service's process: our
 * script `typst/compile-typst.mjs` runs under the current Node binary in the exec sandbox
 * (bubblewrap: no network, only the job folder writable, memory/CPU/file-size caps), with the
 * package's folder and the script read-only. The Typst root is the job folder; fonts are
 * Debian's (`/usr/share/fonts`) and the compiler's embedded ones. A package import fails at
 * once (no network in the sandbox) and is answered with a message saying why.
 */
import { realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { failed } from '../errors.js';
import { runSandboxed } from '../exec/exec.js';
import { missingProbe, runStep, type Engine, type EngineProbe, type Step } from './engine.js';

const PACKAGE = '@myriaddreamin/typst-ts-node-compiler';
const REQUIRES = [`npm:${PACKAGE}`];
const SCRIPT = fileURLToPath(new URL('./typst/compile-typst.mjs', import.meta.url));
/** The script's exit code for a document with errors (its diagnostics on stdout). */
const DOCUMENT_ERRORS = 2;

/** What the sandbox must show the script: itself, the compiler's packages, and Node when it is not under /usr. */
function readOnlyPaths(): string[] | null {
  try {
    const require = createRequire(import.meta.url);
    // The scope folder holds the compiler and its platform package (its native binary) side by side.
    const scope = dirname(dirname(realpathSync(require.resolve(`${PACKAGE}/package.json`))));
    const node = dirname(realpathSync(process.execPath));
    return [SCRIPT, scope, ...(node.startsWith('/usr/') ? [] : [node])];
  } catch {
    return null;
  }
}

/**
 * A safe message from Typst's diagnostics: the job folder's path removed, control characters
 * dropped, the first error only, cut short. A package import gets its own explanation.
 */
export function typstMessage(errors: readonly string[], jobDir: string): string {
  if (errors.some((e) => /download package|package.*not found|failed to (load|fetch) package|@preview\//i.test(e))) {
    return 'The Typst document imports a package (#import "@…/…"), which cannot be downloaded: conversions have no network access. Put the package\'s code in the document instead.';
  }
  const first = (errors[0] ?? 'unknown error').split(jobDir).join('').replace(/\p{Cc}+/gu, ' ').trim().slice(0, 200);
  return `The Typst document could not be compiled: ${first}`;
}

/** The Typst engine. */
export class TypstEngine implements Engine {
  readonly name = 'typst';
  readonly reads = ['typ'] as const;
  readonly writes = ['pdf', 'svg'] as const;
  private readonly paths = readOnlyPaths();

  tradesQualityForSize(): boolean {
    return false;
  }

  async probe(): Promise<EngineProbe> {
    if (!this.paths) return missingProbe(this.name, REQUIRES, REQUIRES);
    // The version comes from the script run as a conversion runs: in the sandbox, loading the binding.
    const r = await runSandboxed(process.execPath, [SCRIPT, '--version'], { cwd: '/', timeoutMs: 30_000, readOnly: this.paths });
    const version = /^(\d+\.\d+\.\d+\S*)/.exec(r.stdout.toString('utf8').trim())?.[1] ?? null;
    if (r.exitCode !== 0 || !version) {
      return missingProbe(this.name, REQUIRES, REQUIRES, `the compiler does not load in the sandbox (exit ${r.exitCode ?? r.signal})`);
    }
    return { engine: this.name, available: true, version: `typst-ts-node-compiler ${version}`, missing: [], requires: REQUIRES };
  }

  async convert(step: Step): Promise<void> {
    if (!this.paths) throw failed('The Typst compiler is not installed.', `${PACKAGE} missing`);
    const r = await runStep(step, process.execPath, [SCRIPT, step.input, step.output, step.to, step.job.dir], {
      readOnly: this.paths,
      okExitCodes: [DOCUMENT_ERRORS],
      maxStdoutBytes: 256 * 1024,
      // Where a package cache would go (it stays empty: no network).
      env: { XDG_CACHE_HOME: step.job.dir, XDG_DATA_HOME: step.job.dir },
    });
    if (r.exitCode === DOCUMENT_ERRORS) {
      let errors: string[] = [];
      try {
        errors = (JSON.parse(r.stdout.toString('utf8')) as { errors?: string[] }).errors ?? [];
      } catch {
        // unreadable diagnostics: the generic message below
      }
      throw failed(typstMessage(errors, step.job.dir), `typst: ${errors.join(' | ').slice(0, 500)}`);
    }
  }
}
