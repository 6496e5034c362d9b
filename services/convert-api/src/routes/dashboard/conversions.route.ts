import { Type } from 'typebox';
import type { ServiceApp } from '@mailconv/platform';
import { ConversionRecordSchema } from '../../conversion/schemas.js';
import { ownerOf, type ConvertDeps } from '../../deps.js';
import { SECURED, errors, secured } from '../../schemas.js';

const ListQuery = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'How many conversions (1–100, default 20).' })) },
  { additionalProperties: false },
);

const ConversionList = Type.Object({
  success: Type.Boolean(),
  conversions: Type.Array(ConversionRecordSchema, { description: 'Newest first; the same records as GET /api/v1/jobs/{id}.' }),
});

/**
 * `GET /api/dashboard/conversions`: the caller's recent conversions (an extension, not in
 * the contract; the dashboard's "Recent conversions" list).
 */
export function registerDashboardConversionRoutes(app: ServiceApp, deps: ConvertDeps): void {
  app.get(
    '/api/dashboard/conversions',
    {
      schema: {
        tags: ['dashboard'],
        summary: 'Extension: the account’s most recent conversions, newest first',
        security: SECURED,
        querystring: ListQuery,
        response: secured({ 200: ConversionList, ...errors(400, 401, 429, 500) }),
      },
    },
    async (request) => ({ success: true, conversions: await deps.conversions.recent(ownerOf(deps, request.principal!), request.query.limit ?? 20) }),
  );
}
