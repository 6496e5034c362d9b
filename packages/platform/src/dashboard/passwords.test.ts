import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { hashPassword, passwordProblem, verifyPassword } from './passwords.js';

describe('dashboard passwords (scrypt)', () => {
  test('PHC string with N=2^15, r=8, p=1 and a random salt; verifies the password and nothing else', async () => {
    const [a, b] = await Promise.all([hashPassword('hunter2 hunter2'), hashPassword('hunter2 hunter2')]);
    assert.match(a, /^\$scrypt\$ln=15,r=8,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    assert.notEqual(a, b, 'a new salt each time');
    assert.equal(await verifyPassword('hunter2 hunter2', a), true);
    assert.equal(await verifyPassword('hunter2 hunter2', b), true);
    assert.equal(await verifyPassword('hunter2 hunter3', a), false);
    assert.equal(await verifyPassword('', a), false);
  });

  test('the same characters in another Unicode form match (NFC); malformed or too-cheap stored values never do', async () => {
    const stored = await hashPassword('caf\u00e9 au lait');
    assert.equal(await verifyPassword('cafe\u0301 au lait', stored), true);
    for (const bad of ['', 'plain', '$scrypt$ln=15,r=8,p=1$$', stored.replace('ln=15', 'ln=4'), stored.replace(/\$[^$]+$/, '$AAAA')]) assert.equal(await verifyPassword('caf\u00e9 au lait', bad), false, bad);
  });

  test('new passwords: 8 to 1024 characters', () => {
    assert.match(passwordProblem('short')!, /at least 8/);
    assert.equal(passwordProblem('eight ch'), null);
    assert.match(passwordProblem('x'.repeat(1025))!, /at most 1024/);
  });
});
