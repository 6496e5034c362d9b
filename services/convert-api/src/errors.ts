import { COMMON_ERROR_STATUS } from '@mailconv/platform';

/**
 * The closed list of error codes of the conversion service (convert-decisions.md item 16)
 * and their statuses. Add codes; never reuse one for a different meaning.
 */
export const CONVERT_ERROR_STATUS = {
  ...COMMON_ERROR_STATUS,
  gone: 410,
  range_not_satisfiable: 416,
  file_too_large: 413,
  unsupported_format: 415,
  unsupported_conversion: 422,
  conversion_failed: 422,
  output_too_large: 422,
  /** An encrypted PDF sent without its password (convert-decisions.md item 18). */
  password_required: 422,
  /** A URL to convert (extension, issue 22) could not be fetched: no answer, a time-out, a non-2xx answer. */
  fetch_failed: 422,
} as const;

export type ConvertErrorCode = keyof typeof CONVERT_ERROR_STATUS;

// The closed list of this service's codes, as AppError's code type (see ServiceErrorCodes).
declare module '@mailconv/platform' {
  interface ServiceErrorCodes extends Record<ConvertErrorCode, true> {}
}
export const CONVERT_ERROR_CODES = Object.keys(CONVERT_ERROR_STATUS) as ConvertErrorCode[];
