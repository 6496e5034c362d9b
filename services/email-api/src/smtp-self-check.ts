import { formatSelfCheck, runSmtpSelfCheck, type Engine, type SmtpSelfCheck } from '@mailconv/verifier';
import type { EmailConfig } from './config.js';

type SmtpConfig = NonNullable<EmailConfig['smtp']>;

/** The self-check over the engine's own egresses and resolver (so tests' rig DNS and fences apply). */
export function selfCheckOnce(smtp: SmtpConfig, engine: Engine): Promise<SmtpSelfCheck> {
  return runSmtpSelfCheck({
    egresses: engine.prober?.egresses.list() ?? smtp.egresses,
    helo: smtp.helo,
    probeHost: smtp.selfCheck.probeHost,
    blocklists: smtp.selfCheck.blocklists,
    dns: engine.resolver,
    restrictTo: smtp.restrictTo,
  });
}

/**
 * Runs the SMTP self-check when the service starts and every `EMAIL_SMTP_CHECK_INTERVAL_MS`
 * after (issue 23), in the background: `/readyz` and the dashboard read the last result and
 * never wait for one. A result that finds no egress reaching port 25 makes the engine answer
 * `smtp_unavailable` at once until a later check finds one; each change is logged with why.
 */
export class SmtpSelfCheckMonitor {
  private last: SmtpSelfCheck | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<SmtpSelfCheck> | null = null;

  constructor(
    private readonly smtp: SmtpConfig,
    private readonly engine: Engine,
    private readonly log: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void },
    private readonly onResult?: (check: SmtpSelfCheck) => void,
  ) {}

  /** The last result; null before the first check has finished. */
  get result(): SmtpSelfCheck | null {
    return this.last;
  }

  start(): void {
    if (this.smtp.selfCheck.intervalMs === 0) return;
    void this.check();
    this.timer = setInterval(() => void this.check(), this.smtp.selfCheck.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Runs one check (joining one in flight) and applies it. */
  check(): Promise<SmtpSelfCheck> {
    this.running ??= selfCheckOnce(this.smtp, this.engine)
      .then((result) => {
        this.apply(result);
        return result;
      })
      .finally(() => (this.running = null));
    return this.running;
  }

  private apply(result: SmtpSelfCheck): void {
    const before = this.last?.available;
    this.last = result;
    this.engine.availability?.set(result.available !== false, result.reason);
    this.onResult?.(result);
    const problems = result.egresses.filter((e) => e.fcrdns.status === 'fail' || e.blocklists.some((l) => l.status === 'listed'));
    if (result.available === false) {
      if (before !== false) this.log.warn({ event: 'smtp_unavailable', reason: result.reason, check: formatSelfCheck(result) }, `SMTP probing unavailable: ${result.reason}; use_smtp answers smtp_unavailable until a self-check finds port 25 open`);
    } else {
      if (before === false) this.log.info({ event: 'smtp_available' }, 'SMTP probing available again: an egress reaches port 25 of the probe host');
      if (problems.length) this.log.warn({ event: 'smtp_self_check', check: formatSelfCheck(result) }, `SMTP self-check: ${problems.map((e) => e.egress).join(', ')} fail FCrDNS or are block-listed`);
    }
  }
}
