import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConvertConfig } from './config.js';

test('CONVERT_OCR_CONCURRENCY: a whole number 1–64 reaches the converter settings; anything else is refused naming it', () => {
  assert.equal(loadConvertConfig({}).ocrConcurrency, undefined);
  assert.equal(loadConvertConfig({ CONVERT_OCR_CONCURRENCY: '3' }).ocrConcurrency, 3);
  for (const bad of ['0', '-1', '2.5', 'many', '65']) {
    assert.throws(() => loadConvertConfig({ CONVERT_OCR_CONCURRENCY: bad }), /CONVERT_OCR_CONCURRENCY/, bad);
  }
});

test('CONVERT_SIGNING_P12 with its password file: opened at start-up; problems name the settings, never the password', async () => {
  const { mkdtemp, rm, writeFile } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { makeTestPki } = await import('@mailconv/converter/testing/pki');
  const dir = await mkdtemp(join(tmpdir(), 'convert-config-sign-'));
  try {
    const pki = await makeTestPki(join(dir, 'pki'), 'pw-config-Xy9');
    await writeFile(join(dir, 'good'), 'pw-config-Xy9\n');
    await writeFile(join(dir, 'bad'), 'pw-wrong-Qq1');
    assert.equal(loadConvertConfig({}).signing, null);
    assert.equal(loadConvertConfig({ CONVERT_SIGNING_P12: pki.rsaP12, CONVERT_SIGNING_P12_PASSWORD_FILE: join(dir, 'good') }).signing?.facts.commonName, 'Jane Signer');
    const problems = (env: Record<string, string>): string => {
      try {
        loadConvertConfig(env);
      } catch (err) {
        return (err as Error).message;
      }
      return assert.fail('accepted');
    };
    assert.match(problems({ CONVERT_SIGNING_P12: pki.rsaP12 }), /CONVERT_SIGNING_P12_PASSWORD_FILE: must be set/);
    const wrong = problems({ CONVERT_SIGNING_P12: pki.rsaP12, CONVERT_SIGNING_P12_PASSWORD_FILE: join(dir, 'bad') });
    assert.match(wrong, /CONVERT_SIGNING_P12: .*wrong password/);
    assert.ok(!wrong.includes('pw-wrong-Qq1'));
    assert.match(problems({ CONVERT_SIGNING_P12: pki.expiredP12, CONVERT_SIGNING_P12_PASSWORD_FILE: join(dir, 'good') }), /expired/);
    const both = problems({ CONVERT_SIGNING_P12: join(dir, 'missing.p12'), CONVERT_SIGNING_P12_PASSWORD_FILE: join(dir, 'missing') });
    assert.match(both, /CONVERT_SIGNING_P12: cannot read[\s\S]*CONVERT_SIGNING_P12_PASSWORD_FILE: cannot read/);
    // Reported together with the other settings' problems.
    assert.match(problems({ CONVERT_OCR_CONCURRENCY: '0', CONVERT_SIGNING_P12: pki.rsaP12 }), /CONVERT_OCR_CONCURRENCY[\s\S]*CONVERT_SIGNING_P12_PASSWORD_FILE: must be set/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
