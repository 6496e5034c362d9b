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
  /** Why, for the README and for whoever changes the row. */
  why: string;
}

export const DEFAULT_RULE: ProviderRule = { catchAllProbe: 'same_session', acceptMeansUnknown: false, why: 'RFC 5321 behaviour' };

export const PROVIDER_RULES: Readonly<Record<string, ProviderRule>> = {
  microsoft365: {
    catchAllProbe: 'own_session',
    acceptMeansUnknown: false,
    recipientsPerEnvelope: 1,
    why: 'answers a second recipient with 452 4.5.3 or 451 4.4.4 (Reacher #569, #1334; AfterShip #72)',
  },
  outlook: {
    catchAllProbe: 'skip',
    acceptMeansUnknown: false,
    recipientsPerEnvelope: 1,
    why: 'consumer Outlook/Hotmail is not catch-all and rejects the second recipient; probing only adds noise',
  },
  yahoo: {
    catchAllProbe: 'skip',
    acceptMeansUnknown: true,
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
    why: 'security gateway: keep the random-address probe out of the real envelope',
  },
  proofpoint: {
    catchAllProbe: 'own_session',
    acceptMeansUnknown: false,
    why: 'security gateway: keep the random-address probe out of the real envelope',
  },
  barracuda: {
    catchAllProbe: 'own_session',
    acceptMeansUnknown: false,
    why: 'security gateway: keep the random-address probe out of the real envelope',
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
