// Its own module so that the admin CLI and the worker need not load the HTTP app to know it.

/** API key prefix of this service: `ev_live_` + 32 base62 characters (email-decisions.md item 7). */
export const EMAIL_KEY_PREFIX = 'ev_live_';
