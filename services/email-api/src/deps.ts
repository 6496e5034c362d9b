import type { ApiKeysService, PlanCatalog, WebhooksService } from '@mailconv/platform';
import type { AccountService } from './accounts/account.service.js';
import type { EmailPlan } from './plans.js';
import type { BatchesService } from './verification/batches.service.js';
import type { VerificationService } from './verification/verification.service.js';

/** What route handlers of the email service get: the plan table and services, never a repository. */
export interface EmailDeps {
  plans: PlanCatalog<EmailPlan>;
  account: AccountService;
  verification: VerificationService;
  batches: BatchesService;
  webhooks: WebhooksService;
  apiKeys: ApiKeysService;
}

/** The plan of an account; an account left on a plan that a plans file removed falls back to the default. */
export function planOf(deps: EmailDeps, id: string): EmailPlan {
  return deps.plans.get(id) ?? deps.plans.get(deps.plans.defaultPlan)!;
}
