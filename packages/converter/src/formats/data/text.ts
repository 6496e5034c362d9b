/** Plain text. */
import type { FormatEntry } from '../catalogue.js';

export const TEXT: readonly FormatEntry[] = [
  { ext: 'txt', aliases: ['text'], mime_type: 'text/plain', family: 'text', name: 'Plain text' },
];
