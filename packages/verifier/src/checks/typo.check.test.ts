import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { suggestDomain, typoDistance, POPULAR_DOMAINS } from './typo.check.js';

interface Case {
  domain: string;
  expected: string | null;
  heldOut?: boolean;
}

function score(list: Case[]): { precision: number; recall: number; typos: number; misses: string[] } {
  let truePos = 0;
  let suggested = 0;
  let typos = 0;
  const misses: string[] = [];
  for (const c of list) {
    const got = suggestDomain(c.domain);
    if (c.expected !== null) typos++;
    if (got !== null) suggested++;
    if (got !== null && got === c.expected) truePos++;
    if (got !== c.expected) misses.push(`${c.domain}: expected ${c.expected}, got ${got}`);
  }
  return { precision: suggested === 0 ? 1 : truePos / suggested, recall: truePos / typos, typos, misses };
}
const { cases } = JSON.parse(readFileSync(new URL('../../test/fixtures/typo-cases.json', import.meta.url), 'utf8')) as { cases: Case[] };

test('typo fixture: precision and recall stay above their floors', (t) => {
  assert.ok(cases.length >= 100);
  const all = score(cases);
  const held = cases.filter((c) => c.heldOut === true);
  const heldOut = score(held);
  t.diagnostic(`typo fixture: ${cases.length} cases (${all.typos} typos) precision=${all.precision.toFixed(3)} recall=${all.recall.toFixed(3)}`);
  t.diagnostic(`held-out part: ${held.length} cases (${heldOut.typos} typos) precision=${heldOut.precision.toFixed(3)} recall=${heldOut.recall.toFixed(3)}`);
  if (all.misses.length) t.diagnostic(`differences: ${all.misses.join('; ')}`);
  assert.ok(all.precision >= 0.97, `precision ${all.precision}`);
  assert.ok(all.recall >= 0.9, `recall ${all.recall}`);
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
