import { Type } from 'typebox';
import type { ServiceApp } from '@mailconv/platform';
import { planOf, type EmailDeps } from '../../deps.js';
import { SECURED, errors, secured } from '../../schemas.js';

const AccountResponse = Type.Object({
  success: Type.Boolean(),
  account: Type.Object({
    email: Type.String(),
    plan: Type.String({ description: 'Plan identifier, e.g. `starter`.' }),
    plan_name: Type.String({ description: 'Display name of the plan.' }),
  }),
  quota: Type.Object({
    limit: Type.Integer(),
    used: Type.Integer({ description: 'Units used this calendar month (UTC), including units reserved by running jobs.' }),
    remaining: Type.Integer(),
    reset_date: Type.String({ format: 'date', description: 'First day of the next month (UTC), when `used` returns to 0.' }),
  }),
  rate_limit_rpm: Type.Integer(),
  features: Type.Object({ smtp: Type.Boolean(), webhooks: Type.Boolean(), catch_all: Type.Boolean() }),
});

/** `GET /api/v1/account`: plan, quota and features, spending nothing. */
export function registerAccountRoutes(app: ServiceApp, deps: EmailDeps): void {
  app.get(
    '/api/v1/account',
    {
      schema: {
        tags: ['account'],
        summary: 'Plan, monthly quota and features of the caller',
        security: SECURED,
        response: secured({ 200: AccountResponse, ...errors(401, 429, 500) }),
      },
    },
    async (request) => {
      const principal = request.principal!;
      return deps.account.view(principal, planOf(deps, principal.plan));
    },
  );
}
