// Its own module so that the admin CLI and the worker need not load the HTTP app to know it.

/** API key prefix of this service: `cv_live_` + 32 base62 characters. Never valid on the email service. */
export const CONVERT_KEY_PREFIX = 'cv_live_';
