import { quotaPeriod, type Principal, type QuotaLedger } from '@mailconv/platform';
import type { EmailPlan } from '../plans.js';

/** `GET /api/v1/account` as the contract shows it. */
export interface AccountView {
  success: true;
  account: { email: string; plan: string; plan_name: string };
  quota: { limit: number; used: number; remaining: number; reset_date: string };
  rate_limit_rpm: number;
  features: EmailPlan['features'];
}

/** What an account may see of itself: plan, this month's quota, features. Spends nothing. */
export class AccountService {
  constructor(private readonly deps: { quota: QuotaLedger; clock: () => Date }) {}

  async view(principal: Principal, plan: EmailPlan): Promise<AccountView> {
    const now = this.deps.clock();
    const used = await this.deps.quota.used(principal.accountId, now);
    return {
      success: true,
      account: { email: principal.email, plan: plan.id, plan_name: plan.name },
      quota: { limit: plan.monthlyQuota, used, remaining: Math.max(0, plan.monthlyQuota - used), reset_date: quotaPeriod(now).resetDate },
      rate_limit_rpm: plan.rateLimitRpm,
      features: { ...plan.features },
    };
  }
}
