import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError, COMMON_ERROR_STATUS } from '@mailconv/platform';
import { EMAIL_ERROR_CODES, EMAIL_ERROR_STATUS } from './errors.js';

test('error codes are a closed list: every code has a status, and a misspelt code does not compile', () => {
  for (const code of Object.keys(COMMON_ERROR_STATUS)) assert.ok(EMAIL_ERROR_CODES.includes(code as never), code);
  for (const code of EMAIL_ERROR_CODES) assert.ok(Number.isInteger(EMAIL_ERROR_STATUS[code]), code);
  assert.equal(new AppError('invalid_email', 'x').code, 'invalid_email');
  // The build (tsc -b, part of npm test) fails should these ever compile: a typo, and the
  // conversion service's own code.
  // @ts-expect-error misspelt code
  assert.equal(new AppError('invalid_emial', 'x').code, 'invalid_emial');
  // @ts-expect-error a code of the other service
  assert.equal(new AppError('conversion_failed', 'x').code, 'conversion_failed');
});
