/** Markup languages (pandoc's side; calibre reads Markdown and HTML into e-books). */
import type { FormatEntry } from '../catalogue.js';

export const MARKUP: readonly FormatEntry[] = [
  { ext: 'md', aliases: ['markdown'], mime_type: 'text/markdown', family: 'markup', name: 'Markdown' },
  { ext: 'html', aliases: ['htm', 'xhtml'], mime_type: 'text/html', family: 'markup', name: 'HTML' },
  { ext: 'rst', mime_type: 'text/x-rst', family: 'markup', name: 'reStructuredText' },
  { ext: 'org', mime_type: 'text/x-org', family: 'markup', name: 'Org mode' },
  { ext: 'tex', aliases: ['latex'], mime_type: 'application/x-tex', family: 'markup', name: 'LaTeX' },
  { ext: 'ipynb', mime_type: 'application/x-ipynb+json', family: 'markup', name: 'Jupyter notebook' },
  { ext: 'dbk', aliases: ['docbook'], mime_type: 'application/docbook+xml', family: 'markup', name: 'DocBook' },
  { ext: 'opml', mime_type: 'text/x-opml', family: 'markup', name: 'OPML outline' },
  { ext: 'muse', mime_type: 'text/x-muse', family: 'markup', name: 'Emacs Muse' },
  { ext: 'textile', mime_type: 'text/x-textile', family: 'markup', name: 'Textile' },
  { ext: 'wiki', aliases: ['mediawiki'], mime_type: 'text/x-mediawiki', family: 'markup', name: 'MediaWiki markup' },
  { ext: 'dokuwiki', mime_type: 'text/x-dokuwiki', family: 'markup', name: 'DokuWiki markup' },
  { ext: 'jira', mime_type: 'text/x-jira-wiki', family: 'markup', name: 'Jira wiki markup' },
  { ext: 't2t', mime_type: 'text/x-txt2tags', family: 'markup', name: 'txt2tags' },
  { ext: 'creole', mime_type: 'text/x-wiki-creole', family: 'markup', name: 'Wiki Creole' },
  { ext: 'man', mime_type: 'text/troff', family: 'markup', name: 'Unix manual page (roff man)' },
  { ext: 'adoc', aliases: ['asciidoc'], mime_type: 'text/asciidoc', family: 'markup', name: 'AsciiDoc' },
  { ext: 'texi', aliases: ['texinfo'], mime_type: 'application/x-texinfo', family: 'markup', name: 'Texinfo' },
  { ext: 'ms', mime_type: 'text/x-troff-ms', family: 'markup', name: 'roff ms' },
  { ext: 'tei', mime_type: 'application/tei+xml', family: 'markup', name: 'TEI Simple XML' },
  { ext: 'icml', mime_type: 'application/vnd.adobe.incopy+xml', family: 'markup', name: 'InCopy ICML' },
  // pandoc 2.17's other readers and writers. JATS articles are `.xml` in the wild (PubMed Central's `.nxml`).
  { ext: 'jats', aliases: ['nxml'], mime_type: 'application/jats+xml', family: 'markup', name: 'JATS XML (journal article)' },
  // A bibliography: read into a formatted reference list (citeproc), or into CSL JSON (`json`).
  { ext: 'bib', aliases: ['bibtex', 'biblatex'], mime_type: 'application/x-bibtex', family: 'markup', name: 'BibTeX/BibLaTeX bibliography' },
  { ext: 'haddock', mime_type: 'text/x-haddock', family: 'markup', name: 'Haddock markup' },
  { ext: 'zimwiki', mime_type: 'text/x-zim-wiki', family: 'markup', name: 'Zim wiki page' },
  { ext: 'xwiki', mime_type: 'text/x-xwiki', family: 'markup', name: 'XWiki 2.1 markup' },
  // ConTeXt sources are `.tex` too (LaTeX's); `.mkiv` is the MkIV-era extension ConTeXt itself uses.
  { ext: 'mkiv', aliases: ['context'], mime_type: 'text/x-context', family: 'markup', name: 'ConTeXt' },
  { ext: 'tikiwiki', mime_type: 'text/x-tikiwiki', family: 'markup', name: 'TikiWiki markup' },
  { ext: 'twiki', mime_type: 'text/x-twiki', family: 'markup', name: 'TWiki markup' },
  { ext: 'vimwiki', mime_type: 'text/x-vimwiki', family: 'markup', name: 'Vimwiki markup' },
  // Perl's documentation format (perlpod), read by Perl's own pod2html/pod2man/pod2text.
  { ext: 'pod', mime_type: 'text/x-pod', family: 'markup', name: 'Perl POD' },
  // Typst, compiled by the Typst compiler npm ships for Node (to PDF and SVG; the rest through PDF).
  { ext: 'typ', aliases: ['typst'], mime_type: 'text/x-typst', family: 'markup', name: 'Typst document' },
];
