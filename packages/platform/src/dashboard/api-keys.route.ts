import { Type, type TSchema } from 'typebox';
import type { ApiKeysService } from '../accounts/api-keys.service.js';
import type { ServiceApp } from '../http/create-app.js';
import { NO_NUL, Nullable } from '../http/schemas.js';

export interface ApiKeyRoutesOptions {
  apiKeys: ApiKeysService;
  /** The service's key prefix, shown in the documented example (`ev_live_`, `cv_live_`). */
  keyPrefix: string;
  /** The service's `security` requirement of authenticated routes. */
  security: Array<Record<string, string[]>>;
  /** The service's documented error responses for these statuses. */
  errors: (...statuses: number[]) => Record<number, TSchema>;
  /** Adds the headers every authenticated answer carries. */
  secured: (responses: Record<number, TSchema>) => Record<number, TSchema>;
  /** Marks the routes as an extension of the service's contract (the conversion contract has no key endpoints). */
  extension?: boolean;
}

/**
 * `GET|POST|DELETE /api/dashboard/api-keys`: the caller's own keys, the same on both
 * services. Registered inside the authenticated scope (an API key or a dashboard session).
 */
export function registerApiKeyRoutes(app: ServiceApp, options: ApiKeyRoutesOptions): void {
  const tags = ['api-keys'];
  const { errors, secured } = options;
  const SECURED = options.security;
  const deps = { apiKeys: options.apiKeys };
  const KeyItem = Type.Object({
    id: Type.String({ description: '`key_…`' }),
    name: Type.String(),
    key_preview: Type.String({ description: `Prefix and last four characters, e.g. \`${options.keyPrefix}…a1B2\`.` }),
    created_at: Type.String({ format: 'date-time' }),
    last_used: Nullable(Type.String({ format: 'date-time', description: 'Updated within about a second of use (requests made with a dashboard session use no key).' })),
  });
  const note = options.extension ? 'Extension (dashboard): not in the API contract. ' : '';

  app.get(
    '/api/dashboard/api-keys',
    {
      schema: {
        tags,
        summary: 'List the account’s active API keys (masked)',
        ...(note ? { description: note.trim() } : {}),
        security: SECURED,
        response: secured({ 200: Type.Object({ success: Type.Boolean(), keys: Type.Array(KeyItem) }), ...errors(401, 429, 500) }),
      },
    },
    async (request) => ({ success: true, keys: await deps.apiKeys.list(request.principal!.accountId) }),
  );

  app.post(
    '/api/dashboard/api-keys',
    {
      schema: {
        tags,
        summary: 'Create an API key; the full key is in this answer only',
        ...(note ? { description: note.trim() } : {}),
        security: SECURED,
        body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 100, pattern: NO_NUL }) }, { additionalProperties: false }),
        response: secured({
          200: Type.Object({
            success: Type.Boolean(),
            api_key: Type.String({ description: 'The full key, shown once. Store it now; only a hash is kept.' }),
            id: Type.String({ description: 'Extension: the new key’s id, for revoking it later.' }),
            name: Type.String(),
            key_preview: Type.String(),
            created_at: Type.String({ format: 'date-time' }),
          }),
          ...errors(400, 401, 413, 415, 429, 500),
        }),
      },
    },
    async (request) => {
      const created = await deps.apiKeys.create(request.principal!.accountId, request.body.name);
      return { success: true, api_key: created.apiKey, id: created.key.id, name: created.key.name, key_preview: created.key.key_preview, created_at: created.key.created_at };
    },
  );

  app.delete(
    '/api/dashboard/api-keys',
    {
      schema: {
        tags,
        summary: 'Revoke an API key (effective at once, on every node)',
        description: `${note}Revoking the account’s last active key is refused with 409 \`conflict\`: create a new key first.`,
        security: SECURED,
        querystring: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, pattern: NO_NUL, description: 'The key id (`key_…`).' }) }),
        response: secured({ 200: Type.Object({ success: Type.Boolean(), id: Type.String() }), ...errors(400, 401, 404, 409, 429, 500) }),
      },
    },
    async (request) => {
      const { id } = request.query;
      await deps.apiKeys.revoke(request.principal!.accountId, id);
      return { success: true, id };
    },
  );
}
