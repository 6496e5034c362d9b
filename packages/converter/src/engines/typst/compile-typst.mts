/**
 * The Typst compiler's side of the `typst` engine: a script the engine runs with the current
 * Node binary inside the exec sandbox (never in the service's process: a Typst document can
 * read files and import packages). It compiles one document whose root is the job folder and
 * writes it as PDF or SVG.
 *
 *   node compile-typst.mjs <input.typ> <output> <pdf|svg> <root>
 *   node compile-typst.mjs --version
 *
 * Exit 0: written. Exit 2: the document has errors; stdout holds `{"errors":[…]}` (Typst's
 * diagnostic messages, for the engine to turn into a safe message). Anything else: a crash.
 */
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import type * as Typst from '@myriaddreamin/typst-ts-node-compiler';

const require = createRequire(import.meta.url);
const PACKAGE = '@myriaddreamin/typst-ts-node-compiler';

interface Diagnostic {
  readonly message?: unknown;
  readonly severity?: unknown;
}

function main(argv: readonly string[]): number {
  if (argv[0] === '--version') {
    const { version } = require(`${PACKAGE}/package.json`) as { version: string };
    // Loading the binding proves the native binary runs here (the engine's probe).
    require(PACKAGE);
    process.stdout.write(`${version}\n`);
    return 0;
  }
  const [input, output, format, root] = argv;
  if (!input || !output || !root || (format !== 'pdf' && format !== 'svg')) {
    process.stderr.write('usage: compile-typst.mjs <input.typ> <output> <pdf|svg> <root>\n');
    return 64;
  }
  const { NodeCompiler } = require(PACKAGE) as typeof Typst;
  // The root is the job folder: Typst resolves every path (`#read("/etc/passwd")`, images,
  // includes) inside it. The sandbox shows nothing else anyway.
  const compiler = NodeCompiler.create({ workspace: root, fontArgs: [{ fontPaths: ['/usr/share/fonts'] }] });
  const result = compiler.compile({ mainFilePath: input });
  const error = result.takeError();
  const doc = result.result;
  if (error || !doc) {
    const diagnostics = (error?.shortDiagnostics ?? []) as Diagnostic[];
    const errors = diagnostics.filter((d) => d.severity === 1 || d.severity === 'error' || diagnostics.length === 1).map((d) => String(d.message ?? ''));
    process.stdout.write(`${JSON.stringify({ errors: errors.length ? errors : [error?.kind ?? 'unknown error'] })}\n`);
    return 2;
  }
  const bytes = format === 'pdf' ? compiler.pdf(doc) : Buffer.from(compiler.plainSvg(doc), 'utf8');
  writeFileSync(output, bytes, { mode: 0o644 });
  return 0;
}

process.exitCode = main(process.argv.slice(2));
