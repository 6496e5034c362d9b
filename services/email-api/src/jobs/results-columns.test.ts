import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '@mailconv/platform';
import { CSV_HEADER, EXTRA_COLUMNS, csvRow, parseStatusFilter, resultColumnNames, resultItem, type StoredResult } from './results.js';

// Issue 23: the pure parts of reading results (no database, no rig).

test('result column names: unchanged without input columns; prefixed result_ (again until unique) where they clash, case-insensitively', () => {
  assert.deepEqual(resultColumnNames(false, null), CSV_HEADER.split(','));
  assert.deepEqual(resultColumnNames(true, null), [...CSV_HEADER.split(','), ...EXTRA_COLUMNS]);
  assert.deepEqual(resultColumnNames(false, 'Email, STATUS ,Result_Email,"score, final",note'), ['result_result_email', 'is_valid', 'result_status', 'reason', 'score', 'suggestion']);
  assert.deepEqual(resultColumnNames(true, 'id,DNS,smtp').slice(6), ['normalized', 'syntax', 'result_dns', 'mx_count', 'mx_provider', 'result_smtp', 'catch_all', 'disposable', 'role_based', 'free_provider']);
});

test('status filter: the contract statuses, comma-separated; anything else is 400 naming status', () => {
  assert.equal(parseStatusFilter(undefined), null);
  assert.deepEqual([...parseStatusFilter('valid, risky,valid')!], ['valid', 'risky']);
  for (const bad of ['', 'valid,', 'Valid', 'catch_all', 'valid;risky']) {
    assert.throws(() => parseStatusFilter(bad), (err: unknown) => err instanceof AppError && err.code === 'invalid_request' && (err.details as { field?: string }).field === 'status', bad);
  }
});

test('a row stored before the sub-checks were kept: the contract columns as before, the sub-check cells empty (null in JSON)', () => {
  const old: StoredResult = ['=a@x.test', 'risky', 'role_based', 60, null];
  assert.equal(csvRow(old, false), "'=a@x.test,false,risky,role_based,60,");
  assert.equal(csvRow(old, true), `'=a@x.test,false,risky,role_based,60,${','.repeat(EXTRA_COLUMNS.length)}`);
  const item = resultItem(old, true);
  assert.deepEqual(EXTRA_COLUMNS.map((c) => item[c]), EXTRA_COLUMNS.map(() => null));
  const full: StoredResult = ['b@y.test', 'valid', null, 95, null, 'b@y.test', true, true, 2, 'google|microsoft365', null, false, false, false, true];
  assert.equal(csvRow(full, true), 'b@y.test,true,valid,,95,,b@y.test,true,true,2,google|microsoft365,,false,false,false,true');
});
