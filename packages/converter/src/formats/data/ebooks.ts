/** E-books (calibre's side; EPUB is read by pandoc too). */
import type { FormatEntry } from '../catalogue.js';

export const EBOOKS: readonly FormatEntry[] = [
  { ext: 'epub', mime_type: 'application/epub+zip', family: 'ebook', name: 'EPUB e-book' },
  { ext: 'mobi', aliases: ['prc'], mime_type: 'application/x-mobipocket-ebook', family: 'ebook', name: 'Mobipocket e-book' },
  { ext: 'azw3', aliases: ['kf8'], mime_type: 'application/vnd.amazon.mobi8-ebook', family: 'ebook', name: 'Kindle KF8 e-book' },
  { ext: 'fb2', mime_type: 'application/x-fictionbook+xml', family: 'ebook', name: 'FictionBook 2' },
  { ext: 'lit', mime_type: 'application/x-ms-reader', family: 'ebook', name: 'Microsoft Reader e-book' },
  { ext: 'pdb', mime_type: 'application/vnd.palm', family: 'ebook', name: 'Palm database e-book (PalmDoc)' },
  { ext: 'lrf', mime_type: 'application/x-sony-bbeb', family: 'ebook', name: 'Sony BroadBand e-book' },
  { ext: 'txtz', mime_type: 'application/x-txtz+zip', family: 'ebook', name: 'Zipped text e-book (calibre TXTZ)' },
  { ext: 'htmlz', mime_type: 'application/x-htmlz+zip', family: 'ebook', name: 'Zipped HTML e-book (calibre HTMLZ)' },
  { ext: 'rb', mime_type: 'application/x-rocketbook', family: 'ebook', name: 'RocketBook e-book' },
  { ext: 'tcr', mime_type: 'application/x-psion-tcr', family: 'ebook', name: 'Psion TCR e-book' },
  { ext: 'snb', mime_type: 'application/x-shanda-snb', family: 'ebook', name: 'Shanda Bambook e-book' },
];
