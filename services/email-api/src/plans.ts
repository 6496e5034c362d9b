import { z } from 'zod';
import { loadPlansFile, planCatalog, type BasePlan, type PlanCatalog } from '@mailconv/platform';

/** An email verification plan: quota, rate, batch cap and feature flags. */
export interface EmailPlan extends BasePlan {
  batchCap: number;
  features: { smtp: boolean; webhooks: boolean; catch_all: boolean };
}

/** The defaults of email-decisions.md; a plans file can change them. */
export const DEFAULT_EMAIL_PLANS: Record<string, EmailPlan> = {
  free: { id: 'free', name: 'Free', monthlyQuota: 500, rateLimitRpm: 60, batchCap: 100, features: { smtp: false, webhooks: false, catch_all: false } },
  starter: { id: 'starter', name: 'Starter', monthlyQuota: 10_000, rateLimitRpm: 300, batchCap: 1_000, features: { smtp: true, webhooks: true, catch_all: false } },
  growth: { id: 'growth', name: 'Growth', monthlyQuota: 50_000, rateLimitRpm: 600, batchCap: 5_000, features: { smtp: true, webhooks: true, catch_all: true } },
  scale: { id: 'scale', name: 'Scale', monthlyQuota: 250_000, rateLimitRpm: 1_200, batchCap: 10_000, features: { smtp: true, webhooks: true, catch_all: true } },
};

const PlanSchema = z.object({
  name: z.string().min(1),
  monthlyQuota: z.number().int().nonnegative(),
  rateLimitRpm: z.number().int().positive(),
  batchCap: z.number().int().positive().max(10_000, 'the contract caps a batch at 10,000'),
  features: z.object({ smtp: z.boolean(), webhooks: z.boolean(), catch_all: z.boolean() }),
});

/** The plan catalogue: defaults, overridden by `plansFile` when given. */
export function emailPlans(plansFile?: string): PlanCatalog<EmailPlan> {
  const plans = plansFile ? loadPlansFile(plansFile, DEFAULT_EMAIL_PLANS, PlanSchema) : DEFAULT_EMAIL_PLANS;
  return planCatalog(plans, 'free', 'scale');
}
