import { Type, type TSchema } from 'typebox';
import type { Principal } from '../accounts/accounts.repository.js';
import type { ServiceApp } from '../http/create-app.js';
import { NO_NUL, Nullable } from '../http/schemas.js';
import { MAX_ACTIVE_WEBHOOKS } from './webhooks.repository.js';
import type { WebhooksService } from './webhooks.service.js';

export interface WebhookRoutesOptions {
  webhooks: WebhooksService;
  /** Throws the service's AppError when the caller may not use webhooks (the email service: plans without `features.webhooks`). */
  authorize: (principal: Principal) => void;
  /** The service's `security` requirement of authenticated routes. */
  security: Array<Record<string, string[]>>;
  /** The service's documented error responses for these statuses. */
  errors: (...statuses: number[]) => Record<number, TSchema>;
  /** Adds the headers every authenticated answer carries. */
  secured: (responses: Record<number, TSchema>) => Record<number, TSchema>;
  /** Marks the endpoint routes as an extension of the service's contract (the conversion contract has no webhooks). */
  extension?: boolean;
  /** Statuses the authorisation may answer besides 401 and 429 (the email service: 403 `feature_not_available`). */
  authorizationStatuses?: readonly number[];
  /** The service takes a per-request `webhook_url` (the conversion service): its signing-secret routes are registered. */
  requestTargets?: boolean;
}

const Webhook = Type.Object({
  webhook_id: Type.String({ description: '`wh_…`' }),
  url: Type.String({ format: 'uri' }),
  events: Type.String({ description: 'Comma-separated event names.' }),
  active: Type.Boolean(),
  last_triggered: Nullable(Type.String({ format: 'date-time' })),
  created_at: Type.String({ format: 'date-time' }),
});

const WebhookWithSecret = Type.Intersect([Webhook, Type.Object({ secret: Type.String({ description: 'Signing secret (`whsec_…`), returned once, at creation.' }) })]);

/**
 * `GET|POST|DELETE /api/dashboard/webhooks`, the delivery log, redelivery and the
 * per-request signing secret: the same routes and shapes on both services, registered
 * inside the authenticated scope.
 */
export function registerWebhookRoutes(app: ServiceApp, options: WebhookRoutesOptions): void {
  registerEndpointRoutes(app, options);
  registerDeliveryRoutes(app, options);
  if (options.requestTargets) registerRequestSecretRoute(app, options);
}

function registerEndpointRoutes(app: ServiceApp, options: WebhookRoutesOptions): void {
  const tags = ['webhooks'];
  const { errors, secured, webhooks } = options;
  const SECURED = options.security;
  const auth = options.authorizationStatuses ?? [];
  const events = webhooks.eventNames;
  const extension = options.extension ? { 'x-extension': true } : {};

  app.get(
    '/api/dashboard/webhooks',
    { schema: { tags, summary: 'List the account’s active webhook endpoints', security: SECURED, response: secured({ 200: Type.Object({ success: Type.Boolean(), webhooks: Type.Array(Webhook) }), ...errors(401, ...auth, 429, 500) }), ...extension } },
    async (request) => {
      options.authorize(request.principal!);
      return { success: true, webhooks: await webhooks.list(request.principal!.accountId) };
    },
  );

  app.post(
    '/api/dashboard/webhooks',
    {
      schema: {
        tags,
        summary: 'Add a webhook endpoint; its signing secret is in this answer only',
        description: `Public HTTPS URLs only: the host is resolved and every address must be public. At most ${MAX_ACTIVE_WEBHOOKS} active endpoints (409 \`webhook_limit_reached\`). \`events\` omitted means all of them (${events.join(', ')}).`,
        security: SECURED,
        body: Type.Object(
          {
            url: Type.String({ minLength: 1, maxLength: 2048 }),
            events: Type.Optional(Type.String({ maxLength: 200, description: `Comma-separated subset of ${events.join(', ')}.` })),
          },
          { additionalProperties: false },
        ),
        response: secured({ 200: Type.Object({ success: Type.Boolean(), webhook: WebhookWithSecret }), ...errors(400, 401, ...auth, 409, 413, 415, 429, 500) }),
        ...extension,
      },
    },
    async (request) => {
      const principal = request.principal!;
      options.authorize(principal);
      return { success: true, webhook: await webhooks.create(principal.accountId, request.body) };
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
        response: secured({ 200: Type.Object({ success: Type.Boolean(), webhook_id: Type.String() }), ...errors(400, 401, ...auth, 404, 429, 500) }),
        ...extension,
      },
    },
    async (request) => {
      options.authorize(request.principal!);
      const { id } = request.query;
      await webhooks.remove(request.principal!.accountId, id);
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
  target_url: Nullable(Type.String({ description: 'The per-request `webhook_url` this delivery went to; null for an endpoint’s own deliveries.' })),
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
function registerDeliveryRoutes(app: ServiceApp, options: WebhookRoutesOptions): void {
  const tags = ['webhooks'];
  const { errors, secured, webhooks } = options;
  const SECURED = options.security;
  const auth = options.authorizationStatuses ?? [];

  app.get(
    '/api/dashboard/webhooks/:id/deliveries',
    {
      schema: {
        tags,
        summary: 'Recent deliveries of an endpoint, with every attempt (extension)',
        description: 'Newest first, at most `limit` (default 50, at most 200). Works for deleted endpoints too, while their log is kept (`…_WEBHOOKS_LOG_DAYS`), and for the per-request signing identity (its `webhook_id` is in the request-secret answer).',
        security: SECURED,
        params: IdParam,
        querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })) }),
        response: secured({ 200: Type.Object({ success: Type.Boolean(), webhook_id: Type.String(), deliveries: Type.Array(Delivery) }), ...errors(400, 401, ...auth, 404, 429, 500) }),
        'x-extension': true,
      },
    },
    async (request) => {
      const principal = request.principal!;
      options.authorize(principal);
      const deliveries = await webhooks.deliveryLog(principal.accountId, request.params.id, request.query.limit ?? 50);
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
        response: secured({ 200: Type.Object({ success: Type.Boolean(), webhook_id: Type.String(), delivery_id: Type.String(), state: Type.Literal('pending') }), ...errors(400, 401, ...auth, 404, 409, 429, 500) }),
        'x-extension': true,
      },
    },
    async (request) => {
      const principal = request.principal!;
      options.authorize(principal);
      const { id, delivery_id } = request.params;
      await webhooks.redeliver(principal.accountId, id, delivery_id);
      return { success: true, webhook_id: id, delivery_id, state: 'pending' as const };
    },
  );
}

const RequestIdentity = Type.Object({
  webhook_id: Type.String({ description: '`wh_…`: the identity’s delivery log is `GET /api/dashboard/webhooks/{webhook_id}/deliveries`.' }),
  created_at: Type.String({ format: 'date-time' }),
});

/**
 * Extension: the account's signing secret for per-request `webhook_url`s. GET says whether
 * one exists (never the secret); POST makes it, or replaces it, and shows it once.
 */
function registerRequestSecretRoute(app: ServiceApp, options: WebhookRoutesOptions): void {
  const tags = ['webhooks'];
  const { errors, secured, webhooks } = options;
  const SECURED = options.security;
  const auth = options.authorizationStatuses ?? [];

  app.get(
    '/api/dashboard/webhooks/request-secret',
    {
      schema: {
        tags,
        summary: 'Whether the account has a signing secret for per-request webhook URLs (extension)',
        security: SECURED,
        response: secured({ 200: Type.Object({ success: Type.Boolean(), identity: Nullable(RequestIdentity) }), ...errors(401, ...auth, 429, 500) }),
        'x-extension': true,
      },
    },
    async (request) => {
      options.authorize(request.principal!);
      return { success: true, identity: (await webhooks.requestIdentity(request.principal!.accountId)) ?? null };
    },
  );

  app.post(
    '/api/dashboard/webhooks/request-secret',
    {
      schema: {
        tags,
        summary: 'Make or replace the signing secret of per-request webhook URLs; it is in this answer only (extension)',
        description:
          'Deliveries to a `webhook_url` given with a request are signed (`X-Service-Signature`) with this secret. Replacing it signs every delivery not yet sent with the new one. A request with `webhook_url` is refused (400, `field: "webhook_url"`) until the account has one.',
        security: SECURED,
        response: secured({ 200: Type.Object({ success: Type.Boolean(), identity: Type.Intersect([RequestIdentity, Type.Object({ secret: Type.String({ description: '`whsec_…`, returned once.' }) })]) }), ...errors(401, ...auth, 429, 500) }),
        'x-extension': true,
      },
    },
    async (request) => {
      options.authorize(request.principal!);
      return { success: true, identity: await webhooks.rotateRequestSecret(request.principal!.accountId) };
    },
  );
}
