import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError } from '../config/settings.js';

/** What every plan has, whichever service it belongs to. */
export interface BasePlan {
  id: string;
  name: string;
  monthlyQuota: number;
  rateLimitRpm: number;
}

/** A service's plans, the one new accounts get, and the one the owner account gets. */
export interface PlanCatalog<P extends BasePlan> {
  readonly plans: Readonly<Record<string, P>>;
  readonly defaultPlan: string;
  readonly ownerPlan: string;
  get(id: string): P | undefined;
}

export function planCatalog<P extends BasePlan>(plans: Record<string, P>, defaultPlan: string, ownerPlan: string): PlanCatalog<P> {
  for (const id of [defaultPlan, ownerPlan]) {
    if (!(id in plans)) throw new ConfigError([`plan ${JSON.stringify(id)} is not defined`]);
  }
  return { plans, defaultPlan, ownerPlan, get: (id) => (Object.hasOwn(plans, id) ? plans[id] : undefined) };
}

/**
 * Reads a JSON plans file (`{"plans": {"id": {...}}}`) over the defaults: a plan named there
 * replaces the default of that id field by field, and new ids add plans. Each plan is
 * validated with the service's `schema`; every problem is reported at once.
 */
export function loadPlansFile<P extends BasePlan>(path: string, defaults: Record<string, P>, schema: z.ZodType<Omit<P, 'id'>>): Record<string, P> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new ConfigError([`plans file ${path}: ${(err as Error).message}`]);
  }
  const file = z.object({ plans: z.record(z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/), z.record(z.string(), z.unknown())) }).safeParse(parsed);
  if (!file.success) throw new ConfigError(file.error.issues.map((i) => `plans file ${path}: ${i.path.join('.')}: ${i.message}`));
  const out: Record<string, P> = { ...defaults };
  const problems: string[] = [];
  for (const [id, fields] of Object.entries(file.data.plans)) {
    const merged = { ...(defaults[id] ?? {}), ...fields };
    delete (merged as Record<string, unknown>).id;
    const plan = schema.safeParse(merged);
    if (plan.success) out[id] = { ...plan.data, id } as P;
    else problems.push(...plan.error.issues.map((i) => `plans file ${path}: plans.${id}.${i.path.join('.')}: ${i.message}`));
  }
  if (problems.length) throw new ConfigError(problems);
  return out;
}
