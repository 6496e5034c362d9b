import type { Migration } from 'kysely';

/** The conversion service's own migrations (the platform adds the core ones). */
export const CONVERT_MIGRATIONS: Record<string, Migration> = {};
