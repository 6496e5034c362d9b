import type { Converter } from '@mailconv/converter';
import type { PlanCatalog, ServiceCore } from '@mailconv/platform';
import type { ConversionService, Owner } from './conversion/conversion.service.js';
import type { ConvertTables } from './db/schema.js';
import type { ConvertPlan } from './plans.js';

/** What route handlers of the conversion service get: repositories, plans, the clock, the engine and the conversion service. */
export interface ConvertDeps {
  core: ServiceCore<ConvertTables>;
  plans: PlanCatalog<ConvertPlan>;
  clock: () => Date;
  converter: Converter;
  conversions: ConversionService;
}

/** The plan of an account; an account left on a plan that a plans file removed falls back to the default. */
export function planOf(deps: ConvertDeps, id: string): ConvertPlan {
  return deps.plans.get(id) ?? deps.plans.get(deps.plans.defaultPlan)!;
}

/** The caller of an authenticated request, with the plan that limits it. */
export function ownerOf(deps: ConvertDeps, principal: { accountId: string; plan: string }): Owner {
  return { accountId: principal.accountId, plan: planOf(deps, principal.plan) };
}
