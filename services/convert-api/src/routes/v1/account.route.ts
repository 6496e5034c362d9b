import { Type } from 'typebox';
import { Nullable, quotaPeriod, type ServiceApp } from '@mailconv/platform';
import { planOf, type ConvertDeps } from '../../deps.js';
import { SECURED, errors, secured } from '../../schemas.js';

const Usage = Type.Object({
  success: Type.Boolean(),
  period_start: Type.String({ format: 'date-time', description: 'First instant of the quota month (UTC).' }),
  period_end: Type.String({ format: 'date-time', description: 'First instant of the next month (UTC), exclusive; the quota resets then.' }),
  quota: Type.Object({
    limit: Type.Integer({ description: 'Conversions per month.' }),
    used: Type.Integer(),
    remaining: Type.Integer(),
  }),
  api_keys: Type.Array(
    Type.Object({
      id: Type.String(),
      name: Type.String(),
      key_preview: Type.String(),
      requests_this_month: Type.Integer({ description: 'Authenticated requests made with the key this month; counted within about a second.' }),
      last_used: Nullable(Type.String({ format: 'date-time' })),
    }),
  ),
});

const Limits = Type.Object({
  success: Type.Boolean(),
  plan: Type.String(),
  plan_name: Type.String(),
  rate_limit_rpm: Type.Integer(),
  max_file_bytes: Type.Integer({ description: 'Largest accepted upload, in bytes.' }),
  monthly_conversions: Type.Integer(),
  max_concurrent_jobs: Type.Integer({ description: 'Conversions of the account that run at the same time; more wait in the queue.' }),
});

/** `GET /api/v1/account/usage` and `GET /api/v1/account/limits` (convert-decisions.md item 15). */
export function registerAccountRoutes(app: ServiceApp, deps: ConvertDeps): void {
  app.get(
    '/api/v1/account/usage',
    { schema: { tags: ['account'], summary: 'This month’s conversions and per-key request counts', security: SECURED, response: secured({ 200: Usage, ...errors(401, 429, 500) }) } },
    async (request) => {
      const principal = request.principal!;
      const plan = planOf(deps, principal.plan);
      const now = deps.clock();
      const period = quotaPeriod(now);
      const [used, keys] = await Promise.all([deps.core.quota.used(principal.accountId, now), deps.core.accounts.keyUsage(principal.accountId, period.key)]);
      return {
        success: true,
        period_start: period.start,
        period_end: period.end,
        quota: { limit: plan.monthlyQuota, used, remaining: Math.max(0, plan.monthlyQuota - used) },
        api_keys: keys.map((k) => ({ id: k.id, name: k.name, key_preview: k.key_preview, requests_this_month: k.requests_this_month, last_used: k.last_used })),
      };
    },
  );

  app.get(
    '/api/v1/account/limits',
    { schema: { tags: ['account'], summary: 'Plan limits: rate, file size, monthly conversions, concurrency', security: SECURED, response: secured({ 200: Limits, ...errors(401, 429, 500) }) } },
    async (request) => {
      const plan = planOf(deps, request.principal!.plan);
      return {
        success: true,
        plan: plan.id,
        plan_name: plan.name,
        rate_limit_rpm: plan.rateLimitRpm,
        max_file_bytes: plan.maxFileBytes,
        monthly_conversions: plan.monthlyQuota,
        max_concurrent_jobs: plan.maxConcurrentJobs,
      };
    },
  );
}
