import { Type } from 'typebox';
import { AppError, Nullable, randomBase62, type ServiceApp } from '@mailconv/platform';
import { planOf, type EmailDeps } from '../../deps.js';
import { MAX_ACTIVE_WEBHOOKS } from '../../repositories/webhooks.repository.js';
import { SECURED, errors } from '../../schemas.js';
import { checkWebhookTarget } from '../../webhooks/url-guard.js';

/** The events an endpoint can subscribe to (contract, Events). */
export const WEBHOOK_EVENTS = ['batch.completed', 'job.completed', 'job.failed'] as const;

const Webhook = Type.Object({
  webhook_id: Type.String({ description: '`wh_…`' }),
  url: Type.String({ format: 'uri' }),
  events: Type.String({ description: 'Comma-separated event names.' }),
  active: Type.Boolean(),
  last_triggered: Nullable(Type.String({ format: 'date-time' })),
  created_at: Type.String({ format: 'date-time' }),
});

const WebhookWithSecret = Type.Intersect([Webhook, Type.Object({ secret: Type.String({ description: 'Signing secret (`whsec_…`), returned once, at creation.' }) })]);

/** `GET|POST|DELETE /api/dashboard/webhooks` (plans with `features.webhooks`). */
export function registerWebhookRoutes(app: ServiceApp, deps: EmailDeps, options: { allowInsecure: boolean }): void {
  const tags = ['webhooks'];
  const requireFeature = (planId: string) => {
    const plan = planOf(deps, planId);
    if (!plan.features.webhooks) throw new AppError('feature_not_available', `The ${plan.name} plan does not include webhooks; they start with the Starter plan.`);
  };

  app.get(
    '/api/dashboard/webhooks',
    { schema: { tags, summary: 'List the account’s active webhook endpoints', security: SECURED, response: { 200: Type.Object({ success: Type.Boolean(), webhooks: Type.Array(Webhook) }), ...errors(401, 403, 429, 500) } } },
    async (request) => {
      requireFeature(request.principal!.plan);
      return { success: true, webhooks: await deps.webhooks.listActive(request.principal!.accountId) };
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
        response: { 200: Type.Object({ success: Type.Boolean(), webhook: WebhookWithSecret }), ...errors(400, 401, 403, 409, 413, 415, 429, 500) },
      },
    },
    async (request) => {
      const principal = request.principal!;
      requireFeature(principal.plan);
      const events = parseEvents(request.body.events);
      const check = await checkWebhookTarget(request.body.url, { allowInsecure: options.allowInsecure });
      if (!check.ok) throw new AppError('invalid_request', check.message, { field: 'url' });
      const secret = `whsec_${randomBase62(32)}`;
      const created = await deps.webhooks.create(principal.accountId, { url: check.url.toString(), events, secret }, deps.clock());
      if (created === 'limit_reached') throw new AppError('webhook_limit_reached', `At most ${MAX_ACTIVE_WEBHOOKS} active webhook endpoints; delete one first.`);
      return { success: true, webhook: { ...created, secret } };
    },
  );

  app.delete(
    '/api/dashboard/webhooks',
    {
      schema: {
        tags,
        summary: 'Delete a webhook endpoint',
        security: SECURED,
        querystring: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: 'The webhook id (`wh_…`).' }) }),
        response: { 200: Type.Object({ success: Type.Boolean(), webhook_id: Type.String() }), ...errors(400, 401, 403, 404, 429, 500) },
      },
    },
    async (request) => {
      requireFeature(request.principal!.plan);
      const { id } = request.query;
      if (!(await deps.webhooks.remove(request.principal!.accountId, id, deps.clock()))) throw new AppError('not_found', `No active webhook ${id} on this account.`);
      return { success: true, webhook_id: id };
    },
  );
}

/** `events` as stored: the given names, checked, deduplicated, in the canonical order; all three when omitted. */
function parseEvents(raw: string | undefined): string {
  if (raw === undefined) return WEBHOOK_EVENTS.join(',');
  const names = raw.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = names.filter((n) => !(WEBHOOK_EVENTS as readonly string[]).includes(n));
  if (names.length === 0 || unknown.length) {
    throw new AppError('invalid_request', `Unknown or missing event names${unknown.length ? ` (${unknown.join(', ')})` : ''}; use a comma-separated subset of ${WEBHOOK_EVENTS.join(', ')}.`, { field: 'events' });
  }
  return WEBHOOK_EVENTS.filter((e) => names.includes(e)).join(',');
}
