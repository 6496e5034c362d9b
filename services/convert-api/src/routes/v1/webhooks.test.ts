import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verifyWebhookSignature } from '@mailconv/client';
import { Converter } from '@mailconv/converter';
import { findProjectRoot } from '@mailconv/platform';
import { assertAnswersMatchDocument, recordAnswers, testBackends, TestReceiver, type RecordedAnswer } from '@mailconv/platform/testing';
import { useConvertApp } from './api.test-support.js';

const PNG = join(findProjectRoot(), 'packages', 'converter', 'test', 'fixtures', 'sample.png');

/**
 * Completion webhooks (issue 24) on the platform's outbox, dispatcher and signer — the ones
 * the email service uses. The receiver is a real HTTPS server on 127.0.0.1 with a throw-away
 * CA; `CONVERT_WEBHOOKS_RESTRICT_TO` fences every delivery to loopback, so nothing here can
 * leave the machine whatever a URL says.
 */
let receiver: TestReceiver;
let converter: Converter;
let work: string;
let png: Buffer;
const env: Record<string, string> = {
  CONVERT_WEBHOOKS_ALLOW_INSECURE: 'true',
  CONVERT_WEBHOOKS_RESTRICT_TO: '127.0.0.0/8,::1/128',
  CONVERT_WEBHOOKS_RETRY_SCHEDULE: '200ms,300ms',
  CONVERT_WEBHOOKS_POLL_MS: '100',
  CONVERT_WEBHOOKS_TIMEOUT_MS: '2000',
  CONVERT_PUBLIC_BASE_URL: 'http://127.0.0.1:8081',
};

before(async () => {
  receiver = await TestReceiver.start();
  env.CONVERT_WEBHOOKS_CA_FILE = receiver.caFile;
  work = await mkdtemp(join(tmpdir(), 'convert-webhooks-'));
  png = await readFile(PNG);
  converter = await Converter.create({ workDir: join(work, 'engine') });
});
after(async () => {
  await converter.close();
  await receiver.close();
  await rm(work, { recursive: true, force: true });
});

interface Delivery {
  delivery_id: string;
  event: string;
  target_url: string | null;
  state: string;
  attempts: number;
  history: Array<{ status_code: number | null; error: string | null }>;
}

for (const backend of testBackends()) {
  describe(`conversion webhooks on ${backend}, to a real HTTPS receiver on loopback`, () => {
    const fx = useConvertApp(backend, { storage: () => join(work, `storage-${backend}`), converter: () => converter, email: `hooks-${backend}@example.com`, env });
    let answers: RecordedAnswer[];
    before(() => {
      answers = recordAnswers(fx.app);
    });

    const call = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) =>
      fx.app.inject({ method, url, headers: { authorization: `Bearer ${fx.key}`, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) }, ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }) });
    const hook = async (path: string, events?: string) => {
      const res = await call('POST', '/api/dashboard/webhooks', { url: receiver.url(`/${backend}${path}`), ...(events ? { events } : {}) });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().webhook as { webhook_id: string; secret: string; events: string };
    };
    const upload = async () => {
      const boundary = 'hooks-boundary';
      const body = Buffer.concat([Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="photo.png"\r\ncontent-type: image/png\r\n\r\n`), png, Buffer.from(`\r\n--${boundary}--\r\n`)]);
      const res = await fx.app.inject({ method: 'POST', url: '/api/v1/upload', headers: { authorization: `Bearer ${fx.key}`, 'content-type': `multipart/form-data; boundary=${boundary}` }, payload: body });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().upload_id as string;
    };
    const convert = async (body: Record<string, unknown>) => call('POST', '/api/v1/convert?wait=60', { upload_id: await upload(), ...body });
    const logUntil = async (webhookId: string, done: (log: Delivery[]) => boolean): Promise<Delivery[]> => {
      for (;;) {
        const res = await call('GET', `/api/dashboard/webhooks/${webhookId}/deliveries`);
        assert.equal(res.statusCode, 200, res.body);
        const log = res.json().deliveries as Delivery[];
        if (done(log)) return log;
        await new Promise((r) => setTimeout(r, 100));
      }
    };

    test('conversion.completed and conversion.failed reach the endpoint, signed (checked by the SDK helper), with the documented payload', { timeout: 60_000 }, async () => {
      const h = await hook('/all');
      assert.equal(h.events, 'conversion.completed,conversion.failed');
      assert.match(h.secret, /^whsec_/);
      const done = await convert({ target_format: 'jpg' });
      assert.equal(done.statusCode, 200, done.body);
      const record = done.json();
      const failed = await convert({ target_format: 'jpg', max_output_bytes: 1 });
      assert.equal(failed.json().status, 'failed', failed.body);
      const received = await receiver.waitFor(`/${backend}/all`, 2);
      const events = received.map((r) => {
        assert.ok(verifyWebhookSignature(r.body, r.headers['x-service-signature'], h.secret), 'signed with the endpoint’s secret over the raw body');
        assert.equal(verifyWebhookSignature(r.body, r.headers['x-service-signature'], 'whsec_wrong'), false);
        assert.equal(r.headers['user-agent'], 'MailconvFileConversion-Webhooks/1.0');
        assert.match(String(r.headers['x-service-delivery']), /^dlv_/);
        return JSON.parse(r.body.toString('utf8')) as Record<string, unknown>;
      });
      const completed = events.find((e) => e.event === 'conversion.completed')!;
      assert.deepEqual(Object.keys(completed).sort(), ['download_url', 'error', 'event', 'id', 'output', 'status', 'timestamp']);
      assert.deepEqual(completed, {
        event: 'conversion.completed',
        id: record.id,
        status: 'completed',
        output: { format: 'jpg', size_bytes: record.output.size_bytes, sha256: record.output.sha256 },
        download_url: record.download_url,
        error: null,
        timestamp: completed.timestamp,
      });
      assert.ok(!Number.isNaN(Date.parse(String(completed.timestamp))));
      const failure = events.find((e) => e.event === 'conversion.failed')!;
      assert.deepEqual([failure.id, failure.status, failure.output, failure.download_url, (failure.error as { code: string }).code], [failed.json().id, 'failed', null, null, 'output_too_large']);
      const listed = await call('GET', '/api/dashboard/webhooks');
      assert.deepEqual(
        listed.json().webhooks.map((w: { webhook_id: string }) => w.webhook_id),
        [h.webhook_id],
      );
      assert.ok(!listed.body.includes(h.secret), 'the secret is shown once, at creation');
      await call('DELETE', `/api/dashboard/webhooks?id=${h.webhook_id}`);
    });

    test('an endpoint subscribed to one event gets only that one; unknown events are 400 naming the field', { timeout: 60_000 }, async () => {
      const h = await hook('/failed-only', 'conversion.failed');
      const bad = await call('POST', '/api/dashboard/webhooks', { url: receiver.url('/x'), events: 'conversion.completed,job.completed' });
      assert.deepEqual([bad.statusCode, bad.json().error, bad.json().field], [400, 'invalid_request', 'events']);
      await convert({ target_format: 'jpg' });
      const failed = await convert({ target_format: 'jpg', max_output_bytes: 1 });
      const [only] = await receiver.waitFor(`/${backend}/failed-only`, 1);
      assert.equal(JSON.parse(only!.body.toString()).id, failed.json().id);
      const log = await logUntil(h.webhook_id, (l) => l.length === 1 && l[0]!.state === 'delivered');
      assert.equal(log[0]!.event, 'conversion.failed');
      await call('DELETE', `/api/dashboard/webhooks?id=${h.webhook_id}`);
    });

    test('a receiver that fails twice gets the same delivery a third time; one that always fails is dead-lettered, then redelivered', { timeout: 60_000 }, async () => {
      receiver.behave(`/${backend}/flaky`, (n) => (n <= 2 ? 500 : 204));
      receiver.behave(`/${backend}/down`, () => 503);
      const flaky = await hook('/flaky');
      const down = await hook('/down');
      await convert({ target_format: 'webp' });
      const [delivered] = await logUntil(flaky.webhook_id, (l) => l[0]?.state === 'delivered');
      assert.deepEqual(delivered!.history.map((a) => a.status_code), [500, 500, 204]);
      const bodies = receiver.at(`/${backend}/flaky`).map((r) => r.body.toString('hex'));
      assert.equal(new Set(bodies).size, 1, 'every attempt sends the same bytes');
      assert.equal(new Set(receiver.at(`/${backend}/flaky`).map((r) => r.headers['x-service-delivery'])).size, 1, 'and the same delivery id');
      const [dead] = await logUntil(down.webhook_id, (l) => l[0]?.state === 'dead');
      assert.equal(dead!.attempts, 3);
      assert.deepEqual(dead!.history.map((a) => a.error), ['http_503', 'http_503', 'http_503']);
      receiver.behave(`/${backend}/down`, () => 204);
      const again = await call('POST', `/api/dashboard/webhooks/${down.webhook_id}/deliveries/${dead!.delivery_id}/redeliver`);
      assert.equal(again.statusCode, 200, again.body);
      const [redelivered] = await logUntil(down.webhook_id, (l) => l[0]?.state === 'delivered');
      assert.equal(redelivered!.delivery_id, dead!.delivery_id);
      for (const id of [flaky.webhook_id, down.webhook_id]) await call('DELETE', `/api/dashboard/webhooks?id=${id}`);
    });

    test('a per-request webhook_url: refused until the account has a request secret, checked like an endpoint, then told and signed', { timeout: 60_000 }, async () => {
      const target = receiver.url(`/${backend}/per-request`);
      const before = await call('GET', '/api/dashboard/webhooks/request-secret');
      assert.deepEqual(before.json(), { success: true, identity: null });
      const early = await convert({ target_format: 'jpg', webhook_url: target });
      assert.deepEqual([early.statusCode, early.json().field], [400, 'webhook_url']);
      const made = await call('POST', '/api/dashboard/webhooks/request-secret');
      assert.equal(made.statusCode, 200, made.body);
      const identity = made.json().identity as { webhook_id: string; secret: string };
      assert.match(identity.secret, /^whsec_/);
      const shown = await call('GET', '/api/dashboard/webhooks/request-secret');
      assert.equal(shown.json().identity.webhook_id, identity.webhook_id);
      assert.ok(!shown.body.includes(identity.secret), 'the secret is shown once');
      for (const [url, why] of [['ftp://127.0.0.1/x', 'scheme'], [`https://user:pass@127.0.0.1:${receiver.port}/x`, 'credentials'], ['not a url', 'syntax']] as const) {
        const res = await convert({ target_format: 'jpg', webhook_url: url });
        assert.deepEqual([res.statusCode, res.json().error, res.json().field], [400, 'invalid_request', 'webhook_url'], why);
      }
      const ok = await convert({ target_format: 'gif', webhook_url: target });
      assert.equal(ok.statusCode, 200, ok.body);
      assert.equal(ok.json().webhook_url, target, 'the record says where the outcome goes');
      const [r] = await receiver.waitFor(`/${backend}/per-request`, 1);
      assert.ok(verifyWebhookSignature(r!.body, r!.headers['x-service-signature'], identity.secret));
      assert.equal(JSON.parse(r!.body.toString()).id, ok.json().id);
      const [logged] = await logUntil(identity.webhook_id, (l) => l[0]?.state === 'delivered');
      assert.equal(logged!.target_url, target);
      // The identity is no endpoint: not listed, not counted against the ten.
      assert.deepEqual((await call('GET', '/api/dashboard/webhooks')).json().webhooks, []);
    });

    test('at most 10 active endpoints (409 webhook_limit_reached); another account’s ids are 404', async () => {
      const made: string[] = [];
      for (let i = 0; i < 10; i++) made.push((await hook(`/limit-${i}`)).webhook_id);
      const over = await call('POST', '/api/dashboard/webhooks', { url: receiver.url('/limit-x') });
      assert.deepEqual([over.statusCode, over.json().error], [409, 'webhook_limit_reached']);
      const missing = await call('DELETE', '/api/dashboard/webhooks?id=wh_not_mine');
      assert.deepEqual([missing.statusCode, missing.json().error], [404, 'not_found']);
      for (const id of made) assert.equal((await call('DELETE', `/api/dashboard/webhooks?id=${id}`)).statusCode, 200);
    });

    test('every answer matches the OpenAPI document (status, headers, body)', async () => {
      const covered = await assertAnswersMatchDocument(fx.app, answers);
      for (const route of ['POST /api/dashboard/webhooks', 'GET /api/dashboard/webhooks/{id}/deliveries', 'POST /api/dashboard/webhooks/request-secret']) assert.ok(covered.has(route), route);
    });
  });
}
