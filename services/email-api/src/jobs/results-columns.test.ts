import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'csv-parse/sync';
import { AppError } from '@mailconv/platform';
import { CSV_HEADER, EXTRA_COLUMNS, csvField, csvRow, neutraliseFormula, neutraliseRecord, parseStatusFilter, resultColumnNames, resultItem, type StoredResult } from './results.js';

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

// Issue 45: one rule for every cell of a CSV download, the upload's own cells included.
test('neutraliseFormula: a leading =, +, -, @, tab or CR gets a \'; the result cells use it, formulas=keep skips it', () => {
  for (const t of ['=1+2', '+1 555 0100', '-5', '@SUM(1)', '\tx', '\rx']) assert.equal(neutraliseFormula(t), `'${t}`, JSON.stringify(t));
  for (const t of ['', 'a@b.test', ' =1', "'=1", '\n=1', '"=1']) assert.equal(neutraliseFormula(t), t, JSON.stringify(t));
  assert.equal(csvField('=a,b'), `"'=a,b"`);
  assert.equal(csvField('=a,b', true), '"=a,b"');
  assert.equal(csvField(-5), '-5', 'numbers the service writes are not text');
  assert.equal(csvRow(['-a@x.test', 'valid', null, 90, null], false, true), '-a@x.test,true,valid,,90,');
});

test('neutraliseRecord: the \' goes where each cell starts, and nothing else of the record changes', () => {
  const cases: Array<[string, string]> = [
    ['Ann,ann@x.test,plain', 'Ann,ann@x.test,plain'],
    ['=1,+2,-3,@4,\t5', "'=1,'+2,'-3,'@4,'\t5"],
    ['"=HYPERLINK(""http://h/"",""c"")",x', `"'=HYPERLINK(""http://h/"",""c"")",x`],
    ['"a,=b",=c', `"a,=b",'=c`],
    ['"""=q""",x', '"""=q""",x'],
    ['"\r\n=a", -1,  "@x" ,', `"'\r\n=a", '-1,  "'@x" ,`],
    ['\t"=x",y', `'\t"'=x",y`],
    [',,=z,', ",,'=z,"],
    ['', ''],
  ];
  for (const [raw, want] of cases) assert.equal(neutraliseRecord(raw), want, JSON.stringify(raw));
});

test('neutraliseRecord agrees with neutraliseFormula cell by cell on generated records (read back by csv-parse)', () => {
  let seed = 45;
  const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
  const alphabet = ['=', '+', '-', '@', '\t', '\r', '\n', '"', ',', ' ', 'a', 'b', '1', "'"];
  for (let round = 0; round < 2000; round++) {
    const cells: string[] = [];
    const fields: string[] = [];
    const want: string[] = [];
    for (let c = 0, n = 1 + rand(5); c < n; c++) {
      const cell = Array.from({ length: rand(6) }, () => alphabet[rand(alphabet.length)]!).join('');
      const quoted = /[",\r\n]/.test(cell) || rand(2) === 0;
      cells.push(cell);
      fields.push(quoted ? `"${cell.replaceAll('"', '""')}"` : cell);
      // An unquoted cell: judged after the spaces a trimming reader drops.
      const lead = quoted ? '' : /^ */.exec(cell)![0];
      want.push(lead + neutraliseFormula(cell.slice(lead.length)));
    }
    const raw = fields.join(',');
    const [read] = parse(neutraliseRecord(raw), { relax_column_count: true }) as string[][];
    assert.deepEqual(read ?? [''], want, JSON.stringify(raw));
  }
});
