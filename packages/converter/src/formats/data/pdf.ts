/** PDF. */
import type { FormatEntry } from '../catalogue.js';

export const PDF: readonly FormatEntry[] = [
  { ext: 'pdf', mime_type: 'application/pdf', family: 'pdf', name: 'PDF document', paged: true },
];
