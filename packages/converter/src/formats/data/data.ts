/** Structured and tabular data (the data engine's formats; CSV itself is a spreadsheet format). */
import type { FormatEntry } from '../catalogue.js';

export const DATA: readonly FormatEntry[] = [
  { ext: 'tsv', aliases: ['tab'], mime_type: 'text/tab-separated-values', family: 'data', name: 'Tab-separated values' },
  { ext: 'json', mime_type: 'application/json', family: 'data', name: 'JSON' },
  { ext: 'ndjson', aliases: ['jsonl'], mime_type: 'application/x-ndjson', family: 'data', name: 'Newline-delimited JSON' },
  { ext: 'yaml', aliases: ['yml'], mime_type: 'application/yaml', family: 'data', name: 'YAML' },
  { ext: 'toml', mime_type: 'application/toml', family: 'data', name: 'TOML' },
  { ext: 'xml', mime_type: 'application/xml', family: 'data', name: 'XML' },
  { ext: 'ini', mime_type: 'text/plain', family: 'data', name: 'INI configuration' },
  { ext: 'json5', mime_type: 'application/json5', family: 'data', name: 'JSON5' },
  { ext: 'plist', mime_type: 'application/x-plist', family: 'data', name: 'Property list (XML)' },
  { ext: 'msgpack', aliases: ['mpk'], mime_type: 'application/vnd.msgpack', family: 'data', name: 'MessagePack' },
  { ext: 'cbor', mime_type: 'application/cbor', family: 'data', name: 'CBOR' },
  { ext: 'bson', mime_type: 'application/bson', family: 'data', name: 'BSON' },
  { ext: 'properties', mime_type: 'text/x-java-properties', family: 'data', name: 'Java properties' },
  // Geodata: GPX, KML and TCX are read into GeoJSON (@tmcw/togeojson); features become records.
  { ext: 'geojson', mime_type: 'application/geo+json', family: 'data', name: 'GeoJSON' },
  { ext: 'gpx', mime_type: 'application/gpx+xml', family: 'data', name: 'GPX (GPS exchange)' },
  { ext: 'kml', mime_type: 'application/vnd.google-earth.kml+xml', family: 'data', name: 'KML' },
  { ext: 'tcx', mime_type: 'application/vnd.garmin.tcx+xml', family: 'data', name: 'Garmin Training Center XML' },
];
