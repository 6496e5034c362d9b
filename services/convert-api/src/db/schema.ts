import type { CoreTables } from '@mailconv/platform';

/** Tables of the conversion service's own database. The conversion issue adds uploads and conversions. */
export type ConvertTables = CoreTables;
