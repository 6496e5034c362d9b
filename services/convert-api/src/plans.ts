import { z } from 'zod';
import { loadPlansFile, planCatalog, type BasePlan, type PlanCatalog } from '@mailconv/platform';

/** A conversion plan: monthly conversions (`monthlyQuota`), file size, rate and concurrency. */
export interface ConvertPlan extends BasePlan {
  maxFileBytes: number;
  maxConcurrentJobs: number;
}

const MB = 1_000_000;
const GB = 1_000_000_000;

/** The defaults of convert-decisions.md (sizes in decimal units); a plans file can change them. */
export const DEFAULT_CONVERT_PLANS: Record<string, ConvertPlan> = {
  free: { id: 'free', name: 'Free', monthlyQuota: 100, maxFileBytes: 100 * MB, rateLimitRpm: 10, maxConcurrentJobs: 1 },
  starter: { id: 'starter', name: 'Starter', monthlyQuota: 500, maxFileBytes: 250 * MB, rateLimitRpm: 30, maxConcurrentJobs: 2 },
  pro: { id: 'pro', name: 'Pro', monthlyQuota: 2_000, maxFileBytes: 2 * GB, rateLimitRpm: 60, maxConcurrentJobs: 4 },
  business: { id: 'business', name: 'Business', monthlyQuota: 10_000, maxFileBytes: 2 * GB, rateLimitRpm: 120, maxConcurrentJobs: 8 },
  api: { id: 'api', name: 'API', monthlyQuota: 10_000, maxFileBytes: 2 * GB, rateLimitRpm: 120, maxConcurrentJobs: 8 },
};

const PlanSchema = z.object({
  name: z.string().min(1),
  monthlyQuota: z.number().int().nonnegative(),
  rateLimitRpm: z.number().int().positive(),
  maxFileBytes: z.number().int().positive(),
  maxConcurrentJobs: z.number().int().positive(),
});

/** The plan catalogue: defaults, overridden by `plansFile` when given. */
export function convertPlans(plansFile?: string): PlanCatalog<ConvertPlan> {
  const plans = plansFile ? loadPlansFile(plansFile, DEFAULT_CONVERT_PLANS, PlanSchema) : DEFAULT_CONVERT_PLANS;
  return planCatalog(plans, 'free', 'api');
}
