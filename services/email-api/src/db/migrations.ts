import type { Migration } from 'kysely';

/** The email service's own migrations (the platform adds the core ones). */
export const EMAIL_MIGRATIONS: Record<string, Migration> = {};
