import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { checkSyntax, type SyntaxError } from './syntax.check.js';

const fixture = (name: string): unknown => JSON.parse(readFileSync(new URL(`../../test/fixtures/${name}`, import.meta.url), 'utf8'));

type Expected = 'valid' | 'invalid' | 'ip_literal';
const outcome = (address: string): Expected => {
  const r = checkSyntax(address);
  return !r.ok ? 'invalid' : r.ipLiteral ? 'ip_literal' : 'valid';
};

/**
 * Where we deliberately part from the corpus' verdict (each listed in the README, "Syntax"):
 * the address, what the corpus implies, what we answer, and why.
 */
const ISEMAIL_DIFFERENCES: Record<string, Expected> = {
  // An empty quoted local part is RFC-legal but names no mailbox.
  '""@iana.org': 'invalid',
  // Surrounding spaces are trimmed (people paste them); is_email calls them folding white space.
  ' test@iana.org': 'valid',
  'test@iana.org ': 'valid',
};

test('is_email corpus (BSD): valid, quoted and address-literal cases pass, everything else fails', () => {
  const cases = fixture('isemail-tests.json') as [string, string][];
  assert.ok(cases.length >= 150, `corpus has ${cases.length} cases`);
  const mismatches: string[] = [];
  for (const [address, diagnosis] of cases) {
    let expected: Expected =
      diagnosis === 'valid' || diagnosis === 'rfc5321QuotedString' ? 'valid' : diagnosis === 'rfc5321AddressLiteral' ? 'ip_literal' : 'invalid';
    if (address in ISEMAIL_DIFFERENCES) expected = ISEMAIL_DIFFERENCES[address] as Expected;
    const got = outcome(address);
    if (got !== expected) mismatches.push(`${JSON.stringify(address)} (${diagnosis}): expected ${expected}, got ${got}`);
  }
  assert.deepEqual(mismatches, []);
});

test('validator.js isEmail corpus (MIT): same verdict on every default-options case', () => {
  const { valid, invalid } = fixture('validator-isemail.json') as { valid: string[]; invalid: string[] };
  const wrong = [
    ...valid.filter((a) => outcome(a) !== 'valid').map((a) => `should pass: ${a}`),
    ...invalid.filter((a) => outcome(a) !== 'invalid').map((a) => `should fail: ${a}`),
  ];
  assert.deepEqual(wrong, []);
});

test('each failure names the rule it breaks', () => {
  const cases: [string, SyntaxError][] = [
    ['', 'empty'],
    ['   ', 'empty'],
    ['a\r\nb@example.com', 'control_character'],
    ['a@exa\u0000mple.com', 'control_character'],
    ['john smith@example.com', 'whitespace'],
    ['john@exam ple.com', 'whitespace'],
    ['nbsp\u00a0x@example.com', 'whitespace'],
    ['example.com', 'missing_at'],
    ['@example.com', 'missing_local'],
    ['john@', 'missing_domain'],
    [`${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(60)}.com`, 'address_too_long'],
    [`${'a'.repeat(65)}@example.com`, 'local_too_long'],
    [`${'é'.repeat(33)}@example.com`, 'local_too_long'],
    [`a@${'b'.repeat(64)}.com`, 'label_too_long'],
    ['.john@example.com', 'leading_dot'],
    ['john.@example.com', 'trailing_dot'],
    ['jo..hn@example.com', 'consecutive_dots'],
    ['john@example..com', 'consecutive_dots'],
    ['john@.example.com', 'leading_dot'],
    ['john@example.com.', 'trailing_dot'],
    ['jo(hn)@example.com', 'invalid_local_char'],
    ['jo,hn@example.com', 'invalid_local_char'],
    ['a@b@example.com', 'invalid_domain_char'],
    ['"john@example.com', 'unclosed_quote'],
    ['"jo\\\u00e9"@example.com', 'invalid_quoted_char'],
    ['"john".doe@example.com', 'text_after_quote'],
    ['""@example.com', 'empty_quoted_local'],
    ['jo\u200bhn@example.com', 'invalid_local_char'],
    ['jo\ud800hn@example.com', 'invalid_utf8'],
    ['john@exa_mple.com', 'invalid_domain_char'],
    ['john@-example.com', 'label_hyphen'],
    ['john@example-.com', 'label_hyphen'],
    ['john@localhost', 'domain_single_label'],
    ['john@example.123', 'tld_numeric'],
    ['john@192.168.0.1', 'tld_numeric'],
    ['john@example.c', 'tld_too_short'],
    ['john@ｅｘａｍｐｌｅ.com', 'domain_idna_invalid'],
    ['john@xn--zz-zzz.com', 'domain_idna_invalid'],
    ['john@[300.1.1.1]', 'ip_literal_invalid'],
    ['john@[IPv6:1::2::3]', 'ip_literal_invalid'],
    ['john@[example.com]', 'ip_literal_invalid'],
  ];
  for (const [address, error] of cases) {
    assert.deepEqual(checkSyntax(address), { ok: false, error }, JSON.stringify(address));
  }
});

test('IDN domains come out in punycode for DNS and in Unicode for people', () => {
  const r = checkSyntax('José@Bücher.Example');
  assert.ok(r.ok);
  assert.equal(r.domain, 'xn--bcher-kva.example');
  assert.equal(r.domainUnicode, 'bücher.example');
  assert.equal(r.local, 'José');
  assert.equal(r.smtputf8, true);
  const p = checkSyntax('info@xn--bcher-kva.example');
  assert.ok(p.ok);
  assert.equal(p.domainUnicode, 'bücher.example');
  assert.equal(p.smtputf8, false);
});

test('quoted local parts, SMTPUTF8 local parts and limits at their exact edge are accepted', () => {
  for (const address of [
    '"john doe"@example.com',
    '"john\\"doe"@example.com',
    '用户@例子.广告',
    'θσερ@εχαμπλε.ψομ',
    `${'a'.repeat(64)}@example.com`,
    `${'é'.repeat(32)}@example.com`,
    `a@${'b'.repeat(63)}.com`,
    `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.com`,
    '  padded@example.com\t',
  ]) {
    const r = checkSyntax(address);
    assert.equal(r.ok, true, address);
    assert.equal(r.ok && r.ipLiteral, false, address);
  }
});

test('IP-literal domains are well-formed but flagged as not verifiable', () => {
  for (const address of ['a@[192.0.2.1]', 'a@[IPv6:2001:db8::1]', 'a@[IPv6:::ffff:192.0.2.1]']) {
    const r = checkSyntax(address);
    assert.ok(r.ok, address);
    assert.equal(r.ipLiteral, true, address);
  }
});

test('random inputs never throw, and an accepted address re-checks as accepted in its ASCII form', () => {
  // Seeded, so a failure reproduces; the alphabet is biased towards the characters that matter.
  let s = 42;
  const rand = (): number => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return s / 4294967296;
  };
  const alphabet = ['a', 'b', 'z', '0', '.', '.', '@', '@', '"', '\\', '-', '_', '+', ' ', '[', ']', ':', '(', ')', 'é', 'ü', '用', '\u200b', '\r', 'I', 'P', 'v', '6', 'x', 'n', '--'];
  let accepted = 0;
  for (let i = 0; i < 20_000; i++) {
    let str = '';
    const len = 1 + Math.floor(rand() * 24);
    for (let j = 0; j < len; j++) str += alphabet[Math.floor(rand() * alphabet.length)];
    if (rand() < 0.5) str += '@example.com';
    const r = checkSyntax(str);
    if (!r.ok) continue;
    accepted++;
    const again = checkSyntax(`${r.local}@${r.domain}`);
    assert.ok(again.ok, `${JSON.stringify(str)} → ${r.local}@${r.domain}`);
    assert.equal(again.domain, r.domain);
  }
  assert.ok(accepted > 100, `only ${accepted} accepted: the generator no longer exercises the accept path`);
});
