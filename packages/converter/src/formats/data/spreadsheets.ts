/** Spreadsheets (and CSV, their plain-text form). */
import type { FormatEntry } from '../catalogue.js';

export const SPREADSHEETS: readonly FormatEntry[] = [
  { ext: 'xlsx', mime_type: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', family: 'spreadsheet', name: 'Excel workbook', paged: true },
  { ext: 'xls', mime_type: 'application/vnd.ms-excel', family: 'spreadsheet', name: 'Excel 97-2003 workbook', paged: true },
  { ext: 'ods', mime_type: 'application/vnd.oasis.opendocument.spreadsheet', family: 'spreadsheet', name: 'OpenDocument spreadsheet', paged: true },
  { ext: 'csv', mime_type: 'text/csv', family: 'spreadsheet', name: 'Comma-separated values' },
  { ext: 'xlsb', mime_type: 'application/vnd.ms-excel.sheet.binary.macroenabled.12', family: 'spreadsheet', name: 'Excel binary workbook', paged: true },
  { ext: 'fods', mime_type: 'application/vnd.oasis.opendocument.spreadsheet-flat-xml', family: 'spreadsheet', name: 'Flat OpenDocument spreadsheet', paged: true },
];
