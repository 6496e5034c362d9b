import type { PlanCatalog, ServiceCore } from '@mailconv/platform';
import type { EmailTables } from './db/schema.js';
import type { EmailPlan } from './plans.js';
import type { EventsRepository } from './repositories/events.repository.js';
import type { IdempotencyRepository } from './repositories/idempotency.repository.js';
import type { VerificationService } from './verification/verification.service.js';
import type { WebhooksService } from './webhooks/webhooks.service.js';

/** What route handlers of the email service get: services, repositories, plans and the clock. */
export interface EmailDeps {
  core: ServiceCore<EmailTables>;
  plans: PlanCatalog<EmailPlan>;
  clock: () => Date;
  verification: VerificationService;
  idempotency: IdempotencyRepository;
  events: EventsRepository;
  webhooks: WebhooksService;
}

/** The plan of an account; an account left on a plan that a plans file removed falls back to the default. */
export function planOf(deps: EmailDeps, id: string): EmailPlan {
  return deps.plans.get(id) ?? deps.plans.get(deps.plans.defaultPlan)!;
}
