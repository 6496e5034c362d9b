import { Type, type TSchema } from 'typebox';
import { errorResponses, errorSchema, securedResponses, securityRequirement, type KeyLocation } from '@mailconv/platform';
import { CONVERT_ERROR_CODES } from './errors.js';

/** The conversion service takes its key as a Bearer token only (the contract's one form). */
export const KEY_LOCATIONS: readonly KeyLocation[] = ['bearer'];

/** The extra fields some error codes carry, documented on the one error shape. */
export const ErrorBody = errorSchema(CONVERT_ERROR_CODES, {
  status: Type.String({ description: '`conflict` on a download: the conversion’s current status.' }),
  limit: Type.Integer({ description: '`quota_exceeded`: conversions per month on the plan.' }),
  used: Type.Integer({ description: '`quota_exceeded`: conversions used this month.' }),
  max_file_bytes: Type.Integer({ description: '`file_too_large`: the plan’s file size limit.' }),
});

/** Error responses documented on a route, in the contract's error shape. */
export const errors = (...statuses: number[]) => errorResponses(ErrorBody, statuses);

/** `security` of authenticated routes: the API key, or the dashboard session cookie (extension). */
export const SECURED = securityRequirement(KEY_LOCATIONS, { session: true });

/** Responses of an authenticated route, with the `RateLimit-*` headers documented. */
export const secured = (responses: Record<number, TSchema>) => securedResponses(responses);
