/**
 * Structured and tabular data: each format parsed into one JavaScript value and written back
 * from one, with these mappings (pure functions; the worker applies the limits):
 *
 * - CSV/TSV ↔ an array of records (the first row names the columns; cells stay strings, so
 *   "00123" is not turned into 123);
 * - a table written from a nested value: the records are found by unwrapping single-key
 *   objects (`{rows: {row: […]}}`, as XML gives them), nested objects become dotted columns
 *   (`address.city`) and arrays JSON text;
 * - JSON/YAML keep everything; NDJSON is one record a line (an array when read);
 * - TOML needs a table at the top (an array becomes `records = [...]`) and has no null (dropped);
 * - XML elements become keys, attributes `@_name`, text `#text`; a written array becomes
 *   `<records><record>…</record></records>` (`{people: […]}`: `<people><record>…`) and keys
 *   that are not XML names are made so;
 * - INI: sections ↔ top-level objects; an object of objects becomes one row per entry with
 *   its key in a `_section` column, which names the sections again when written as INI
 *   (otherwise records become sections `record1`, …, their values flattened).
 */
import { parse as parseCsv } from 'csv-parse/sync';
import { stringify as stringifyCsv } from 'csv-stringify/sync';
import { XMLBuilder, XMLParser, XMLValidator } from 'fast-xml-parser';
import * as ini from 'ini';
import { parse as parseToml, stringify as stringifyToml } from 'smol-toml';
import YAML from 'yaml';
import { BINARY_FORMATS, DataError, EXTRA_TEXT_FORMATS, GEO_SOURCES, MAX_DEPTH, featureRecords, parseBinary, parseExtraText, writeExtra } from './encodings.js';

export { DataError, MAX_DEPTH };

/** The formats this module reads and writes (JSON5 … BSON: `encodings.ts`). */
export const DATA_FORMATS = ['csv', 'tsv', 'json', 'ndjson', 'yaml', 'toml', 'xml', 'ini', ...EXTRA_TEXT_FORMATS, ...BINARY_FORMATS] as const;
/** Formats read but not written (GPX, KML). */
export const DATA_SOURCES_ONLY = GEO_SOURCES;

/** Parses a file's bytes as `format` (UTF-8 text unless the format is binary). */
export function parseBytes(bytes: Uint8Array, format: string): Value {
  if (BINARY_FORMATS.has(format)) {
    const value = parseBinary(bytes, format);
    checkDepth(value);
    return value;
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new DataError(`The ${format} file is not UTF-8 text.`);
  }
  return parseData(text, format);
}

type Value = unknown;
type Rec = Record<string, unknown>;

const isObject = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);

/** Parses `text` as `format`. */
export function parseData(text: string, format: string): Value {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  let value: Value;
  switch (format) {
    case 'csv':
    case 'tsv':
      value = parseCsv(body, { columns: true, skip_empty_lines: true, relax_column_count: true, delimiter: format === 'tsv' ? '\t' : ',' }) as Rec[];
      break;
    case 'json':
      value = JSON.parse(body);
      break;
    case 'ndjson':
      value = body.split(/\r?\n/).filter((l) => l.trim() !== '').map((l, i) => {
        try {
          return JSON.parse(l) as unknown;
        } catch (e) {
          throw new DataError(`Line ${i + 1} is not JSON: ${(e as Error).message}`);
        }
      });
      break;
    case 'yaml': {
      // maxAliasCount bounds alias expansion ("billion laughs"); several documents become an array.
      const docs = YAML.parseAllDocuments(body);
      const list = Array.isArray(docs) ? docs : [docs];
      const bad = list.find((d) => d.errors.length);
      if (bad) throw new DataError(`Not valid YAML: ${bad.errors[0]?.message ?? ''}`);
      const values = list.map((d) => d.toJS({ maxAliasCount: 100 }) as unknown);
      value = values.length === 1 ? values[0] : values;
      break;
    }
    case 'toml':
      value = parseToml(body, { maxDepth: MAX_DEPTH });
      break;
    case 'xml': {
      // Entity declarations are how XML bombs and external entities start; data files need none.
      if (/<!ENTITY/i.test(body)) throw new DataError('The XML declares entities; such files are refused.');
      const valid = XMLValidator.validate(body);
      if (valid !== true) throw new DataError(`Not well-formed XML: ${valid.err.msg} (line ${valid.err.line})`);
      value = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@_', ignoreDeclaration: true, ignorePiTags: true, parseTagValue: false, parseAttributeValue: false, processEntities: true, htmlEntities: false }).parse(body) as unknown;
      break;
    }
    case 'ini':
      value = ini.parse(body);
      break;
    default:
      value = parseExtraText(body, format);
  }
  checkDepth(value);
  return value;
}

/** Refuses values nested deeper than {@link MAX_DEPTH} (walked without recursion). */
export function checkDepth(value: Value): void {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, d] = stack.pop() as [unknown, number];
    if (d > MAX_DEPTH) throw new DataError(`The data is nested more than ${MAX_DEPTH} levels deep.`);
    if (Array.isArray(v)) for (const x of v) stack.push([x, d + 1]);
    else if (isObject(v)) for (const x of Object.values(v)) stack.push([x, d + 1]);
  }
}

/** The records a value holds (see the module comment). */
export function toRecords(value: Value): Rec[] {
  const features = featureRecords(value);
  if (features) return features;
  let v = value;
  while (isObject(v) && Object.keys(v).length === 1 && (isObject(Object.values(v)[0]) || Array.isArray(Object.values(v)[0]))) v = Object.values(v)[0];
  // An object of objects (INI sections, a JSON map of records): one row each, its key kept as `_section`.
  if (isObject(v) && Object.keys(v).length > 1 && Object.values(v).every(isObject)) {
    return Object.entries(v).map(([k, r]) => ({ [SECTION]: k, ...(r as Rec) }));
  }
  const list = Array.isArray(v) ? v : [v];
  return list.map((item) => (isObject(item) ? item : { value: item }));
}

/** The column that carries an INI section's (or a map entry's) name through a table. */
export const SECTION = '_section';

/** INI holds sections of scalars (and top-level scalars); anything deeper is written as records. */
function iniShaped(v: Value): v is Rec {
  const scalar = (x: unknown): boolean => !isObject(x) && !Array.isArray(x);
  return isObject(v) && Object.values(v).every((x) => scalar(x) || (isObject(x) && Object.values(x).every(scalar)));
}

/** One record as flat columns: nested objects dotted, arrays as JSON, null as empty. */
export function flatten(rec: Rec, prefix = '', out: Record<string, string> = {}): Record<string, string> {
  for (const [k, v] of Object.entries(rec)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (isObject(v)) flatten(v, key, out);
    else if (Array.isArray(v)) out[key] = JSON.stringify(v);
    else if (v === null || v === undefined) out[key] = '';
    else if (v instanceof Date) out[key] = v.toISOString();
    else out[key] = String(v as string | number | boolean);
  }
  return out;
}

function table(value: Value, delimiter: string): string {
  const rows = toRecords(value).map((r) => flatten(r));
  const columns: string[] = [];
  const seen = new Set<string>();
  for (const r of rows) for (const k of Object.keys(r)) if (!seen.has(k)) { seen.add(k); columns.push(k); }
  if (!columns.length) throw new DataError('There is no record to write as a table.');
  return stringifyCsv(rows, { header: true, columns, delimiter });
}

/** Drops nulls (TOML has none), recursively. */
function withoutNulls(v: Value): Value {
  if (Array.isArray(v)) return v.filter((x) => x !== null && x !== undefined).map(withoutNulls);
  if (isObject(v)) return Object.fromEntries(Object.entries(v).filter(([, x]) => x !== null && x !== undefined).map(([k, x]) => [k, withoutNulls(x)]));
  return v;
}

/** An XML element name from any key (attributes and text keys pass through). */
function xmlName(k: string): string {
  if (k === '#text' || /^@_[A-Za-z_][\w.-]*$/.test(k)) return k;
  const s = k.replace(/[^\w.-]/g, '_');
  return /^[A-Za-z_]/.test(s) && !/^xml/i.test(s) ? s : `_${s}`;
}

function xmlSafe(v: Value): Value {
  // A list inside a list (GeoJSON coordinates) has no element name of its own: its items become <item> elements
  // (the builder would otherwise name them by index, <0>, which is not XML).
  if (Array.isArray(v)) return v.map((x) => (Array.isArray(x) ? { item: xmlSafe(x) } : xmlSafe(x)));
  if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [xmlName(k), xmlSafe(x)]));
  return v;
}

/** Writes `value` as `format` (bytes for the binary formats). */
export function writeData(value: Value, format: string): string | Uint8Array {
  switch (format) {
    case 'csv':
      return table(value, ',');
    case 'tsv':
      return table(value, '\t');
    case 'json':
      return `${JSON.stringify(value, null, 2)}\n`;
    case 'ndjson':
      // One record a line: a table wrapped in an object (`{people: […]}`) gives its rows.
      return `${(Array.isArray(value) ? value : toRecords(value)).map((v) => JSON.stringify(v)).join('\n')}\n`;
    case 'yaml':
      return YAML.stringify(value);
    case 'toml': {
      const top = isObject(value) ? value : { records: Array.isArray(value) ? value : [value] };
      return `${stringifyToml(withoutNulls(top) as Rec)}\n`;
    }
    case 'xml': {
      let root: Value;
      if (Array.isArray(value)) root = { records: { record: value } };
      else if (isObject(value) && Object.keys(value).length === 1 && !Object.keys(value)[0]?.startsWith('@_')) {
        // One root element; a list under it (`{people: […]}` from TOML or YAML) becomes its `record` children.
        const [[key, inner]] = Object.entries(value) as [[string, unknown]];
        root = Array.isArray(inner) ? { [key]: { record: inner } } : value;
      }
      else root = { root: isObject(value) ? value : { value } };
      const body = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@_', format: true, suppressEmptyNode: true }).build(xmlSafe(root)) as string;
      return `<?xml version="1.0" encoding="UTF-8"?>\n${body}`;
    }
    case 'ini': {
      if (isObject(value) && Object.keys(value).length && Object.keys(value).every((k) => k.includes('.')) && Object.values(value).every((x) => !isObject(x) && !Array.isArray(x))) {
        // Flat dotted keys (Java properties): the first part names the section (`db.host` → [db] host).
        const sections: Record<string, Rec> = {};
        for (const [k, x] of Object.entries(value)) {
          const dot = k.indexOf('.');
          (sections[k.slice(0, dot)] ??= {})[k.slice(dot + 1)] = x;
        }
        return ini.stringify(sections);
      }
      if (iniShaped(value)) return ini.stringify(value);
      const sections = toRecords(value).map((r, i) => {
        const { [SECTION]: name, ...rest } = flatten(r);
        return [name || `record${i + 1}`, rest] as const;
      });
      return ini.stringify(Object.fromEntries(sections));
    }
    default:
      return writeExtra(value, format);
  }
}
