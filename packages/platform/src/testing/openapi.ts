import assert from 'node:assert/strict';
import SwaggerParser from '@apidevtools/swagger-parser';
import type { FastifyInstance } from 'fastify';
import '../http/create-app.js';

/**
 * Validates the app's served `/openapi.json` with a real OpenAPI validator and checks that
 * every registered route (but HEAD twins) is documented with its method.
 */
export async function assertOpenApiComplete(app: FastifyInstance): Promise<Record<string, unknown>> {
  const res = await app.inject({ method: 'GET', url: '/openapi.json' });
  assert.equal(res.statusCode, 200);
  const doc = res.json() as { openapi: string; paths: Record<string, Record<string, unknown>> };
  assert.equal(doc.openapi, '3.0.3');
  await SwaggerParser.validate(structuredClone(doc) as never);
  const missing: string[] = [];
  for (const r of app.routeIndex.list()) {
    if (r.method === 'HEAD') continue;
    const path = r.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    if (!doc.paths[path]?.[r.method.toLowerCase()]) missing.push(`${r.method} ${path}`);
  }
  assert.deepEqual(missing, [], 'every registered route is documented');
  return doc;
}
