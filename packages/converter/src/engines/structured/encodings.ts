/**
 * The data formats beyond the tabular ones (issue 12), each read into one JavaScript value and
 * written from one, with well-kept npm libraries (pure JavaScript, no native build):
 *
 * - JSON5 (`json5`), XML property lists (`plist`), Java `.properties` (`properties-file`: keys
 *   stay flat, `a.b=1` is the key `a.b`; written values are flattened the same way, arrays by
 *   index: `people.0.name`);
 * - binary: MessagePack (`@msgpack/msgpack`), CBOR (`cbor2`), BSON (`bson`, relaxed Extended
 *   JSON for its own types: `{"$oid": …}`); byte strings become base64 text, maps with
 *   non-string keys objects with the keys as text, big integers numbers (text when unsafe);
 *   every length prefix is capped by the input's size and nesting by {@link MAX_DEPTH};
 * - geodata: GPX, KML and Garmin TCX read into GeoJSON (`@tmcw/togeojson` over `@xmldom/xmldom`);
 *   GeoJSON is JSON that must be GeoJSON; a FeatureCollection's features are the records of
 *   a table ({@link featureRecords}).
 *
 * Pure functions; the worker applies the size, heap and time limits.
 */
import { decode as decodeMsgpack, encode as encodeMsgpack } from '@msgpack/msgpack';
import { gpx, kml, tcx } from '@tmcw/togeojson';
import { DOMParser } from '@xmldom/xmldom';
import { BSON, EJSON } from 'bson';
import { decode as decodeCbor, encode as encodeCbor } from 'cbor2';
import JSON5 from 'json5';
import { build as buildPlist, parse as parsePlist, type PlistValue } from 'plist';
import { getProperties } from 'properties-file';
import { escapeKey, escapeValue } from 'properties-file/escape';

/** Deepest nesting accepted in any parsed value (hostile input: stack depth in the writers). */
export const MAX_DEPTH = 64;

/** A parse or mapping problem with a message fit for the caller. */
export class DataError extends Error {}

/** Formats read from bytes (everything else here is UTF-8 text). */
export const BINARY_FORMATS: ReadonlySet<string> = new Set(['msgpack', 'cbor', 'bson']);
/** The text formats this module reads and writes. */
export const EXTRA_TEXT_FORMATS = ['json5', 'plist', 'properties', 'geojson'] as const;
/** Read only: nothing here writes GPX or KML. */
export const GEO_SOURCES = ['gpx', 'kml', 'tcx'] as const;

type Rec = Record<string, unknown>;
const isObject = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);

const GEOJSON_TYPES = new Set(['FeatureCollection', 'Feature', 'Point', 'MultiPoint', 'LineString', 'MultiLineString', 'Polygon', 'MultiPolygon', 'GeometryCollection']);

/** XML entity declarations are how bombs and external entities start; plists and GPX/KML need none. */
function refuseEntities(text: string, format: string): void {
  if (/<!ENTITY/i.test(text)) throw new DataError(`The ${format} file declares XML entities; such files are refused.`);
}

/** Parses the text formats of this module. */
export function parseExtraText(text: string, format: string): unknown {
  switch (format) {
    case 'json5':
      return JSON5.parse(text);
    case 'plist': {
      refuseEntities(text, format);
      if (!/<plist[\s>]/.test(text.slice(0, 4096))) throw new DataError('Not an XML property list (no <plist> element); binary plists are not read.');
      return parsePlist(text);
    }
    case 'properties':
      return getProperties(text);
    case 'geojson': {
      const v = JSON.parse(text) as unknown;
      if (!isObject(v) || typeof v.type !== 'string' || !GEOJSON_TYPES.has(v.type)) throw new DataError('Not GeoJSON: the top-level object has no GeoJSON "type".');
      return v;
    }
    case 'gpx':
    case 'kml':
    case 'tcx':
      return readGeoXml(text, format);
    default:
      throw new DataError(`Cannot read ${format}.`);
  }
}

/** The root element of each geodata XML format. */
const GEO_ROOT: Readonly<Record<'gpx' | 'kml' | 'tcx', string>> = { gpx: 'gpx', kml: 'kml', tcx: 'TrainingCenterDatabase' };

function readGeoXml(text: string, format: 'gpx' | 'kml' | 'tcx'): unknown {
  refuseEntities(text, format);
  let doc: ReturnType<DOMParser['parseFromString']>;
  try {
    // xmldom 0.9 throws on fatal errors; warnings and errors are not fatal but mean a broken file.
    doc = new DOMParser({ onError: (level, msg) => { if (level !== 'warning') throw new DataError(`Not well-formed XML: ${msg}`); } }).parseFromString(text, 'text/xml');
  } catch (e) {
    throw e instanceof DataError ? e : new DataError(`Not well-formed XML: ${(e as Error).message}`);
  }
  const root = doc.documentElement?.localName;
  if (root !== GEO_ROOT[format]) throw new DataError(`Not a ${format.toUpperCase()} file: the root element is <${root ?? 'none'}>.`);
  const fc = format === 'gpx' ? gpx(doc) : format === 'kml' ? kml(doc) : tcx(doc);
  if (!fc.features.length) throw new DataError(`The ${format.toUpperCase()} file holds no waypoint, track, route, lap or placemark.`);
  return fc;
}

/** Decodes the binary formats; every length is capped by the input's own size. */
export function parseBinary(bytes: Uint8Array, format: string): unknown {
  const n = bytes.length;
  switch (format) {
    case 'msgpack':
      return toPlain(decodeMsgpack(bytes, { maxStrLength: n, maxBinLength: n, maxArrayLength: n, maxMapLength: n, maxExtLength: n }));
    case 'cbor':
      return toPlain(decodeCbor(bytes, { maxDepth: MAX_DEPTH }));
    case 'bson': {
      if (n < 5 || new DataView(bytes.buffer, bytes.byteOffset, n).getInt32(0, true) !== n) throw new DataError('Not a BSON document: its length field does not match the file.');
      const doc = BSON.deserialize(bytes, { validation: { utf8: true } });
      return EJSON.serialize(doc, { relaxed: true });
    }
    default:
      throw new DataError(`Cannot read ${format}.`);
  }
}

/**
 * A decoded binary value as plain data (what JSON, YAML and the rest can hold); refuses
 * nesting deeper than {@link MAX_DEPTH} on the way down.
 */
export function toPlain(v: unknown, depth = 0): unknown {
  if (depth > MAX_DEPTH) throw new DataError(`The data is nested more than ${MAX_DEPTH} levels deep.`);
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
  if (v === undefined) return null;
  if (v === null || typeof v !== 'object' || v instanceof Date) return v;
  if (Array.isArray(v)) return v.map((x) => toPlain(x, depth + 1));
  if (v instanceof Map) {
    const out: Rec = {};
    for (const [k, x] of v) out[typeof k === 'string' ? k : JSON.stringify(toPlain(k, depth + 1))] = toPlain(x, depth + 1);
    return out;
  }
  // Tagged values and extension types ({tag, contents} / {type, data}) keep their fields.
  const out: Rec = {};
  for (const [k, x] of Object.entries(v)) out[k] = toPlain(x, depth + 1);
  return out;
}

/** Drops nulls (plists have none), recursively. */
export function withoutNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.filter((x) => x !== null && x !== undefined).map(withoutNulls);
  if (isObject(v)) return Object.fromEntries(Object.entries(v).filter(([, x]) => x !== null && x !== undefined).map(([k, x]) => [k, withoutNulls(x)]));
  return v;
}

/** Flat `key → text` pairs: objects dotted, arrays by index (`people.0.name`). */
export function flatKeys(v: unknown, prefix = '', out: Record<string, string> = {}): Record<string, string> {
  if (Array.isArray(v) || isObject(v)) {
    const entries = Array.isArray(v) ? v.map((x, i) => [String(i), x] as const) : Object.entries(v);
    for (const [k, x] of entries) flatKeys(x, prefix ? `${prefix}.${k}` : k, out);
    if (!entries.length && prefix) out[prefix] = '';
  } else if (prefix) {
    out[prefix] = v === null || v === undefined ? '' : v instanceof Date ? v.toISOString() : String(v as string | number | boolean);
  } else {
    out.value = String(v as string | number | boolean);
  }
  return out;
}

/** Writes the formats of this module (bytes for the binary ones). */
export function writeExtra(value: unknown, format: string): string | Uint8Array {
  switch (format) {
    case 'json5':
      return `${JSON5.stringify(value, null, 2)}\n`;
    case 'plist':
      return `${buildPlist(withoutNulls(value) as PlistValue)}\n`;
    case 'properties':
      return `${Object.entries(flatKeys(value)).map(([k, x]) => `${escapeKey(k)}=${escapeValue(x)}`).join('\n')}\n`;
    case 'geojson': {
      if (!isObject(value) || typeof value.type !== 'string' || !GEOJSON_TYPES.has(value.type)) throw new DataError('Only geodata (GPX, KML) can be written as GeoJSON.');
      return `${JSON.stringify(value, null, 2)}\n`;
    }
    case 'msgpack':
      return encodeMsgpack(value, { ignoreUndefined: true });
    case 'cbor':
      return encodeCbor(value);
    case 'bson': {
      // A BSON file is one document: a list becomes its `records`.
      const doc = isObject(value) ? value : { records: Array.isArray(value) ? value : [value] };
      return BSON.serialize(EJSON.deserialize(doc as Rec, { relaxed: true }) as Rec);
    }
    default:
      throw new DataError(`Cannot write ${format}.`);
  }
}

/** A FeatureCollection's features as records: the properties, the geometry's type and coordinates. */
export function featureRecords(v: unknown): Rec[] | undefined {
  if (!isObject(v) || v.type !== 'FeatureCollection' || !Array.isArray(v.features)) return undefined;
  return v.features.map((f) => {
    const feature = isObject(f) ? f : {};
    const geometry = isObject(feature.geometry) ? feature.geometry : {};
    return { ...(isObject(feature.properties) ? feature.properties : {}), geometry: geometry.type ?? null, coordinates: geometry.coordinates ?? null };
  });
}
