/**
 * Every catalogue entry, in listing order: one file per group so that adding formats touches
 * only its group's file (and one line here).
 */
import type { FormatEntry } from '../catalogue.js';
import { AUDIO } from './audio.js';
import { DOCUMENTS } from './documents.js';
import { EBOOKS } from './ebooks.js';
import { IMAGES } from './images.js';
import { MARKUP } from './markup.js';
import { PDF } from './pdf.js';
import { PRESENTATIONS } from './presentations.js';
import { SPREADSHEETS } from './spreadsheets.js';
import { TEXT } from './text.js';
import { VIDEO } from './video.js';

/** The groups, in listing order. */
export const FORMAT_GROUPS: readonly (readonly FormatEntry[])[] = [
  PDF,
  DOCUMENTS,
  SPREADSHEETS,
  PRESENTATIONS,
  IMAGES,
  AUDIO,
  VIDEO,
  MARKUP,
  EBOOKS,
  TEXT,
];

/** All entries, in listing order. */
export const ENTRIES: readonly FormatEntry[] = FORMAT_GROUPS.flat();
