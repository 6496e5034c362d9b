import type { PlanCatalog, ServiceCore } from '@mailconv/platform';
import type { ConvertTables } from './db/schema.js';
import type { ConvertPlan } from './plans.js';

/** What route handlers of the conversion service get: repositories, plans and the clock. */
export interface ConvertDeps {
  core: ServiceCore<ConvertTables>;
  plans: PlanCatalog<ConvertPlan>;
  clock: () => Date;
}

/** The plan of an account; an account left on a plan that a plans file removed falls back to the default. */
export function planOf(deps: ConvertDeps, id: string): ConvertPlan {
  return deps.plans.get(id) ?? deps.plans.get(deps.plans.defaultPlan)!;
}
