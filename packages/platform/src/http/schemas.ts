import { Type, type Static, type TSchema } from 'typebox';

/**
 * Schema helpers that stay within OpenAPI 3.0.3 (no `type: "null"`, no `const`), since the
 * same schemas validate requests, serialise responses and are published as the document.
 */
export const Nullable = <T extends TSchema>(schema: T) => Type.Unsafe<Static<T> | null>({ ...schema, nullable: true });

export const StringEnum = <const V extends readonly string[]>(values: V, options: Record<string, unknown> = {}) =>
  Type.Unsafe<V[number]>({ type: 'string', enum: [...values], ...options });

export const DateTime = (options: Record<string, unknown> = {}) => Type.String({ format: 'date-time', ...options });

/** The contract's error body: `{error, message}` plus documented extra fields. */
export function errorSchema(codes: readonly string[]) {
  return Type.Object(
    {
      error: StringEnum(codes, { description: 'Stable machine-readable code from the closed list.' }),
      message: Type.String({ description: 'Human-readable explanation; wording may change.' }),
      field: Type.Optional(Type.String({ description: 'The offending request field, on validation errors.' })),
    },
    { additionalProperties: true, description: 'Error' },
  );
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Invalid request: malformed JSON, a missing or wrongly typed field, or an unknown field.',
  401: 'Missing, malformed, unknown or revoked API key.',
  402: 'Not enough quota for the whole request.',
  403: 'The plan does not include this feature.',
  404: 'Not found, or not owned by the caller.',
  405: 'The path exists but not with this method; see the Allow header.',
  409: 'Conflict with the current state of the resource.',
  410: 'Gone: the resource was removed.',
  413: 'Request body over the size limit.',
  415: 'Unsupported Content-Type.',
  422: 'Understood but cannot be processed.',
  429: 'Rate limit or monthly quota exceeded; see Retry-After.',
  500: 'Unexpected failure; the body carries no internals. Quote the X-Request-Id header when reporting it.',
  503: 'A dependency is not available.',
};

/** Documented error responses for `statuses`, all in the one error shape. */
export function errorResponses(errorRef: TSchema, statuses: readonly number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const status of statuses) out[status] = { ...errorRef, description: STATUS_TEXT[status] ?? 'Error' };
  return out;
}
