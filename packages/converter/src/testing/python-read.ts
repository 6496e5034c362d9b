/**
 * Python's own parsers as the referee of the data engine's outputs (issue 12): each file read
 * with the parser of its format, all files in one Python run (issue 44: a process per file
 * cost more than the conversions), each answering its value or that parser's error.
 */
import assert from 'node:assert/strict';
import { runTool } from './tools.js';

/** One file as Python read it. */
export type PythonRead = { value: unknown } | { error: string };

/** What {@link pythonReader} makes. */
export interface PythonReader {
  /** Every file read, in one run, in the files' order. */
  readAll(files: ReadonlyArray<{ path: string; fmt: string }>): Promise<PythonRead[]>;
  /** One file's value; the test fails when its parser does not read it. */
  read(path: string, fmt: string): Promise<unknown>;
  /** Every file's value, in one run; the test fails naming the `label` of a file its parser does not read. */
  values(files: ReadonlyArray<{ path: string; fmt: string; label: string }>): Promise<unknown[]>;
}

/**
 * `readers`: per format, a Python expression of the path `p`; `prelude`: imports and helpers
 * the expressions use; `setup`: lines run before each file is read (indented two spaces).
 */
export function pythonReader(readers: Readonly<Record<string, string>>, options: { prelude?: string; setup?: string } = {}): PythonReader {
  const branches = Object.entries(readers).map(([fmt, code]) => `  if f == ${JSON.stringify(fmt)}: return ${code}`).join('\n');
  const code = `${options.prelude ?? 'import sys,json,csv\n'}def read(f, p):\n${options.setup ?? ''}${branches}\n  raise ValueError("no reader for " + f)\n`
    + 'out=[]\nfor f, p in zip(sys.argv[1::2], sys.argv[2::2]):\n  try: out.append({"value": read(f, p)})\n  except Exception as e: out.append({"error": repr(e)})\nprint(json.dumps(out))';
  const readAll = async (files: ReadonlyArray<{ path: string; fmt: string }>): Promise<PythonRead[]> => {
    const r = await runTool('/usr/bin/python3', ['-c', code, ...files.flatMap((f) => [f.fmt, f.path])]);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout.toString('utf8')) as PythonRead[];
  };
  const values = async (files: ReadonlyArray<{ path: string; fmt: string; label: string }>): Promise<unknown[]> => {
    const reads = await readAll(files);
    assert.equal(reads.length, files.length);
    return files.map(({ label }, i) => {
      const found = reads[i];
      if (!found || 'error' in found) return assert.fail(`${label}: python could not read it: ${found?.error}`);
      return found.value;
    });
  };
  return {
    readAll,
    values,
    async read(path, fmt) {
      const [found] = await readAll([{ path, fmt }]);
      if (!found || 'error' in found) return assert.fail(`python could not read ${fmt}: ${found?.error}`);
      return found.value;
    },
  };
}
