/** Word-processor documents. */
import type { FormatEntry } from '../catalogue.js';

export const DOCUMENTS: readonly FormatEntry[] = [
  { ext: 'docx', mime_type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', family: 'document', name: 'Word document', paged: true },
  { ext: 'doc', mime_type: 'application/msword', family: 'document', name: 'Word 97-2003 document', paged: true },
  { ext: 'odt', mime_type: 'application/vnd.oasis.opendocument.text', family: 'document', name: 'OpenDocument text', paged: true },
  { ext: 'rtf', mime_type: 'application/rtf', family: 'document', name: 'Rich Text Format', paged: true },
  { ext: 'fodt', mime_type: 'application/vnd.oasis.opendocument.text-flat-xml', family: 'document', name: 'Flat OpenDocument text', paged: true },
];
