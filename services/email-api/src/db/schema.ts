import type { CoreTables } from '@mailconv/platform';

/** Tables of the email service's own database. Later issues add jobs, results and webhooks. */
export type EmailTables = CoreTables;
