import { errorResponses, errorSchema, securityRequirement, type KeyLocation } from '@mailconv/platform';
import { CONVERT_ERROR_CODES } from './errors.js';

/** The conversion service takes its key as a Bearer token only (the contract's one form). */
export const KEY_LOCATIONS: readonly KeyLocation[] = ['bearer'];

export const ErrorBody = errorSchema(CONVERT_ERROR_CODES);

/** Error responses documented on a route, in the contract's error shape. */
export const errors = (...statuses: number[]) => errorResponses(ErrorBody, statuses);

/** `security` of authenticated routes. */
export const SECURED = securityRequirement(KEY_LOCATIONS);
