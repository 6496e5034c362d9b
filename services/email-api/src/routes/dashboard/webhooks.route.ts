import { Type } from 'typebox';
import { AppError, NO_NUL, Nullable, type ServiceApp } from '@mailconv/platform';
import { planOf, type EmailDeps } from '../../deps.js';
import { MAX_ACTIVE_WEBHOOKS } from '../../repositories/webhooks.repository.js';
import { SECURED, errors, secured } from '../../schemas.js';
import { WEBHOOK_EVENTS } from '../../webhooks/webhooks.service.js';

const Webhook = Type.Object({
  webhook_id: Type.String({ description: '`wh_…`' }),
  url: Type.String({ format: 'uri' }),
  events: Type.String({ description: 'Comma-separated event names.' }),
  active: Type.Boolean(),
  last_triggered: Nullable(Type.String({ format: 'date-time' })),
  created_at: Type.String({ format: 'date-time' }),
});

const WebhookWithSecret = Type.Intersect([Webhook, Type.Object({ secret: Type.String({ description: 'Signing secret (`whsec_…`), returned once, at creation.' }) })]);

/** Authorisation of every webhook route: the caller's plan must include webhooks. */
function requireWebhooks(deps: EmailDeps, planId: string): void {
  const plan = planOf(deps, planId);
  if (!plan.features.webhooks) throw new AppError('feature_not_available', `The ${plan.name} plan does not include webhooks; they start with the Starter plan.`);
}

/** `GET|POST|DELETE /api/dashboard/webhooks` (plans with `features.webhooks`). */
export function registerWebhookRoutes(app: ServiceApp, deps: EmailDeps): void {
  const tags = ['webhooks'];

  app.get(
    '/api/dashboard/webhooks',
    { schema: { tags, summary: 'List the account’s active webhook endpoints', security: SECURED, response: secured({ 200: Type.Object({ success: Type.Boolean(), webhooks: Type.Array(Webhook) }), ...errors(401, 403, 429, 500) }) } },
    async (request) => {
      requireWebhooks(deps, request.principal!.plan);
      return { success: true, webhooks: await deps.webhooks.list(request.principal!.accountId) };
    },
  );

  app.post(
    '/api/dashboard/webhooks',
    {
      schema: {
        tags,
        summary: 'Add a webhook endpoint; its signing secret is in this answer only',
        description: `Public HTTPS URLs only: the host is resolved and every address must be public. At most ${MAX_ACTIVE_WEBHOOKS} active endpoints (409 \`webhook_limit_reached\`). \`events\` omitted means all three.`,
        security: SECURED,
        body: Type.Object(
          {
            url: Type.String({ minLength: 1, maxLength: 2048 }),
            events: Type.Optional(Type.String({ maxLength: 200, description: `Comma-separated subset of ${WEBHOOK_EVENTS.join(', ')}.` })),
          },
          { additionalProperties: false },
        ),
        response: secured({ 200: Type.Object({ success: Type.Boolean(), webhook: WebhookWithSecret }), ...errors(400, 401, 403, 409, 413, 415, 429, 500) }),
      },
    },
    async (request) => {
      const principal = request.principal!;
      requireWebhooks(deps, principal.plan);
      return { success: true, webhook: await deps.webhooks.create(principal.accountId, request.body) };
    },
  );

  app.delete(
    '/api/dashboard/webhooks',
    {
      schema: {
        tags,
        summary: 'Delete a webhook endpoint',
        security: SECURED,
        querystring: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, pattern: NO_NUL, description: 'The webhook id (`wh_…`).' }) }),
        response: secured({ 200: Type.Object({ success: Type.Boolean(), webhook_id: Type.String() }), ...errors(400, 401, 403, 404, 429, 500) }),
      },
    },
    async (request) => {
      requireWebhooks(deps, request.principal!.plan);
      const { id } = request.query;
      await deps.webhooks.remove(request.principal!.accountId, id);
      return { success: true, webhook_id: id };
    },
  );
}

const Attempt = Type.Object({
  attempt: Type.Integer({ minimum: 1 }),
  started_at: Type.String({ format: 'date-time' }),
  status_code: Nullable(Type.Integer({ description: 'HTTP status of the answer; null when none came (time-out, refused, refused by the address check).' })),
  duration_ms: Type.Integer({ minimum: 0 }),
  error: Nullable(Type.String({ description: '`http_<status>`, `timeout`, `connection_refused`, `connection_reset`, `redirect_not_followed`, `private_address`, `unresolvable`, `webhook_deleted`, …; null on success.' })),
  next_retry_at: Nullable(Type.String({ format: 'date-time', description: 'When the retry after this attempt was scheduled; null when none followed.' })),
});

const Delivery = Type.Object({
  delivery_id: Type.String({ description: '`dlv_…`: the `X-Service-Delivery` header, the same on every attempt.' }),
  event_id: Type.String(),
  event: Type.String(),
  state: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('dead'), Type.Literal('cancelled')], { description: '`dead`: dead-lettered after the retry schedule; `cancelled`: the endpoint was deleted first.' }),
  attempts: Type.Integer({ minimum: 0 }),
  next_retry_at: Nullable(Type.String({ format: 'date-time' })),
  created_at: Type.String({ format: 'date-time' }),
  finished_at: Nullable(Type.String({ format: 'date-time' })),
  history: Type.Array(Attempt),
});

const IdParam = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: 'The webhook id (`wh_…`).' }) });

/**
 * Extensions beyond the contract (`x-extension` in OpenAPI): the delivery log of an
 * endpoint and redelivery of a dead-lettered event.
 */
export function registerDeliveryRoutes(app: ServiceApp, deps: EmailDeps): void {
  const tags = ['webhooks'];

  app.get(
    '/api/dashboard/webhooks/:id/deliveries',
    {
      schema: {
        tags,
        summary: 'Recent deliveries of an endpoint, with every attempt (extension)',
        description: 'Newest first, at most `limit` (default 50, at most 200). Works for deleted endpoints too, while their log is kept (`EMAIL_WEBHOOKS_LOG_DAYS`).',
        security: SECURED,
        params: IdParam,
        querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })) }),
        response: secured({ 200: Type.Object({ success: Type.Boolean(), webhook_id: Type.String(), deliveries: Type.Array(Delivery) }), ...errors(400, 401, 403, 404, 429, 500) }),
        'x-extension': true,
      },
    },
    async (request) => {
      const principal = request.principal!;
      requireWebhooks(deps, principal.plan);
      const deliveries = await deps.webhooks.deliveryLog(principal.accountId, request.params.id, request.query.limit ?? 50);
      return { success: true, webhook_id: request.params.id, deliveries };
    },
  );

  app.post(
    '/api/dashboard/webhooks/:id/deliveries/:delivery_id/redeliver',
    {
      schema: {
        tags,
        summary: 'Send a dead-lettered delivery again (extension)',
        description: 'The delivery goes back in the queue, due now, with a fresh retry schedule; its id and body are unchanged, so receivers still deduplicate. Only `dead` deliveries of an active endpoint: otherwise 409 `conflict`.',
        security: SECURED,
        params: Type.Object({ id: IdParam.properties.id, delivery_id: Type.String({ minLength: 1, maxLength: 64, description: 'The delivery id (`dlv_…`).' }) }),
        response: secured({ 200: Type.Object({ success: Type.Boolean(), webhook_id: Type.String(), delivery_id: Type.String(), state: Type.Literal('pending') }), ...errors(400, 401, 403, 404, 409, 429, 500) }),
        'x-extension': true,
      },
    },
    async (request) => {
      const principal = request.principal!;
      requireWebhooks(deps, principal.plan);
      const { id, delivery_id } = request.params;
      await deps.webhooks.redeliver(principal.accountId, id, delivery_id);
      return { success: true, webhook_id: id, delivery_id, state: 'pending' as const };
    },
  );
}
