// Loopback only: a service whose MX lookups go to EMAIL_DNS_SERVERS (the rig, in tests) must
// resolve webhook hosts there too, never through the system's resolver. Pure function: this
// test sends nothing, whatever the answer.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { webhookResolvers } from './composition.js';

test('webhook hosts are resolved by EMAIL_DNS_SERVERS when set, by the explicit resolvers first', () => {
  assert.deepEqual(webhookResolvers({ dnsServers: ['127.0.0.1:5353'] }), ['127.0.0.1:5353']);
  assert.deepEqual(webhookResolvers({ dnsServers: ['127.0.0.1:5353'] }, ['127.0.0.2:53']), ['127.0.0.2:53']);
  assert.equal(webhookResolvers({ dnsServers: [] }), undefined);
});
