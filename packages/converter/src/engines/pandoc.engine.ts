/**
 * pandoc for markup, always with `--sandbox` (readers and writers can touch only the files
 * on the command line: no `\input`, no includes, no remote images). Debian's pandoc does not
 * embed its data files, and the sandbox cannot read them, so ODT output uses the
 * reference.odt shipped with this package (named on the command line, hence readable);
 * DOCX output is not possible in the sandbox and goes markup → ODT → LibreOffice instead.
 */
import { dirname } from 'node:path';
import { packageFile, probeBinaries, runStep, type Engine, type EngineProbe, type Step } from './engine.js';

const PANDOC = '/usr/bin/pandoc';
const READER: Readonly<Record<string, string>> = {
  // Without pandoc's multiline tables: a file that opens with a `---` thematic break and
  // closes a paragraph with another (markdown-it's demo, issue 12's corpus) was read as a
  // one-column table three characters wide, and the PDF set one syllable a line.
  md: 'markdown-multiline_tables', html: 'html', rst: 'rst', org: 'org', tex: 'latex', docx: 'docx', odt: 'odt', epub: 'epub',
  ipynb: 'ipynb', dbk: 'docbook', opml: 'opml', muse: 'muse', textile: 'textile', wiki: 'mediawiki', dokuwiki: 'dokuwiki',
  jira: 'jira', t2t: 't2t', creole: 'creole', man: 'man', fb2: 'fb2', rtf: 'rtf', csv: 'csv',
  jats: 'jats', bib: 'bibtex', haddock: 'haddock', tikiwiki: 'tikiwiki', twiki: 'twiki', vimwiki: 'vimwiki',
  // CSL JSON, the bibliography data citation managers export (only into `bib`: see {@link BIB_DATA}).
  json: 'csljson',
};
/** Debian's pandoc 2.17 has no Typst reader or writer, and cannot write EPUB in its sandbox (no data files; calibre does). */
const WRITER: Readonly<Record<string, string>> = {
  md: 'markdown', html: 'html5', rst: 'rst', org: 'org', tex: 'latex', txt: 'plain', odt: 'odt',
  ipynb: 'ipynb', dbk: 'docbook5', opml: 'opml', muse: 'muse', textile: 'textile', wiki: 'mediawiki', dokuwiki: 'dokuwiki',
  jira: 'jira', man: 'man', adoc: 'asciidoc', texi: 'texinfo', ms: 'ms', tei: 'tei', icml: 'icml', fb2: 'fb2', rtf: 'rtf',
  jats: 'jats_archiving', haddock: 'haddock', zimwiki: 'zimwiki', xwiki: 'xwiki', mkiv: 'context', bib: 'bibtex', json: 'csljson',
};
/** Writers whose fragments are not useful files: write the whole document (Zim's page header included). */
const STANDALONE = new Set(['html', 'tex', 'odt', 'dbk', 'opml', 'man', 'texi', 'ms', 'tei', 'icml', 'fb2', 'rtf', 'jats', 'mkiv', 'zimwiki']);
/**
 * A bibliography holds references, not a document: pandoc's BibTeX reader puts them in the
 * metadata. `bib` ↔ `json` is bibliography data (BibTeX ↔ CSL JSON), nothing else reads or
 * writes CSL JSON here (any other JSON is the data engine's), and `bib` into a document is
 * the formatted reference list (`--citeproc`, pandoc's built-in Chicago author-date style).
 */
const NATIVE_CITATIONS = new Set(['markdown', 'org']);
const BIB_DATA: ReadonlyMap<string, string> = new Map([['bib', 'json'], ['json', 'bib']]);

/** The pandoc engine. */
export class PandocEngine implements Engine {
  readonly name = 'pandoc';
  readonly reads = Object.keys(READER);
  readonly writes = Object.keys(WRITER);

  supports(from: string, to: string): boolean {
    if (from === to) return false;
    if (BIB_DATA.has(from) || BIB_DATA.has(to)) return BIB_DATA.get(from) === to || (from === 'bib' && !BIB_DATA.has(to));
    return true;
  }

  tradesQualityForSize(): boolean {
    return false;
  }

  probe(): Promise<EngineProbe> {
    return probeBinaries(this.name, [PANDOC], ['--version'], /pandoc (\S+)/);
  }

  async convert(step: Step): Promise<void> {
    const writer = WRITER[step.to] ?? step.to;
    // The reference list is rendered by citeproc; writers with native citations would leave it out (pandoc 2.17 writes nothing).
    const args = ['--sandbox', '-f', READER[step.from] ?? step.from, '-t', step.from === 'bib' && NATIVE_CITATIONS.has(writer) ? `${writer}-citations` : writer, '-o', step.output];
    // Standalone output carries a title and encoding header; fragments are not useful files.
    if (STANDALONE.has(step.to)) args.push('--standalone');
    if (step.from === 'bib' && step.to !== 'json') args.push('--citeproc');
    // HTML needs a <title>; pandoc 2.17's ICML writer would put the title's markup inside an attribute (invalid XML).
    if (step.to === 'html') args.push('--metadata', 'pagetitle=Document');
    if (step.to === 'odt') args.push(`--reference-doc=${packageFile('pandoc/reference.odt')}`);
    args.push('--', step.input);
    // The reference document is the only file outside the job folder pandoc may read.
    await runStep(step, PANDOC, args, { readOnly: [dirname(packageFile('pandoc/reference.odt'))] });
  }
}
