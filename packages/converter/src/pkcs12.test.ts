// Issue 45: a PKCS#12 file's iteration counts came from the file with no limit, and node-forge
// derived its keys on the event loop (a 2.5 KB file with 100,000 iterations held the process
// 1.4 s; a count is a DER INTEGER of any length). Here: the pre-scan (every count, real files of
// openssl and crafted ones), the bounded native derivations (the same bytes as node-forge's;
// the counts hidden in the encrypted part), and openPkcs12's worker (time-out, event loop free).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import forge from 'node-forge';
import { openPkcs12 } from './pkcs12-open.js';
import { pkcs12Kdf, withBoundedDerivations } from './pkcs12-kdf.js';
import { PKCS12_LIMITS, scanPkcs12, type IterationCount } from './pkcs12-scan.js';
import { CredentialError, loadPkcs12 } from './signing-credential.js';
import { asBer, craftPfx, deeplyNested, exportP12, integerOctets, legacyKeyBag, makeTestPki, shroudedKeyBag, withBagIterations, withMacIterations, type TestPki } from './testing/test-pki.js';
import { scratchDir, watchThreadCpu } from './testing/tools.js';

let dir: string;
let pki: TestPki;
const PW = 'p12-test-pw';

before(async () => {
  dir = await scratchDir('conv-p12-');
  pki = await makeTestPki(join(dir, 'pki'), PW);
});
after(async () => rm(dir, { recursive: true, force: true }));

/** A scan's verdict as text (its counts are bigints). */
const show = (v: unknown): string => JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? String(x) : x));

const counts = (bytes: Uint8Array): string[] => {
  const s = scanPkcs12(bytes);
  assert.ok(s.ok, show(s));
  return s.counts.map((c: IterationCount) => `${c.use} ${c.count}`);
};

/** Runs `fn`, answering the CPU time it took (ms): unlike the clock, a busy machine does not stretch it. */
function timed(fn: () => void): number {
  const t = process.threadCpuUsage();
  fn();
  const used = process.threadCpuUsage(t);
  return (used.user + used.system) / 1000;
}

/** Opens `bytes` with loadPkcs12, answering what it threw and how long it took (ms). */
function loadFails(bytes: Buffer): { thrown: unknown; ms: number } {
  let thrown: unknown;
  const ms = timed(() => {
    try {
      loadPkcs12(bytes, PW);
    } catch (e) {
      thrown = e;
    }
  });
  return { thrown, ms };
}

test('real files of openssl: every count read where openssl -info shows it, and each opens', async () => {
  const cases: [string[], string[]][] = [
    [[], ['MAC 2048', 'PBKDF2 2048', 'PBKDF2 2048']],
    [['-legacy'], ['MAC 2048', 'PKCS#12-PBE 2048', 'PKCS#12-PBE 2048']],
    [['-nomac'], ['PBKDF2 2048']],
    [['-keypbe', 'NONE', '-certpbe', 'NONE'], ['MAC 2048']],
    [['-macalg', 'sha384'], ['MAC 2048', 'PBKDF2 2048', 'PBKDF2 2048']],
    [['-macalg', 'sha512', '-iter', '5000', '-maciter'], ['MAC 5000', 'PBKDF2 5000', 'PBKDF2 5000']],
    [['-descert'], ['MAC 2048', 'PKCS#12-PBE 2048', 'PBKDF2 2048']],
    [['-keypbe', 'AES-128-CBC', '-certpbe', 'AES-192-CBC'], ['MAC 2048', 'PBKDF2 2048', 'PBKDF2 2048']],
    // At the limit: GnuTLS's certtool writes 600,000 (about 1 s of CPU with the native derivations).
    [['-iter', '600000', '-maciter'], ['MAC 600000', 'PBKDF2 600000', 'PBKDF2 600000']],
    // -noiter/-nomaciter: one iteration (the MAC's INTEGER is then left out: DEFAULT 1).
    [['-noiter', '-nomaciter'], ['MAC 1', 'PBKDF2 1', 'PBKDF2 1']],
  ];
  let i = 0;
  for (const [args, expected] of cases) {
    const bytes = await exportP12(pki, `variant-${i++}`, PW, args);
    assert.deepEqual(counts(bytes), expected, args.join(' '));
    const opened = loadPkcs12(bytes, PW);
    assert.equal(opened.facts.commonName, 'Jane Signer', args.join(' '));
    assert.equal(opened.chain.length, 1, args.join(' '));
  }
  // The EC signer's file too, and its wrong password still names the password.
  const ec = await readFile(pki.ecP12);
  assert.equal(loadPkcs12(ec, PW).facts.commonName, 'Erin Signer');
  assert.throws(() => loadPkcs12(ec, 'wrong'), (e: unknown) => e instanceof CredentialError && e.field === 'password');
});

test('BER as Java and NSS write it (indefinite lengths, a chunked OCTET STRING): read, counted and opened', async () => {
  const der = await readFile(pki.rsaP12);
  const ber = asBer(der, 300);
  assert.notDeepEqual(ber, der);
  assert.equal(ber[1], 0x80);
  assert.deepEqual(counts(ber), counts(der));
  assert.equal(loadPkcs12(ber, PW).facts.commonName, 'Jane Signer');
});

test('counts above the limit, in every place and of any length, are refused before any key is derived', async () => {
  const rsa = await readFile(pki.rsaP12);
  const legacy = await exportP12(pki, 'legacy', PW, ['-legacy']);
  const cases: [string, Buffer, RegExp][] = [
    ['openssl -iter 1000000 -maciter', await exportP12(pki, 'iter-1m', PW, ['-iter', '1000000', '-maciter']), /MAC iteration count 1000000 is above the limit 600000/],
    ['MAC 2^40', withMacIterations(rsa, integerOctets(2n ** 40n)), /MAC iteration count 1099511627776 is above the limit 600000/],
    ['MAC a 20-byte INTEGER', withMacIterations(rsa, Buffer.alloc(20, 0x7f)), /MAC iteration count \d{48} is above the limit/],
    ['PBKDF2 2^40', withBagIterations(rsa, integerOctets(2n ** 40n)), /PBKDF2 iteration count 1099511627776 is above the limit 600000/],
    ['PBKDF2 a 20-byte INTEGER', withBagIterations(rsa, integerOctets(2n ** 159n + 7n)), /PBKDF2 iteration count 730750818665451459101842416358141509827966271495 is above/],
    ['PKCS#12-PBE 2^40', withBagIterations(legacy, integerOctets(2n ** 40n)), /PKCS#12-PBE iteration count 1099511627776 is above the limit 600000/],
    ['PKCS#12-PBE 600001', withBagIterations(legacy, integerOctets(600_001n)), /PKCS#12-PBE iteration count 600001 is above the limit 600000/],
    ['MAC 0', withMacIterations(rsa, integerOctets(0n)), /MAC iteration count 0 is not a positive number/],
    ['MAC negative', withMacIterations(rsa, Buffer.from([0xff, 0x00])), /MAC iteration count -256 is not a positive number/],
    ['visible key bags adding up', craftPfx(PW, { plainBags: [1, 2, 3, 4].map(() => shroudedKeyBag(integerOctets(500_000n))) }), /iteration counts add up to 2002048, above the limit 2000000/],
  ];
  for (const [name, bytes, message] of cases) {
    const s = scanPkcs12(bytes);
    assert.ok(!s.ok && !s.unreadable, `${name}: ${show(s)}`);
    assert.match(s.message, message, name);
    const { thrown, ms } = loadFails(bytes);
    assert.ok(thrown instanceof CredentialError && thrown.field === 'file', `${name}: ${String(thrown)}`);
    assert.match(thrown.message, message, name);
    assert.ok(ms < 100, `${name}: refused after ${ms} ms`);
  }
  // The limit itself is allowed: GnuTLS's certtool writes 600,000 for the MAC and both PBKDF2s.
  assert.deepEqual(counts(withBagIterations(rsa, integerOctets(600_000n))), ['MAC 2048', 'PBKDF2 600000', 'PBKDF2 600000']);
});

test('counts hidden inside the encrypted part are held to the limits when the keys are derived', async () => {
  const cases: [string, Buffer, RegExp][] = [
    // Before issue 45 node-forge ran these: 3,000,000 PBKDF2-SHA256 iterations in JavaScript (~30 s), 2^31 − 1 PKCS#12-PBE ones (hours).
    ['PBKDF2 3000000', craftPfx(PW, { encryptedBags: [shroudedKeyBag(integerOctets(3_000_000n))] }), /PBKDF2 iteration count 3000000 is above the limit 600000/],
    ['PKCS#12-PBE 2^31 − 1', craftPfx(PW, { encryptedBags: [legacyKeyBag(integerOctets(2n ** 31n - 1n))] }), /PKCS#12-PBE iteration count 2147483647 is above the limit 600000/],
  ];
  for (const [name, bytes, message] of cases) {
    // The pre-scan sees the MAC and the encrypted part's own algorithm only.
    assert.deepEqual(counts(bytes), ['MAC 2048', 'PBKDF2 2048'], name);
    const { thrown, ms } = loadFails(bytes);
    assert.ok(thrown instanceof CredentialError, `${name}: ${String(thrown)}`);
    assert.match(thrown.message, message, name);
    assert.ok(ms < 1000, `${name}: refused after ${ms} ms`);
  }
  // The total counts the hidden derivations: 2048 (MAC) + 2048 (encrypted part) + 2048 (hidden bag) > 5000.
  const hidden = craftPfx(PW, { encryptedBags: [shroudedKeyBag(integerOctets(2048n))] });
  const limits = { maxIterations: 600_000, maxTotalIterations: 5000 };
  assert.ok(scanPkcs12(hidden, limits).ok);
  assert.throws(() => loadPkcs12(hidden, PW, new Date(), limits), /iteration counts add up to 6144, above the limit 5000/);
});

test('structures the reader cannot follow are unreadable, at once', async () => {
  const rsa = await readFile(pki.rsaP12);
  const cases: [string, Buffer][] = [
    ['40,000 nested SEQUENCEs', deeplyNested(40_000)],
    ['cut short', rsa.subarray(0, rsa.length - 40)],
    ['trailing bytes', Buffer.concat([rsa, Buffer.from([0])])],
    ['random bytes', randomBytes(64 * 1024)],
    ['a length of 2^32 − 1', Buffer.from([0x30, 0x84, 0xff, 0xff, 0xff, 0xff, 0x02, 0x01, 0x03])],
    ['empty', Buffer.alloc(0)],
  ];
  for (const [name, bytes] of cases) {
    let s: ReturnType<typeof scanPkcs12> | undefined;
    const ms = timed(() => {
      s = scanPkcs12(bytes);
    });
    assert.ok(s && !s.ok && s.unreadable, `${name}: ${show(s)}`);
    assert.ok(ms < 200, `${name}: ${ms} ms`);
    assert.throws(() => loadPkcs12(bytes, PW), (e: unknown) => e instanceof CredentialError && e.field === 'file', name);
  }
});

test('the native PKCS#12 KDF gives node-forge’s bytes (every digest, purpose, length; odd passwords and salts)', () => {
  const digests = ['md5', 'sha1', 'sha256', 'sha384', 'sha512'] as const;
  const passwords = [null, '', 'pw', 'päss wörd', '口令', 'x'.repeat(130)];
  for (const name of digests) {
    for (const password of passwords) {
      for (const [id, n, salt, iter] of [[1, 24, randomBytes(8), 3], [2, 8, randomBytes(0), 1], [3, 100, randomBytes(67), 5]] as const) {
        const md = forge.md[name].create();
        const theirs = forge.pkcs12.generateKey(password as string, forge.util.createBuffer(salt.toString('binary')), id, iter, n, md).getBytes();
        const ours = pkcs12Kdf(password, salt, id, iter, n, name, md.digestLength, md.blockLength);
        assert.equal(ours.toString('hex'), Buffer.from(theirs, 'binary').toString('hex'), `${name} ${JSON.stringify(password)} ${id} ${n}`);
      }
    }
  }
});

test('inside withBoundedDerivations node-forge’s derivations are native, give the same bytes and are put back after', () => {
  const pure = forge.pkcs5.pbkdf2;
  const expected = forge.pkcs5.pbkdf2('pässword', 'salt-salt', 3000, 32, forge.md.sha256.create());
  const t = performance.now();
  const fast = withBoundedDerivations(() => forge.pkcs5.pbkdf2('pässword', 'salt-salt', 3000, 32, forge.md.sha256.create()));
  assert.equal(Buffer.from(fast, 'binary').toString('hex'), Buffer.from(expected, 'binary').toString('hex'));
  assert.ok(performance.now() - t < 1000);
  assert.equal(forge.pkcs5.pbkdf2, pure, 'put back');
  // A refusal puts them back too.
  assert.throws(() => withBoundedDerivations(() => forge.pkcs5.pbkdf2('p', 's', PKCS12_LIMITS.maxIterations + 1, 32, forge.md.sha256.create())), /PBKDF2 iteration count 600001 is above the limit 600000/);
  assert.equal(forge.pkcs5.pbkdf2, pure);
});

test('openPkcs12: the worker opens a file while the event loop stays free; a time-out refuses naming file', { timeout: 120_000 }, async () => {
  // The file: 100,000 iterations for the MAC and both PBKDF2s (node-forge held the event loop 1.4 s with it).
  const slow = await exportP12(pki, 'iter-100k', PW, ['-iter', '100000', '-maciter']);
  // The longest pause of this thread's event loop while the worker derives 300,000 iterations.
  const thread = watchThreadCpu();
  const t = performance.now();
  const opened = await openPkcs12(slow, PW);
  const ms = performance.now() - t;
  const { cpuMs, worstPauseMs } = thread.stop();
  assert.equal(opened.facts.commonName, 'Jane Signer');
  assert.equal(opened.facts.sha256, loadPkcs12(slow, PW).facts.sha256);
  // CPU of the event loop's thread, which a busy machine does not stretch: the derivation is the worker's.
  assert.ok(cpuMs < 250, `the event loop's thread spent ${cpuMs} ms of CPU while the file opened (${Math.round(ms)} ms; longest pause ${worstPauseMs} ms)`);
  await assert.rejects(openPkcs12(slow, PW, new Date(), { timeoutMs: 50 }), (e: unknown) => e instanceof CredentialError && e.field === 'file' && /took longer than 0.05 s to open/.test(e.message));
  // A wrong password through the worker still names the password; several at once all answer.
  await assert.rejects(openPkcs12(await readFile(pki.rsaP12), 'wrong'), (e: unknown) => e instanceof CredentialError && e.field === 'password');
  const many = await Promise.all([1, 2, 3, 4, 5].map(async () => (await openPkcs12(await readFile(pki.ecP12), PW)).facts.commonName));
  assert.deepEqual(many, Array(5).fill('Erin Signer'));
  // Over the limit: refused in this thread, no worker started.
  const t2 = performance.now();
  await assert.rejects(openPkcs12(withMacIterations(slow, integerOctets(2n ** 40n)), PW), /MAC iteration count 1099511627776 is above the limit 600000/);
  assert.ok(performance.now() - t2 < 50);
});
