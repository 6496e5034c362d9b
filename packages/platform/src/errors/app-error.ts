/**
 * The error codes of the service being compiled: the common ones below plus those its
 * `errors.ts` declares by augmenting this interface (each key a code), e.g.
 *
 * ```ts
 * declare module '@mailconv/platform' {
 *   interface ServiceErrorCodes extends Record<keyof typeof MY_ERROR_STATUS, true> {}
 * }
 * ```
 *
 * Each service is its own TypeScript project, so each sees exactly its own closed list:
 * a misspelt code, or another service's code, does not compile.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by each service's declaration merging
export interface ServiceErrorCodes {}

/** A code from the closed list of the service being compiled (see {@link ServiceErrorCodes}). */
export type ErrorCode = keyof typeof COMMON_ERROR_STATUS | (keyof ServiceErrorCodes & string);

/**
 * The one exception type services throw for expected failures. `code` is a stable
 * snake_case string from the service's closed error table; the HTTP layer alone maps it
 * to a status. `details` are extra documented fields merged into the error body
 * (for example `remaining` and `required` on `insufficient_quota`).
 */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Readonly<Record<string, unknown>>,
    readonly headers?: Readonly<Record<string, string>>,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

/** Codes every service answers with, and their statuses. Services extend this table, never reuse a code. */
export const COMMON_ERROR_STATUS = {
  invalid_request: 400,
  invalid_json: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  /** An account already has its 10 active webhook endpoints (both services: email decision 22). */
  webhook_limit_reached: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  headers_too_large: 431,
  quota_exceeded: 429,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
  /** The disk under the database or the storage is full (issue 28): nothing was stored; retry later. */
  insufficient_storage: 507,
} as const satisfies Record<string, number>;

/** A closed table of error codes to HTTP statuses: every code of the service, and nothing else. */
export type ErrorTable = Readonly<Record<ErrorCode, number>>;
