import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { setting } from '../config/settings.js';

/** Webhook delivery as a service's settings describe it (email decisions 20–23; the same for both services). */
export interface WebhookConfig {
  /** Allow `http://` and loopback/private targets (development and tests only). */
  allowInsecure: boolean;
  /** Deliveries in flight at once in this process (0: this process sends none). */
  concurrency: number;
  /** In flight at once per endpoint in this process. */
  perEndpoint: number;
  timeoutMs: number;
  /** Waits (ms) before retries 1, 2, …; then dead-letter. */
  retrySchedule: number[];
  pollMs: number;
  /** Extra CA certificates (PEM) trusted for HTTPS endpoints, besides the system's. */
  ca: string | null;
  /** Days finished deliveries stay in the delivery log. */
  logDays: number;
  /** When set, deliveries connect only to addresses in these networks (tests: loopback). */
  restrictTo: string[] | null;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `90s`, `5m`, `2h`, `250ms`, `1d` → milliseconds; null when malformed. */
export function parseDuration(text: string): number | null {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text.toLowerCase());
  if (!m) return null;
  const ms = Math.round(Number(m[1]) * UNIT_MS[m[2]!]!);
  return ms > 0 ? ms : null;
}

/** The webhook settings' zod fields, without their `PREFIX_WEBHOOKS_`. */
function webhookShape() {
  return {
    ALLOW_INSECURE: setting.bool(false),
    CONCURRENCY: z.coerce.number().int('must be a whole number').min(0, 'must be 0 or more').default(16),
    PER_ENDPOINT: setting.positiveInt(2),
    TIMEOUT_MS: setting.positiveInt(10_000),
    RETRY_SCHEDULE: z
      .string()
      .default('1m,5m,30m,2h,6h,12h')
      .transform((v, ctx) => {
        const waits = v.toLowerCase() === 'none' ? [] : v.split(',').map((x) => parseDuration(x.trim()));
        if (waits.every((w): w is number => w !== null)) return waits;
        ctx.addIssue({ code: 'custom', message: 'must be comma-separated waits such as 1m,5m,30m,2h (units ms, s, m, h, d), or none' });
        return z.NEVER;
      }),
    POLL_MS: setting.positiveInt(1000),
    CA_FILE: z
      .string()
      .transform((path, ctx) => {
        try {
          const pem = readFileSync(path, 'utf8');
          if (pem.includes('-----BEGIN CERTIFICATE-----')) return pem;
          ctx.addIssue({ code: 'custom', message: 'must be a PEM file of CA certificates' });
        } catch (err) {
          ctx.addIssue({ code: 'custom', message: `cannot be read: ${(err as Error).message}` });
        }
        return z.NEVER;
      })
      .optional(),
    LOG_DAYS: setting.positiveInt(30),
    RESTRICT_TO: setting.cidrList(),
  };
}
type WebhookShape = ReturnType<typeof webhookShape>;

/** The webhook fields named `${prefix}_WEBHOOKS_CONCURRENCY` and so on, each keeping its own zod type. */
export type WebhookSettingsShape<P extends string> = { [K in keyof WebhookShape & string as `${P}_WEBHOOKS_${K}`]: WebhookShape[K] };

/** The zod fields of a service's webhook settings (`EMAIL_WEBHOOKS_…`, `CONVERT_WEBHOOKS_…`). */
export function webhookSettings<P extends string>(prefix: P): WebhookSettingsShape<P> {
  const shape: Record<string, z.ZodType> = {};
  for (const [name, field] of Object.entries(webhookShape())) shape[`${prefix}_WEBHOOKS_${name}`] = field;
  // As commonSettings: the loop makes exactly the keys the mapped type names.
  return shape as WebhookSettingsShape<P>;
}

/** The parsed webhook settings as the typed config. */
export function webhookConfig<P extends string>(prefix: P, parsed: z.output<z.ZodObject<WebhookSettingsShape<P>>>): WebhookConfig {
  const values = parsed as Record<string, unknown>;
  const v = <K extends keyof WebhookShape & string>(name: K): z.output<WebhookShape[K]> => values[`${prefix}_WEBHOOKS_${name}`] as z.output<WebhookShape[K]>;
  return {
    allowInsecure: v('ALLOW_INSECURE'),
    concurrency: v('CONCURRENCY'),
    perEndpoint: v('PER_ENDPOINT'),
    timeoutMs: v('TIMEOUT_MS'),
    retrySchedule: v('RETRY_SCHEDULE'),
    pollMs: v('POLL_MS'),
    ca: v('CA_FILE') ?? null,
    logDays: v('LOG_DAYS'),
    restrictTo: v('RESTRICT_TO') ?? null,
  };
}
