import MarkdownIt from 'markdown-it';

/**
 * The code blocks of a markdown file and how each is classified (issue 30, item 4). Every
 * fenced block carries an HTML comment on the line right before its fence:
 *
 *   <!-- snippet: run -->                 executed by docs-snippets.test.ts, must exit 0
 *   <!-- snippet: server -->              a program that keeps running (a webhook receiver):
 *                                         the test starts it, exercises it, stops it
 *   <!-- snippet: output -->              what the run block right before it prints (its JSON
 *                                         keys are checked against what that block printed)
 *   <!-- snippet: fragment (reason) -->   shown, not executed; the reason is required
 *
 * Any other note in parentheses after run/server/output is a comment for the reader.
 */

export type Kind = 'run' | 'server' | 'output' | 'fragment';

export interface Snippet {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The fence's language (`sh`, `ts`, …), '' when none. */
  lang: string;
  kind: Kind;
  note: string;
  code: string;
  /** The `##` heading the block is under ('' before the first). */
  section: string;
}

const MARKER = /^<!--\s*snippet:\s*(run|server|output|fragment)\s*(?:\((.*)\))?\s*-->\s*$/;

/**
 * The blocks of one file, and the problems found: blocks without a marker, fragments without
 * a reason, output blocks not right after a run block. With `sections`, only blocks under
 * those `##` headings are taken (a file being opted in a section at a time).
 */
export function extractSnippets(file: string, markdown: string, sections?: readonly string[]): { snippets: Snippet[]; problems: string[] } {
  const lines = markdown.split('\n');
  const tokens = new MarkdownIt().parse(markdown, {});
  const snippets: Snippet[] = [];
  const problems: string[] = [];
  let section = '';
  tokens.forEach((token, i) => {
    if (token.type === 'heading_open' && token.tag === 'h2') section = tokens[i + 1]?.content.trim() ?? '';
    if ((token.type !== 'fence' && token.type !== 'code_block') || !token.map) return;
    if (sections && !sections.includes(section)) return;
    const line = token.map[0] + 1;
    const where = `${file}:${line}`;
    const match = MARKER.exec(lines[line - 2] ?? '');
    if (token.type === 'code_block' || !match) {
      problems.push(`${where}: a code block without <!-- snippet: run|server|output|fragment (reason) --> on the line before its fence`);
      return;
    }
    const kind = match[1] as Kind;
    const note = (match[2] ?? '').trim();
    if (kind === 'fragment' && !note) problems.push(`${where}: a fragment needs its reason, <!-- snippet: fragment (why it is not run) -->`);
    if (kind === 'output' && snippets.at(-1)?.kind !== 'run') problems.push(`${where}: an output block must follow a run block`);
    snippets.push({ file, line, lang: token.info.trim().split(/\s+/)[0] ?? '', kind, note, code: token.content, section });
  });
  return { snippets, problems };
}

/**
 * The shape check of an output block against what its run block printed: every JSON key the
 * sample shows (`"key":`) must be in the actual output. Samples may abbreviate (`…`), so they
 * are not parsed. Returns the missing keys.
 */
export function missingKeys(sample: string, actual: string): string[] {
  const keys = new Set([...sample.matchAll(/"([A-Za-z_][\w-]*)"\s*:/g)].map((m) => m[1]!));
  return [...keys].filter((key) => !new RegExp(`"${key}"\\s*:`).test(actual));
}

/** Replaces each key of `map` in `code` by its value (the loopback stand-ins). */
export function rewrite(code: string, map: Readonly<Record<string, string>>): string {
  // One pass, longest first: a replacement is never rewritten again (issue 44: redis …/0 became
  // …/15, whose prefix …/1 then made it …/155, a database Redis does not have).
  const froms = Object.keys(map).sort((a, b) => b.length - a.length);
  if (!froms.length) return code;
  const any = new RegExp(froms.map((f) => f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g');
  return code.replace(any, (found) => map[found] as string);
}
