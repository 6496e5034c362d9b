import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { signWebhook, verifyWebhookSignature } from './webhooks.js';

const secret = 'whsec_3f9a1c77c0b84e2d9d3c';
const body = '{"event":"job.completed","job_id":"job_01","summary":{"total":3,"valid":2,"invalid":1,"risky":0},"timestamp":"2026-11-21T12:00:00.000Z"}';
// Computed independently of the helper, as a receiver would.
const independent = `sha256=${createHmac('sha256', secret).update(Buffer.from(body, 'utf8')).digest('hex')}`;

test('a genuine signature verifies, for string and byte bodies, in either hex case', () => {
  assert.equal(signWebhook(body, secret), independent);
  assert.equal(verifyWebhookSignature(body, independent, secret), true);
  assert.equal(verifyWebhookSignature(Buffer.from(body), independent, secret), true);
  assert.equal(verifyWebhookSignature(body, independent.toUpperCase().replace('SHA256=', 'sha256='), secret), true);
  assert.equal(verifyWebhookSignature(body, [independent, 'other'], secret), true);
});

test('any change to the body, the secret or the signature is detected', () => {
  assert.equal(verifyWebhookSignature(body.replace('"valid":2', '"valid":3'), independent, secret), false);
  assert.equal(verifyWebhookSignature(JSON.stringify(JSON.parse(body), null, 1), independent, secret), false, 're-serialised JSON is not the raw body');
  assert.equal(verifyWebhookSignature(body, independent, `${secret}x`), false);
  const flipped = independent.slice(0, -1) + (independent.endsWith('0') ? '1' : '0');
  assert.equal(verifyWebhookSignature(body, flipped, secret), false);
});

test('missing or malformed headers are false, not exceptions', () => {
  for (const header of [undefined, null, '', 'sha256=', 'sha1=abcd', independent.slice(7), `${independent}00`, 'sha256=zz' + 'a'.repeat(62)]) {
    assert.equal(verifyWebhookSignature(body, header, secret), false, String(header));
  }
  assert.equal(verifyWebhookSignature(body, independent, ''), false);
});
