/** Slide decks. */
import type { FormatEntry } from '../catalogue.js';

export const PRESENTATIONS: readonly FormatEntry[] = [
  { ext: 'pptx', mime_type: 'application/vnd.openxmlformats-officedocument.presentationml.presentation', family: 'presentation', name: 'PowerPoint presentation', paged: true },
  { ext: 'ppt', mime_type: 'application/vnd.ms-powerpoint', family: 'presentation', name: 'PowerPoint 97-2003 presentation', paged: true },
  { ext: 'odp', mime_type: 'application/vnd.oasis.opendocument.presentation', family: 'presentation', name: 'OpenDocument presentation', paged: true },
  { ext: 'fodp', mime_type: 'application/vnd.oasis.opendocument.presentation-flat-xml', family: 'presentation', name: 'Flat OpenDocument presentation', paged: true },
];
