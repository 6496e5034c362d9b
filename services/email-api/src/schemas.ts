import { errorResponses, errorSchema, securityRequirement, type KeyLocation } from '@mailconv/platform';
import { EMAIL_ERROR_CODES } from './errors.js';

/** Where the email service accepts API keys: all three forms of the contract. */
export const KEY_LOCATIONS: readonly KeyLocation[] = ['bearer', 'x-api-key', 'query'];

export const ErrorBody = errorSchema(EMAIL_ERROR_CODES);

/** Error responses documented on a route, in the contract's error shape. */
export const errors = (...statuses: number[]) => errorResponses(ErrorBody, statuses);

/** `security` of authenticated routes. */
export const SECURED = securityRequirement(KEY_LOCATIONS);
