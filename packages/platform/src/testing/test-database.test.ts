import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isCi, testBackends } from './test-database.js';

describe('testBackends', () => {
  test('both engines by default; TEST_BACKENDS narrows a local run', () => {
    assert.deepEqual(testBackends({}), ['sqlite', 'postgres']);
    assert.deepEqual(testBackends({ TEST_BACKENDS: 'sqlite' }), ['sqlite']);
    assert.deepEqual(testBackends({ TEST_BACKENDS: ' postgres ' }), ['postgres']);
    assert.deepEqual(testBackends({ TEST_BACKENDS: 'sqlite', CI: 'false' }), ['sqlite']);
  });

  test('under CI=true both engines always run, whatever TEST_BACKENDS says (issue 16)', () => {
    for (const ci of ['true', 'TRUE', '1']) {
      assert.equal(isCi({ CI: ci }), true, ci);
      for (const only of ['sqlite', 'postgres', 'postgres,sqlite', '']) assert.deepEqual(testBackends({ CI: ci, TEST_BACKENDS: only }), ['sqlite', 'postgres'], `CI=${ci} TEST_BACKENDS=${only}`);
    }
    for (const notCi of [undefined, '', '0', 'false']) assert.equal(isCi({ CI: notCi }), false, String(notCi));
  });

  test('an unknown backend name is an error, in CI too', () => {
    assert.throws(() => testBackends({ TEST_BACKENDS: 'sqlite,mysql' }), /unknown backend mysql/);
    assert.throws(() => testBackends({ CI: 'true', TEST_BACKENDS: 'mysql' }), /unknown backend mysql/);
  });
});
