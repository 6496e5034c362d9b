import type { PlanCatalog, ServiceCore } from '@mailconv/platform';
import type { ApiKeysService } from './accounts/api-keys.service.js';
import type { EmailTables } from './db/schema.js';
import type { EmailPlan } from './plans.js';
import type { BatchesService } from './verification/batches.service.js';
import type { VerificationService } from './verification/verification.service.js';
import type { WebhooksService } from './webhooks/webhooks.service.js';

/** What route handlers of the email service get: services, plans, the clock and the core (the account view reads its quota). */
export interface EmailDeps {
  core: ServiceCore<EmailTables>;
  plans: PlanCatalog<EmailPlan>;
  clock: () => Date;
  verification: VerificationService;
  batches: BatchesService;
  webhooks: WebhooksService;
  apiKeys: ApiKeysService;
}

/** The plan of an account; an account left on a plan that a plans file removed falls back to the default. */
export function planOf(deps: EmailDeps, id: string): EmailPlan {
  return deps.plans.get(id) ?? deps.plans.get(deps.plans.defaultPlan)!;
}
