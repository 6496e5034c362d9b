/**
 * Every catalogue entry, in listing order: one file per group so that adding formats touches
 * only its group's file (and one line here).
 */
import type { FormatEntry } from '../catalogue.js';
import { ARCHIVES } from './archives.js';
import { AUDIO } from './audio.js';
import { AUDIO_EXTRA } from './audio-extra.js';
import { CONTACTS } from './contacts.js';
import { DATA } from './data.js';
import { DOCUMENTS } from './documents.js';
import { EBOOKS } from './ebooks.js';
import { FONTS } from './fonts.js';
import { IMAGES } from './images.js';
import { IMAGES_EXTRA } from './images-extra.js';
import { MARKUP } from './markup.js';
import { MODELS3D } from './models3d.js';
import { PDF } from './pdf.js';
import { PRESENTATIONS } from './presentations.js';
import { SPREADSHEETS } from './spreadsheets.js';
import { SUBTITLES } from './subtitles.js';
import { TEXT } from './text.js';
import { VECTOR } from './vector.js';
import { VIDEO } from './video.js';
import { VIDEO_EXTRA } from './video-extra.js';

/** The groups, in listing order. */
export const FORMAT_GROUPS: readonly (readonly FormatEntry[])[] = [
  PDF,
  DOCUMENTS,
  SPREADSHEETS,
  PRESENTATIONS,
  IMAGES,
  IMAGES_EXTRA,
  AUDIO,
  AUDIO_EXTRA,
  VIDEO,
  VIDEO_EXTRA,
  MARKUP,
  EBOOKS,
  TEXT,
  DATA,
  CONTACTS,
  SUBTITLES,
  VECTOR,
  ARCHIVES,
  MODELS3D,
  FONTS,
];

/** All entries, in listing order. */
export const ENTRIES: readonly FormatEntry[] = FORMAT_GROUPS.flat();
