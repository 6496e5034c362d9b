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
];
