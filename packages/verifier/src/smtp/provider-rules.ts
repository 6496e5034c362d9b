/**
 * How to probe each provider, as data (provider ids from the DNS provider table). Rows say
 * what the field notes and other verifiers' issue trackers found, so the prober does not
 * report answers that these providers are known to give regardless of the mailbox.
 */
export interface ProviderRule {
  /**
   * `same_session`: the random-address probe follows the real address in one envelope;
   * `own_session`: it gets its own connection (servers that refuse a second recipient);
   * `skip`: catch-all probing misleads here, `catchAll` stays `null`.
   */
  catchAllProbe: 'same_session' | 'own_session' | 'skip';
  /** RCPT is accepted for any address: an acceptance proves nothing and becomes `unknown`. */
  acceptMeansUnknown: boolean;
  /** At most this many recipients per envelope (servers that refuse a second recipient). */
  recipientsPerEnvelope?: number;
  /** How politely to probe this provider (issue 23); fields left out come from {@link DEFAULT_LIMITS}. */
  limits?: Partial<ProviderLimits>;
  /** Why, for the README and for whoever changes the row. */
  why: string;
}

/**
 * Politeness towards one provider (issue 23), keyed by its provider id, or by a domain's
 * first MX host name when the provider is not recognised (each unknown server is its own).
 */
export interface ProviderLimits {
  /** Sessions open at once to the provider, over all its MX addresses (parked ones count). */
  sessions: number;
  /** Sessions open at once to one of its MX addresses. */
  sessionsPerHost: number;
  /** Recipients asked in one session before it is closed. */
  recipientsPerSession: number;
  /** Rejected recipients after which a session is closed (servers slow down or drop clients that collect errors). */
  rejectionsPerSession: number;
  /** A session closed for its rejections makes the next new session to the provider wait this long. */
  pauseAfterRejectionsMs: number;
  /** A 421 or a 4.7.x reply makes new sessions to the provider wait this long, doubled while they continue… */
  backoffMs: number;
  /** … up to this. */
  backoffMaxMs: number;
}

/**
 * Servers with no row of their own: what Postfix itself opens to a destination it knows
 * nothing about (`initial_destination_concurrency` 5, `default_destination_concurrency_limit`
 * 20), the error budget under Postfix's `smtpd_soft_error_limit` (10), and no back-off,
 * because an unknown server's 4.7.1 is most often greylisting, which jobs retry later anyway.
 */
export const DEFAULT_LIMITS: ProviderLimits = {
  sessions: 20,
  sessionsPerHost: 5,
  recipientsPerSession: 200,
  rejectionsPerSession: 9,
  pauseAfterRejectionsMs: 0,
  backoffMs: 0,
  backoffMaxMs: 0,
};

/** Big providers that rate-limit by source address: fewer sessions, a pause after rejections, back-off on 421/4.7.x. */
const BIG_PROVIDER: Partial<ProviderLimits> = { sessions: 5, sessionsPerHost: 2, recipientsPerSession: 50, rejectionsPerSession: 5, pauseAfterRejectionsMs: 2000, backoffMs: 30_000, backoffMaxMs: 600_000 };
/** Security gateways answer slowly and score sources: few sessions, few rejections. */
const GATEWAY: Partial<ProviderLimits> = { sessions: 3, sessionsPerHost: 2, recipientsPerSession: 30, rejectionsPerSession: 3, pauseAfterRejectionsMs: 5000, backoffMs: 60_000, backoffMaxMs: 900_000 };

export const DEFAULT_RULE: ProviderRule = { catchAllProbe: 'same_session', acceptMeansUnknown: false, why: 'RFC 5321 behaviour' };

export const PROVIDER_RULES: Readonly<Record<string, ProviderRule>> = {
  google: {
    catchAllProbe: 'same_session',
    acceptMeansUnknown: false,
    limits: BIG_PROVIDER,
    why: 'answers 421 4.7.0 / 450 4.2.1 "unusual rate" to sources that open many sessions or collect rejections',
  },
  microsoft365: {
    catchAllProbe: 'own_session',
    acceptMeansUnknown: false,
    recipientsPerEnvelope: 1,
    limits: BIG_PROVIDER,
    why: 'answers a second recipient with 452 4.5.3 or 451 4.4.4 (Reacher #569, #1334; AfterShip #72)',
  },
  outlook: {
    catchAllProbe: 'skip',
    acceptMeansUnknown: false,
    recipientsPerEnvelope: 1,
    limits: { ...BIG_PROVIDER, sessions: 3 },
    why: 'consumer Outlook/Hotmail is not catch-all and rejects the second recipient; probing only adds noise',
  },
  yahoo: {
    catchAllProbe: 'skip',
    acceptMeansUnknown: true,
    limits: { ...BIG_PROVIDER, sessions: 3 },
    why: 'Yahoo/AOL accept every recipient at RCPT and bounce after DATA (truemail #118, truemail-go #91)',
  },
  spamexperts: {
    catchAllProbe: 'skip',
    acceptMeansUnknown: false,
    why: 'antispamcloud gateways accept random recipients and answer slowly (Reacher rules.json)',
  },
  mimecast: {
    catchAllProbe: 'own_session',
    acceptMeansUnknown: false,
    limits: GATEWAY,
    why: 'security gateway: keep the random-address probe out of the real envelope',
  },
  proofpoint: {
    catchAllProbe: 'own_session',
    acceptMeansUnknown: false,
    limits: GATEWAY,
    why: 'security gateway: keep the random-address probe out of the real envelope',
  },
  barracuda: {
    catchAllProbe: 'own_session',
    acceptMeansUnknown: false,
    limits: GATEWAY,
    why: 'security gateway: keep the random-address probe out of the real envelope',
  },
  icloud: {
    catchAllProbe: 'same_session',
    acceptMeansUnknown: false,
    limits: { ...BIG_PROVIDER, sessions: 3 },
    why: 'Apple throttles sources per address and answers 421 4.7.0 when they exceed it',
  },
  proton: {
    catchAllProbe: 'same_session',
    acceptMeansUnknown: false,
    limits: { ...BIG_PROVIDER, sessions: 2 },
    why: 'small MX fleet that rate-limits unknown sources',
  },
  zoho: {
    catchAllProbe: 'same_session',
    acceptMeansUnknown: false,
    limits: { ...BIG_PROVIDER, sessions: 3 },
    why: 'answers 421 4.7.0 / 451 4.7.1 to sources it finds too fast',
  },
  yandex: {
    catchAllProbe: 'same_session',
    acceptMeansUnknown: false,
    limits: { ...BIG_PROVIDER, sessions: 3 },
    why: 'answers 451 4.7.1 "try again later" when throttling',
  },
  gmx: {
    catchAllProbe: 'same_session',
    acceptMeansUnknown: false,
    limits: { ...BIG_PROVIDER, sessions: 2, rejectionsPerSession: 3 },
    why: 'GMX / WEB.DE (1&1) block sources that collect rejections (421 … "too many errors")',
  },
};

/** The rule for a domain's providers: the first listed provider with a row, else the default. */
export function ruleFor(providers: readonly string[], rules: Readonly<Record<string, ProviderRule>> = PROVIDER_RULES): ProviderRule {
  for (const p of providers) {
    const rule = rules[p];
    if (rule) return rule;
  }
  return DEFAULT_RULE;
}

/** The politeness of a rule: its own limits over {@link DEFAULT_LIMITS} (`defaults` when given). */
export function limitsOf(rule: ProviderRule, defaults: ProviderLimits = DEFAULT_LIMITS): ProviderLimits {
  return { ...defaults, ...rule.limits };
}

const LIMIT_FIELDS = Object.keys(DEFAULT_LIMITS) as Array<keyof ProviderLimits>;
/** Fields that count things (at least 1); the others are milliseconds (0 or more). */
const COUNT_FIELDS: ReadonlySet<keyof ProviderLimits> = new Set(['sessions', 'sessionsPerHost', 'recipientsPerSession', 'rejectionsPerSession']);

/**
 * `EMAIL_SMTP_PROVIDER_LIMITS` read: a JSON object of provider id (or `default`, servers
 * with no row) → the limits to change, e.g. `{"google":{"sessions":3},"default":{"sessionsPerHost":2}}`.
 * Returns the rules table with those limits applied and the defaults; throws an error that
 * names the problem (unknown provider or field, a value that is not a whole number in range).
 * `known`: the provider ids there are (the DNS provider table).
 */
export function applyProviderLimits(
  text: string,
  known: ReadonlySet<string>,
  rules: Readonly<Record<string, ProviderRule>> = PROVIDER_RULES,
): { rules: Record<string, ProviderRule>; defaults: ProviderLimits } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error('EMAIL_SMTP_PROVIDER_LIMITS: not valid JSON (an object of provider id → limits)');
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error('EMAIL_SMTP_PROVIDER_LIMITS: must be a JSON object of provider id → limits');
  const out: Record<string, ProviderRule> = { ...rules };
  let defaults = DEFAULT_LIMITS;
  for (const [id, entry] of Object.entries(value as Record<string, unknown>)) {
    if (id !== 'default' && !known.has(id)) throw new Error(`EMAIL_SMTP_PROVIDER_LIMITS: unknown provider "${id}" (known: default, ${[...known].sort().join(', ')})`);
    if (!entry || typeof entry !== 'object' || Array.isArray(entry)) throw new Error(`EMAIL_SMTP_PROVIDER_LIMITS: ${id}: must be an object of limits`);
    const limits: Partial<ProviderLimits> = {};
    for (const [field, v] of Object.entries(entry as Record<string, unknown>)) {
      if (!LIMIT_FIELDS.includes(field as keyof ProviderLimits)) throw new Error(`EMAIL_SMTP_PROVIDER_LIMITS: ${id}: unknown field "${field}" (fields: ${LIMIT_FIELDS.join(', ')})`);
      const min = COUNT_FIELDS.has(field as keyof ProviderLimits) ? 1 : 0;
      if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > 86_400_000) throw new Error(`EMAIL_SMTP_PROVIDER_LIMITS: ${id}.${field}: must be a whole number from ${min}`);
      limits[field as keyof ProviderLimits] = v;
    }
    if (id === 'default') defaults = { ...defaults, ...limits };
    else out[id] = { ...(out[id] ?? DEFAULT_RULE), limits: { ...out[id]?.limits, ...limits } };
  }
  for (const [id, rule] of Object.entries(out)) {
    const l = limitsOf(rule, defaults);
    if (l.backoffMaxMs < l.backoffMs) throw new Error(`EMAIL_SMTP_PROVIDER_LIMITS: ${id}: backoffMaxMs (${l.backoffMaxMs}) is below backoffMs (${l.backoffMs})`);
  }
  if (defaults.backoffMaxMs < defaults.backoffMs) throw new Error(`EMAIL_SMTP_PROVIDER_LIMITS: default: backoffMaxMs (${defaults.backoffMaxMs}) is below backoffMs (${defaults.backoffMs})`);
  return { rules: out, defaults };
}
