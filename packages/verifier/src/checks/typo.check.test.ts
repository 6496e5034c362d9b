import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { suggestDomain, typoDistance, POPULAR_DOMAINS } from './typo.check.js';

interface Case {
  domain: string;
  expected: string | null;
}
const { cases } = JSON.parse(readFileSync(new URL('../../test/fixtures/typo-cases.json', import.meta.url), 'utf8')) as { cases: Case[] };

test('typo fixture: precision and recall stay above their floors', (t) => {
  assert.ok(cases.length >= 100);
  let truePos = 0;
  let suggested = 0;
  let typos = 0;
  const misses: string[] = [];
  for (const c of cases) {
    const got = suggestDomain(c.domain);
    if (c.expected !== null) typos++;
    if (got !== null) suggested++;
    if (got !== null && got === c.expected) truePos++;
    if (got !== c.expected) misses.push(`${c.domain}: expected ${c.expected}, got ${got}`);
  }
  const precision = truePos / suggested;
  const recall = truePos / typos;
  t.diagnostic(`typo fixture: ${cases.length} cases (${typos} typos), precision=${precision.toFixed(3)} recall=${recall.toFixed(3)}`);
  if (misses.length) t.diagnostic(`differences: ${misses.join('; ')}`);
  assert.ok(precision >= 0.97, `precision ${precision}`);
  assert.ok(recall >= 0.9, `recall ${recall}`);
});

test('real, distinct providers are never corrected', () => {
  for (const d of POPULAR_DOMAINS) assert.equal(suggestDomain(d), null, d);
  for (const d of ['gmx.com', 'mail.com', 'aol.com', 'ymail.com', 'gmx.at', 'live.ca', 'hotmail.be']) assert.equal(suggestDomain(d), null, d);
});

test('the examples of the issue', () => {
  assert.equal(suggestDomain('gmial.com'), 'gmail.com');
  assert.equal(suggestDomain('hotmial.con'), 'hotmail.com');
  assert.equal(suggestDomain('example.cmo'), 'example.com');
});

test('typoDistance counts an adjacent swap as one slip and stops past its limit', () => {
  assert.equal(typoDistance('gmial', 'gmail', 2), 1);
  assert.equal(typoDistance('hotmail', 'hotmail', 1), 0);
  assert.equal(typoDistance('kitten', 'sitting', 5), 3);
  assert.equal(typoDistance('abcdef', 'uvwxyz', 1), 2);
  assert.equal(typoDistance('a', 'abcd', 1), 2);
});
