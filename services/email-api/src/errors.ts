import { COMMON_ERROR_STATUS } from '@mailconv/platform';

/**
 * The closed list of error codes of the email service (email-decisions.md item 4) and
 * their statuses. Add codes; never reuse one for a different meaning.
 */
export const EMAIL_ERROR_STATUS = {
  ...COMMON_ERROR_STATUS,
  invalid_email: 400,
  insufficient_quota: 402,
  feature_not_available: 403,
  job_not_completed: 409,
  job_not_cancellable: 409,
  /** A job's results were deleted (`DELETE …/results` or retention, issue 23); its counts stay. */
  results_deleted: 410,
} as const;

export type EmailErrorCode = keyof typeof EMAIL_ERROR_STATUS;

// The closed list of this service's codes, as AppError's code type (see ServiceErrorCodes).
declare module '@mailconv/platform' {
  interface ServiceErrorCodes extends Record<EmailErrorCode, true> {}
}
export const EMAIL_ERROR_CODES = Object.keys(EMAIL_ERROR_STATUS) as EmailErrorCode[];
