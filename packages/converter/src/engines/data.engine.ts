/**
 * Structured and tabular data (CSV, TSV, JSON, NDJSON, YAML, TOML, XML, INI, JSON5, XML plists,
 * Java properties, MessagePack, CBOR, BSON; GPX/KML/TCX into GeoJSON) and contacts
 * and calendars (vCard, iCalendar ↔ records) with well-kept npm parsers, in a worker thread
 * with its own heap cap and time-out (`structured/run-in-worker.ts`); mappings in
 * `structured/records.ts` and `structured/contacts.ts`.
 */
import { createRequire } from 'node:module';
import { missingProbe, type Engine, type EngineProbe, type Step } from './engine.js';
import { DATA_FORMATS, DATA_SOURCES_ONLY } from './structured/records.js';
import { runInWorker } from './structured/run-in-worker.js';

/** The npm modules the data engine's worker parses and writes with. */
const DATA_MODULES = ['csv-parse', 'yaml', 'smol-toml', 'fast-xml-parser', 'ini', 'ical.js', 'json5', 'plist', '@msgpack/msgpack', 'cbor2', 'bson', 'properties-file', '@tmcw/togeojson'];

/** Data formats contacts and events are written to, and read back from. */
const RECORD_FORMATS = ['csv', 'tsv', 'json', 'ndjson', 'yaml', 'xml'];
/** Tables written into vCard/iCalendar: the ones a mail client or a script exports. */
const RECORD_SOURCES = ['csv', 'json'];
const PIM = new Set(['vcf', 'ics']);

/** The data engine. */
export class DataEngine implements Engine {
  readonly name = 'data';
  readonly reads = [...DATA_FORMATS, ...DATA_SOURCES_ONLY, 'vcf', 'ics'];
  readonly writes = [...DATA_FORMATS, 'vcf', 'ics'];

  supports(from: string, to: string): boolean {
    if (from === to) return false;
    // GeoJSON is written from geodata only (any other table is not a FeatureCollection).
    if (to === 'geojson') return (DATA_SOURCES_ONLY as readonly string[]).includes(from);
    if (PIM.has(from)) return RECORD_FORMATS.includes(to);
    if (PIM.has(to)) return RECORD_SOURCES.includes(from);
    return true;
  }

  tradesQualityForSize(): boolean {
    return false;
  }

  async probe(): Promise<EngineProbe> {
    const require = createRequire(import.meta.url);
    const missing: string[] = [];
    const versions = DATA_MODULES.map((m) => {
      try {
        import.meta.resolve(m);
      } catch {
        missing.push(`npm:${m}`);
        return `${m} missing`;
      }
      try {
        return `${m} ${(require(`${m}/package.json`) as { version: string }).version}`;
      } catch {
        // Its exports do not list package.json: present, version unknown.
        return `${m} ?`;
      }
    });
    const requires = DATA_MODULES.map((m) => `npm:${m}`);
    if (missing.length) return missingProbe(this.name, requires, missing);
    return { engine: this.name, available: true, version: versions.join(', '), missing: [], requires };
  }

  async convert(step: Step): Promise<void> {
    await runInWorker(step, 'data');
  }
}
