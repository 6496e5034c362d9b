/**
 * The XML pre-pass (issue 21): internal general entities are expanded here, under our bound,
 * so that no engine's XML parser ever sees an entity declaration.
 *
 * Real documents declare internal entities (DocBook `<!ENTITY product "…">`, Adobe
 * Illustrator's `<!ENTITY ns_svg "http://www.w3.org/2000/svg">` used in `xmlns="&ns_svg;"`).
 * They are expanded in text and attribute values, nested ones too, and the document is
 * written again without its internal subset: the DOCTYPE keeps its name and external
 * identifier (never fetched by anyone: the engines run without network and the identifier is
 * only a name) and loses the `[…]` part. What stays refused, with a message naming it:
 *
 * - external entities (`<!ENTITY x SYSTEM "file:///…">`, `PUBLIC`, unparsed `NDATA` ones),
 * - parameter entities (`<!ENTITY % x …>` and `%x;` references: they pull in other DTDs),
 * - references to names the document does not declare (other than the five built-ins),
 * - expansion past `maxExpansion` characters in total (billion laughs, quadratic blow-up),
 *   an entity that refers to itself, and nesting deeper than {@link MAX_DEPTH}.
 *
 * Why our own small parser and not a library: the document must come out byte for byte as it
 * went in except for the expanded references (no re-serialisation of comments, CDATA,
 * namespaces or whitespace), and the expansion bound must be ours. saxes and
 * @xmldom/xmldom do not parse the internal subset at all; fast-xml-parser reads
 * `<!ENTITY` declarations but builds objects, it does not rewrite a document. The grammar
 * needed is small: the prolog, the internal subset's declarations (XML 1.0 §2.8, §4.2) and,
 * for the body, tags, attribute values, references, comments, CDATA and processing
 * instructions; well-formedness beyond that is left to the engine's parser, which still
 * reads the whole document.
 *
 * The rewritten copy is UTF-8 (the XML declaration's `encoding` says so); UTF-8, UTF-16
 * (with a byte order mark, or recognised from `<?xml` as the XML spec's appendix F does) and
 * every encoding the runtime's `TextDecoder` knows are read.
 */
import { failed, quote } from '../errors.js';

/** The five entities every XML parser knows without a declaration. */
const BUILT_IN = new Set(['lt', 'gt', 'amp', 'apos', 'quot']);
/** Nesting of entity references (libxml2 stops at 40). */
export const MAX_DEPTH = 40;
/** Bytes read for the prolog (XML declaration, comments, DOCTYPE with its internal subset). */
export const PROLOG_BYTES = 1024 * 1024;
/** Largest document whose entities are expanded (read and rewritten in memory, as the data worker's 32 MiB). */
export const MAX_REWRITE_BYTES = 32 * 1024 * 1024;

const NAME_START = ':A-Z_a-z\\u00C0-\\u00D6\\u00D8-\\u00F6\\u00F8-\\u02FF\\u0370-\\u037D\\u037F-\\u1FFF\\u200C-\\u200D\\u2070-\\u218F\\u2C00-\\u2FEF\\u3001-\\uD7FF\\uF900-\\uFDCF\\uFDF0-\\uFFFD\\u{10000}-\\u{EFFFF}';
// The combining marks come first in the class: after another character they would read as one
// combined character (eslint's no-misleading-character-class).
const NAME_CHAR = `\\u0300-\\u036F${NAME_START}\\-.0-9\\u00B7\\u203F-\\u2040`;
/** An XML Name at `lastIndex` (sticky). */
const NAME = new RegExp(`[${NAME_START}][${NAME_CHAR}]*`, 'uy');
const SPACE = /[ \t\r\n]*/y;
const CHAR_REF = /&#(?:x([0-9a-fA-F]+)|([0-9]+));/y;
const ENTITY_REF = new RegExp(`&([${NAME_START}][${NAME_CHAR}]*);`, 'uy');
const PE_REF = new RegExp(`%([${NAME_START}][${NAME_CHAR}]*);`, 'uy');

/** What the prolog holds, as far as the pre-pass cares. */
export interface XmlProlog {
  /** The XML declaration `<?xml …?>`, if any: [start, end). */
  readonly decl?: readonly [number, number];
  /** The DOCTYPE: [start, end), the part kept (`<!DOCTYPE name ExternalID`) and its entities. */
  readonly doctype?: {
    readonly start: number;
    readonly end: number;
    readonly kept: string;
    readonly hasSubset: boolean;
    readonly entities: ReadonlyMap<string, string>;
  };
  /** Where the root element starts. */
  readonly root: number;
}

/** The outcome of {@link parseProlog} on a document's head. */
export type PrologResult =
  | { readonly kind: 'prolog'; readonly prolog: XmlProlog }
  /** The head ends inside the prolog: more text is needed. */
  | { readonly kind: 'incomplete' }
  /** Not an XML prolog we can read (text before the root, a broken declaration). */
  | { readonly kind: 'unreadable' };

/** A document after the pre-pass. */
export interface Expanded {
  readonly text: string;
  /** Entity references expanded (nested ones included). */
  readonly references: number;
  /** Characters of replacement text expanded, counted against the bound. */
  readonly expandedChars: number;
}

/** The encoding a document is read in, from its byte order mark or XML declaration. */
export interface XmlEncoding {
  /** A `TextDecoder` label, or undefined when the runtime does not know the declared one. */
  readonly label: string | undefined;
  /** As the document names it (for messages). */
  readonly declared: string;
  /** Bytes of byte order mark to skip. */
  readonly bom: number;
}

/**
 * The encoding of `head` (the file's first bytes): a byte order mark first, then UTF-16
 * recognised from `<?` (XML 1.0 appendix F), then the XML declaration's `encoding`, else UTF-8.
 */
export function sniffEncoding(head: Buffer): XmlEncoding {
  const b = (i: number): number => head[i] ?? -1;
  if (b(0) === 0xef && b(1) === 0xbb && b(2) === 0xbf) return { label: 'utf-8', declared: 'UTF-8', bom: 3 };
  if ((b(0) === 0xff && b(1) === 0xfe && b(2) === 0 && b(3) === 0) || (b(0) === 0 && b(1) === 0 && b(2) === 0xfe && b(3) === 0xff)) {
    return { label: undefined, declared: 'UTF-32', bom: 4 };
  }
  if (b(0) === 0xff && b(1) === 0xfe) return { label: 'utf-16le', declared: 'UTF-16', bom: 2 };
  if (b(0) === 0xfe && b(1) === 0xff) return { label: 'utf-16be', declared: 'UTF-16', bom: 2 };
  if (b(0) === 0x3c && b(1) === 0 && b(2) === 0x3f && b(3) === 0) return { label: 'utf-16le', declared: 'UTF-16LE', bom: 0 };
  if (b(0) === 0 && b(1) === 0x3c && b(2) === 0 && b(3) === 0x3f) return { label: 'utf-16be', declared: 'UTF-16BE', bom: 0 };
  const decl = /^<\?xml[ \t\r\n][^>]*?encoding[ \t\r\n]*=[ \t\r\n]*(["'])([A-Za-z][A-Za-z0-9._-]*)\1/.exec(head.subarray(0, 1024).toString('latin1'));
  const declared = decl?.[2] ?? 'UTF-8';
  return { label: decoderLabel(declared), declared, bom: 0 };
}

function decoderLabel(name: string): string | undefined {
  try {
    return new TextDecoder(name).encoding;
  } catch {
    return undefined;
  }
}

/** `bytes` (BOM skipped) as text; `fatal`: throw on a malformed sequence instead of replacing it. */
export function decodeXml(bytes: Buffer, enc: XmlEncoding, fatal: boolean): string {
  const body = bytes.subarray(enc.bom);
  // An unknown label: ASCII-compatible for the prolog (a rewrite refuses such files earlier).
  if (!enc.label) return body.toString('latin1');
  return new TextDecoder(enc.label, { fatal }).decode(body);
}

/** Parses the prolog of `text` (no BOM): declaration, comments, PIs, DOCTYPE with its internal subset. */
export function parseProlog(text: string, ext: string): PrologResult {
  let pos = 0;
  let decl: readonly [number, number] | undefined;
  let doctype: XmlProlog['doctype'];
  if (/^<\?xml[ \t\r\n?]/.test(text)) {
    const end = text.indexOf('?>');
    if (end < 0) return { kind: 'incomplete' };
    decl = [0, end + 2];
    pos = end + 2;
  }
  for (;;) {
    pos = skipSpace(text, pos);
    if (pos >= text.length) return { kind: 'incomplete' };
    if (text.startsWith('<!--', pos)) {
      const end = text.indexOf('-->', pos + 4);
      if (end < 0) return { kind: 'incomplete' };
      pos = end + 3;
    } else if (text.startsWith('<?', pos)) {
      const end = text.indexOf('?>', pos + 2);
      if (end < 0) return { kind: 'incomplete' };
      pos = end + 2;
    } else if (text.startsWith('<!DOCTYPE', pos) && !doctype) {
      const d = parseDoctype(text, pos, ext);
      if (d === 'incomplete' || d === 'unreadable') return { kind: d };
      doctype = d;
      pos = d.end;
    } else if (text[pos] === '<' && nameAt(text, pos + 1)) {
      return { kind: 'prolog', prolog: { ...(decl ? { decl } : {}), ...(doctype ? { doctype } : {}), root: pos } };
    } else {
      return { kind: 'unreadable' };
    }
  }
}

function skipSpace(text: string, pos: number): number {
  SPACE.lastIndex = pos;
  SPACE.test(text);
  return SPACE.lastIndex;
}

function nameAt(text: string, pos: number): string | undefined {
  NAME.lastIndex = pos;
  return NAME.exec(text)?.[0];
}

/** A quoted literal at `pos`: its content and the position after it; undefined when not one. */
function literalAt(text: string, pos: number): { value: string; end: number } | 'incomplete' | undefined {
  const q = text[pos];
  if (q !== '"' && q !== "'") return undefined;
  const end = text.indexOf(q, pos + 1);
  if (end < 0) return 'incomplete';
  return { value: text.slice(pos + 1, end), end: end + 1 };
}

function parseDoctype(text: string, start: number, ext: string): NonNullable<XmlProlog['doctype']> | 'incomplete' | 'unreadable' {
  let pos = start + '<!DOCTYPE'.length;
  const afterKeyword = skipSpace(text, pos);
  if (afterKeyword >= text.length) return 'incomplete';
  if (afterKeyword === pos) return 'unreadable';
  const name = nameAt(text, afterKeyword);
  if (!name) return 'unreadable';
  pos = afterKeyword + name.length;
  // ExternalID: SYSTEM "uri" | PUBLIC "pubid" "uri" — kept as a name, never fetched.
  const sp = skipSpace(text, pos);
  for (const [keyword, literals] of [['SYSTEM', 1], ['PUBLIC', 2]] as const) {
    if (!text.startsWith(keyword, sp)) continue;
    pos = sp + keyword.length;
    for (let i = 0; i < literals; i++) {
      pos = skipSpace(text, pos);
      const lit = literalAt(text, pos);
      if (lit === 'incomplete' || pos >= text.length) return 'incomplete';
      if (!lit) return 'unreadable';
      pos = lit.end;
    }
  }
  const kept = text.slice(start, pos);
  pos = skipSpace(text, pos);
  if (pos >= text.length) return 'incomplete';
  let entities = new Map<string, string>();
  let hasSubset = false;
  if (text[pos] === '[') {
    hasSubset = true;
    const subset = parseInternalSubset(text, pos + 1, ext);
    if (subset === 'incomplete' || subset === 'unreadable') return subset;
    entities = subset.entities;
    pos = skipSpace(text, subset.end);
  }
  if (pos >= text.length) return 'incomplete';
  if (text[pos] !== '>') return 'unreadable';
  return { start, end: pos + 1, kept, hasSubset, entities };
}

/**
 * The internal subset from `pos` (after `[`) to its `]`: general entity declarations are
 * collected (the first declaration of a name binds, as XML 1.0 §4.2 says), element,
 * attribute-list and notation declarations, comments and PIs skipped; anything that could
 * pull in another file is refused.
 */
function parseInternalSubset(text: string, pos: number, ext: string): { entities: Map<string, string>; end: number } | 'incomplete' | 'unreadable' {
  const entities = new Map<string, string>();
  for (;;) {
    pos = skipSpace(text, pos);
    if (pos >= text.length) return 'incomplete';
    if (text[pos] === ']') return { entities, end: pos + 1 };
    if (text.startsWith('<!--', pos)) {
      const end = text.indexOf('-->', pos + 4);
      if (end < 0) return 'incomplete';
      pos = end + 3;
    } else if (text.startsWith('<?', pos)) {
      const end = text.indexOf('?>', pos + 2);
      if (end < 0) return 'incomplete';
      pos = end + 2;
    } else if (text[pos] === '%') {
      PE_REF.lastIndex = pos;
      const ref = PE_REF.exec(text);
      throw failed(`The ${ext} file's DOCTYPE uses the parameter entity ${quote(`%${ref?.[1] ?? ''};`)}: parameter entities pull in other DTDs and are refused.`);
    } else if (text.startsWith('<!ENTITY', pos)) {
      const decl = parseEntityDecl(text, pos, ext);
      if (decl === 'incomplete' || decl === 'unreadable') return decl;
      if (!entities.has(decl.name)) entities.set(decl.name, decl.value);
      pos = decl.end;
    } else if (/^<!(?:ELEMENT|ATTLIST|NOTATION)[ \t\r\n]/.test(text.slice(pos, pos + 11))) {
      const end = skipMarkupDecl(text, pos, ext);
      if (end === 'incomplete' || end === 'unreadable') return end;
      pos = end;
    } else {
      return 'unreadable';
    }
  }
}

/** `<!ENTITY name "value">`: the name and its replacement text; external and parameter entities throw. */
function parseEntityDecl(text: string, start: number, ext: string): { name: string; value: string; end: number } | 'incomplete' | 'unreadable' {
  let pos = skipSpace(text, start + '<!ENTITY'.length);
  if (pos >= text.length) return 'incomplete';
  if (text[pos] === '%') {
    const name = nameAt(text, skipSpace(text, pos + 1)) ?? '';
    throw failed(`The ${ext} file declares the parameter entity ${quote(`%${name}`)}: parameter entities pull in other DTDs and are refused.`);
  }
  const name = nameAt(text, pos);
  if (!name) return 'unreadable';
  pos = skipSpace(text, pos + name.length);
  if (pos >= text.length) return 'incomplete';
  if (text.startsWith('SYSTEM', pos) || text.startsWith('PUBLIC', pos)) {
    throw failed(`The ${ext} file declares the external entity ${quote(name)} (${text.startsWith('SYSTEM', pos) ? 'SYSTEM' : 'PUBLIC'}), which would read another file or URL; external entities are refused.`);
  }
  const lit = literalAt(text, pos);
  if (lit === 'incomplete') return 'incomplete';
  if (!lit) return 'unreadable';
  pos = skipSpace(text, lit.end);
  if (pos >= text.length) return 'incomplete';
  if (text[pos] !== '>') return 'unreadable';
  return { name, value: entityValue(lit.value, name, ext), end: pos + 1 };
}

/**
 * The replacement text of a literal entity value (XML 1.0 §4.5): character references are
 * replaced now, general entity references are kept (expanded where the entity is used),
 * parameter entity references are refused.
 */
function entityValue(literal: string, name: string, ext: string): string {
  let out = '';
  let i = 0;
  const special = /[&%]/g;
  while (i < literal.length) {
    special.lastIndex = i;
    const next = special.exec(literal)?.index ?? -1;
    if (next < 0) return out + literal.slice(i);
    out += literal.slice(i, next);
    i = next;
    if (literal[i] === '%') {
      throw failed(`The ${ext} file's entity ${quote(name)} uses a parameter entity: parameter entities pull in other DTDs and are refused.`);
    }
    CHAR_REF.lastIndex = i;
    const c = CHAR_REF.exec(literal);
    if (c) {
      out += charFromRef(c, ext);
      i = CHAR_REF.lastIndex;
      continue;
    }
    ENTITY_REF.lastIndex = i;
    const r = ENTITY_REF.exec(literal);
    if (!r) throw failed(`The ${ext} file's entity ${quote(name)} holds a bare "&": the document is not well-formed XML.`);
    out += r[0];
    i = ENTITY_REF.lastIndex;
  }
  return out;
}

function charFromRef(m: RegExpExecArray, ext: string): string {
  const code = m[1] !== undefined ? parseInt(m[1], 16) : Number(m[2]);
  const ok = code === 0x9 || code === 0xa || code === 0xd || (code >= 0x20 && code <= 0xd7ff) || (code >= 0xe000 && code <= 0xfffd) || (code >= 0x10000 && code <= 0x10ffff);
  if (!ok) throw failed(`The ${ext} file refers to a character XML does not allow (${quote(m[0])}).`);
  return String.fromCodePoint(code);
}

/** Skips an element, attribute-list or notation declaration (quoted literals may hold `>`). */
function skipMarkupDecl(text: string, pos: number, ext: string): number | 'incomplete' | 'unreadable' {
  pos += 2;
  while (pos < text.length) {
    const ch = text[pos];
    if (ch === '>') return pos + 1;
    if (ch === '"' || ch === "'") {
      const lit = literalAt(text, pos);
      if (lit === 'incomplete' || !lit) return 'incomplete';
      pos = lit.end;
    } else if (ch === '%') {
      PE_REF.lastIndex = pos;
      const ref = PE_REF.exec(text);
      throw failed(`The ${ext} file's DOCTYPE uses the parameter entity ${quote(`%${ref?.[1] ?? ''};`)}: parameter entities pull in other DTDs and are refused.`);
    } else if (ch === '<') {
      return 'unreadable';
    } else {
      pos += 1;
    }
  }
  return 'incomplete';
}

/**
 * Expands the internal entities of `text` (the whole document, no BOM; `prolog` its parsed
 * prolog): the XML declaration says UTF-8, the DOCTYPE loses its internal subset, and every
 * reference to a declared entity in text and attribute values is replaced by its expansion.
 * Throws a `conversion_failed` error for what the pre-pass refuses.
 */
export function expandEntities(text: string, prolog: XmlProlog, ext: string, maxExpansion: number): Expanded {
  const doctype = prolog.doctype;
  const state: ExpandState = { ext, entities: doctype?.entities ?? new Map(), max: maxExpansion, expanded: 0, references: 0, stack: [] };
  const out: string[] = [];
  let pos = 0;
  if (prolog.decl) {
    out.push(utf8Declaration(text.slice(prolog.decl[0], prolog.decl[1])));
    pos = prolog.decl[1];
  }
  if (doctype) {
    out.push(text.slice(pos, doctype.start), `${doctype.kept}>`);
    pos = doctype.end;
  }
  out.push(text.slice(pos, prolog.root));
  rewriteContent(text.slice(prolog.root), out, state);
  return { text: out.join(''), references: state.references, expandedChars: state.expanded };
}

/** The XML declaration naming UTF-8, the encoding the rewritten copy is written in. */
function utf8Declaration(decl: string): string {
  return decl.replace(/(encoding[ \t\r\n]*=[ \t\r\n]*)(["'])[^"']*\2/, '$1$2UTF-8$2');
}

interface ExpandState {
  readonly ext: string;
  readonly entities: ReadonlyMap<string, string>;
  readonly max: number;
  expanded: number;
  references: number;
  /** Entities being expanded, outermost first (a recursion check and the nesting depth). */
  readonly stack: string[];
}

/** Markup copied unchanged: references inside are not references. */
const VERBATIM = [['<!--', '-->'], ['<![CDATA[', ']]>'], ['<?', '?>']] as const;

/**
 * Copies `src` (content: character data and markup) to `out`, expanding entity references.
 * Only what changes is cut out: the text between expansions goes as one slice. A replacement
 * text is copied as it is too: a carriage return that a character reference put there reaches
 * the engine as a line break, as libxml2 reads it in place.
 */
function rewriteContent(src: string, out: string[], st: ExpandState): void {
  let i = 0;
  let copied = 0;
  const n = src.length;
  const special = /[<&]/g;
  const replace = (start: number, end: number, emit: () => void): void => {
    if (start > copied) out.push(src.slice(copied, start));
    emit();
    copied = end;
  };
  while (i < n) {
    special.lastIndex = i;
    const next = special.exec(src);
    if (!next) break;
    i = next.index;
    if (src[i] === '&') {
      const ref = reference(src, i, st);
      const { name } = ref;
      if (name !== undefined) replace(i, ref.end, () => expandEntity(st, name, (value) => rewriteContent(value, out, st)));
      i = ref.end;
      continue;
    }
    const verbatim = VERBATIM.find(([open]) => src.startsWith(open, i));
    if (verbatim) {
      const [open, close] = verbatim;
      const end = src.indexOf(close, i + open.length);
      if (end < 0) throw notWellFormed(st, `${open} without its ${close}`);
      i = end + close.length;
    } else if (src.startsWith('</', i)) {
      const end = src.indexOf('>', i);
      if (end < 0) throw notWellFormed(st, 'an end tag without its ">"');
      i = end + 1;
    } else if (src.startsWith('<!', i)) {
      throw notWellFormed(st, `${quote(src.slice(i, i + 12))} in the document body`);
    } else {
      i = startTag(src, i, st, (start, end, value) => replace(start, end, () => out.push(value)));
    }
  }
  if (n > copied) out.push(src.slice(copied));
}

/**
 * A start (or empty-element) tag at `i`; `rewrite(start, end, value)` is called for each
 * attribute value (`src[start, end)`) whose references expand. Returns the end of the tag.
 */
function startTag(src: string, i: number, st: ExpandState, rewrite: (start: number, end: number, value: string) => void): number {
  const name = nameAt(src, i + 1);
  if (!name) throw notWellFormed(st, 'a "<" that starts no tag');
  let pos = i + 1 + name.length;
  for (;;) {
    const sp = skipSpace(src, pos);
    const spaced = sp > pos;
    pos = sp;
    if (src.startsWith('/>', pos)) return pos + 2;
    if (src[pos] === '>') return pos + 1;
    // An attribute follows white space; anything else (or the end of the text) is broken.
    const attr = spaced ? nameAt(src, pos) : undefined;
    if (!attr) throw notWellFormed(st, `the tag ${quote(name)} is not closed properly`);
    let p = skipSpace(src, pos + attr.length);
    if (src[p] !== '=') throw notWellFormed(st, `the attribute ${quote(attr)} has no value`);
    p = skipSpace(src, p + 1);
    const q = src[p];
    const end = q === '"' || q === "'" ? src.indexOf(q, p + 1) : -1;
    if (end < 0) throw notWellFormed(st, `the attribute ${quote(attr)} has no quoted value`);
    const value = src.slice(p + 1, end);
    if (value.includes('<')) throw notWellFormed(st, `the attribute ${quote(attr)} holds a "<"`);
    const expanded = value.includes('&') ? attributeValue(value, q as '"' | "'", st) : undefined;
    if (expanded !== undefined) rewrite(p + 1, end, expanded);
    pos = end + 1;
  }
}

/**
 * An attribute value with its entity references expanded, or undefined when it has none to
 * expand. A replacement text may hold the delimiting quote (written as a reference here) but
 * never a literal `<` (XML 1.0, WFC "No < in Attribute Values").
 */
function attributeValue(value: string, q: '"' | "'", st: ExpandState): string | undefined {
  const parts: string[] = [];
  let changed = false;
  const expand = (text: string, nested: boolean): void => {
    let i = 0;
    let copied = 0;
    const flush = (to: number): void => {
      const chunk = text.slice(copied, to);
      if (!nested) {
        parts.push(chunk);
        return;
      }
      if (chunk.includes('<')) throw failed(`The ${st.ext} file uses an entity holding "<" in an attribute value: the document is not well-formed XML.`);
      parts.push(chunk.replaceAll(q, q === '"' ? '&quot;' : '&apos;'));
    };
    for (;;) {
      const amp = text.indexOf('&', i);
      if (amp < 0) break;
      const ref = reference(text, amp, st);
      const { name } = ref;
      if (name !== undefined) {
        changed = true;
        flush(amp);
        expandEntity(st, name, (v) => expand(v, true));
        copied = ref.end;
      }
      i = ref.end;
    }
    flush(text.length);
  };
  expand(value, false);
  return changed ? parts.join('') : undefined;
}

/**
 * The reference at `src[i] === '&'`: its end, and the entity's name when it is one to
 * expand (character references and the five built-ins stay as they are). A bare `&` or a
 * name the document does not declare is refused.
 */
function reference(src: string, i: number, st: ExpandState): { end: number; name?: string } {
  CHAR_REF.lastIndex = i;
  if (CHAR_REF.test(src)) return { end: CHAR_REF.lastIndex };
  ENTITY_REF.lastIndex = i;
  const r = ENTITY_REF.exec(src);
  if (!r) throw notWellFormed(st, 'a bare "&" (write it as &amp;)');
  const name = r[1] as string;
  if (BUILT_IN.has(name)) return { end: ENTITY_REF.lastIndex };
  if (!st.entities.has(name)) {
    throw failed(`The ${st.ext} file uses the entity ${quote(`&${name};`)} without declaring it in its DOCTYPE; only declared entities and the five XML built-ins are expanded, and external DTDs are never read.`);
  }
  return { end: ENTITY_REF.lastIndex, name };
}

/** Hands the replacement text of the declared entity `name` to `emit`, within the bounds. */
function expandEntity(st: ExpandState, name: string, emit: (value: string) => void): void {
  const value = st.entities.get(name) ?? '';
  if (st.stack.includes(name)) throw failed(`The ${st.ext} file's entity ${quote(name)} refers to itself; such files are refused.`);
  if (st.stack.length >= MAX_DEPTH) throw failed(`The ${st.ext} file nests entities more than ${MAX_DEPTH} deep; such files are refused.`);
  st.references += 1;
  // Each expansion costs its replacement text (nested references included) and one for the
  // reference itself, so a chain of empty entities is bounded too.
  st.expanded += value.length + 1;
  if (st.expanded > st.max) {
    throw failed(`The ${st.ext} file's entities expand to more than ${st.max.toLocaleString('en-US')} characters (an entity expansion bomb such as "billion laughs"); such files are refused.`);
  }
  st.stack.push(name);
  emit(value);
  st.stack.pop();
}

function notWellFormed(st: ExpandState, what: string): Error {
  const where = st.stack.length ? ` (in the entity ${quote(st.stack[st.stack.length - 1])})` : '';
  return failed(`The ${st.ext} file is not well-formed XML: ${what}${where}.`);
}
