import { Type } from 'typebox';
import { quotaPeriod, type ServiceApp } from '@mailconv/platform';
import { utcDay, type DailyUsageRepository } from '../../usage/daily-usage.repository.js';
import { SECURED, errors, secured } from '../../schemas.js';

const UsageResponse = Type.Object({
  success: Type.Boolean(),
  period_start: Type.String({ format: 'date-time', description: 'First instant of the quota month (UTC).' }),
  period_end: Type.String({ format: 'date-time', description: 'First instant of the next month (UTC), exclusive.' }),
  days: Type.Array(
    Type.Object({
      date: Type.String({ format: 'date', description: 'A UTC day of the month, from the 1st to today.' }),
      verifications: Type.Integer({ description: 'Addresses verified that day (single, batch and job addresses; counted within about a second).' }),
    }),
  ),
});

/**
 * `GET /api/dashboard/usage` (an extension, read-only): verifications per UTC day of the
 * current quota month, for the dashboard's chart. Statistics, not billing: the quota is
 * `GET /api/v1/account`.
 */
export function registerUsageRoutes(app: ServiceApp, usage: DailyUsageRepository, clock: () => Date): void {
  app.get(
    '/api/dashboard/usage',
    {
      schema: {
        tags: ['dashboard'],
        summary: 'Extension: verifications per day of the current month',
        security: SECURED,
        response: secured({ 200: UsageResponse, ...errors(401, 429, 500) }),
      },
    },
    async (request) => {
      const now = clock();
      const period = quotaPeriod(now);
      const today = utcDay(now);
      const first = period.start.slice(0, 10);
      const counted = new Map((await usage.between(request.principal!.accountId, first, today)).map((d) => [d.day, d.verifications]));
      const days: Array<{ date: string; verifications: number }> = [];
      for (let d = new Date(period.start); utcDay(d) <= today; d = new Date(d.getTime() + 86_400_000)) days.push({ date: utcDay(d), verifications: counted.get(utcDay(d)) ?? 0 });
      return { success: true, period_start: period.start, period_end: period.end, days };
    },
  );
}
