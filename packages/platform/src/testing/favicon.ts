import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';

/** A service's `/favicon.ico` is the dashboards' mark, an ICO file cached for a month (issue 44). */
export async function assertServesFavicon(app: FastifyInstance): Promise<void> {
  const res = await app.inject({ method: 'GET', url: '/favicon.ico' });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'image/x-icon');
  assert.equal(res.headers['cache-control'], 'public, max-age=2592000');
  assert.deepEqual([...res.rawPayload.subarray(0, 4)], [0, 0, 1, 0], 'an ICO file');
}
