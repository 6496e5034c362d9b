import type { FastifyRequest } from 'fastify';
import { AppError, describeValidation } from '@mailconv/platform';

/**
 * Routes that take an `email` field validate with `attachValidation` and call this first:
 * a missing, empty, non-string or over-long `email` is 400 `invalid_email` (decision 4's
 * code for it); every other validation failure keeps its usual `invalid_request`.
 */
export function throwValidationError(request: FastifyRequest): void {
  const err = request.validationError as (Error & { validation?: Array<Record<string, unknown>>; validationContext?: string }) | undefined;
  if (!err) return;
  const issue = err.validation?.[0];
  if (issue && err.validationContext === 'body') {
    const { message, field } = describeValidation('body', issue as never);
    if (field === 'email' || (issue.instancePath === '' && issue.keyword === 'required' && (issue.params as { missingProperty?: string }).missingProperty === 'email')) {
      throw new AppError('invalid_email', message, { field: 'email' });
    }
  }
  throw err;
}
