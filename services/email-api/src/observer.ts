import type { EgressEvent, RateLimitedAt, SmtpProbeEvent, SmtpSelfCheck, VerificationResult } from '@mailconv/verifier';
import type { JobState } from './db/schema.js';

/**
 * What this process's services tell the outside as they work (issue 15): the metrics
 * implement it (metrics.ts); services, workers and the engine only call it, so none of
 * them knows of prom-client. Every method is optional and must not throw.
 */
export interface EmailObserver {
  /** An address verified (single, batch, public, a job chunk). */
  verified?(result: VerificationResult): void;
  /** An address probed over SMTP. */
  smtpProbe?(event: SmtpProbeEvent): void;
  /**
   * The engine's reader of the MX hosts cooling down after a rate limit (issue 49), told once
   * when the services are composed; the metrics read it at each scrape.
   */
  smtpCooling?(read: () => { hosts: number; longestMs: number }): void;
  /** A mail server answered with a rate limit (issue 49): once per session or refused connection. */
  smtpRateLimited?(where: RateLimitedAt): void;
  /** A verification looked for a reusable SMTP outcome (decision 28): found (`true`) or not. */
  smtpCache?(hit: boolean): void;
  /** Something happened on an SMTP egress (issue 23): a session carried, the egress failed, a refusal, a time-out, a block-list reply. */
  smtpEgress?(egress: string, event: EgressEvent): void;
  /** The SMTP self-check ran (issue 23). */
  smtpSelfCheck?(check: SmtpSelfCheck): void;
  /** A job chunk's results stored by this process's worker: `addresses` more processed. */
  chunkStored?(addresses: number): void;
  /** This process's worker took over a chunk whose lease had run out. */
  leaseExpired?(): void;
  /** A job reached a final state in this process. */
  jobFinished?(status: Extract<JobState, 'completed' | 'failed' | 'cancelled'>): void;
  /** A webhook delivery attempt ended: delivered, failed and due again (`retry`), dead-lettered (`dead`), or dropped with its endpoint (`cancelled`). */
  webhookAttempt?(outcome: 'delivered' | 'retry' | 'dead' | 'cancelled', seconds: number): void;
}
