/**
 * Whether SMTP probing can work at all (issue 23), as the last self-check found: when no
 * egress reaches port 25, every probe would only wait out its time-out, so the engine
 * answers `smtp_unavailable` at once instead. Set by whoever runs the self-check.
 */
export class SmtpAvailability {
  private state: { available: boolean; reason: string | null } = { available: true, reason: null };

  get available(): boolean {
    return this.state.available;
  }

  /** Why probing is unavailable; null while it is available. */
  get reason(): string | null {
    return this.state.reason;
  }

  /** `available: false` stops probing until a later call says otherwise. */
  set(available: boolean, reason: string | null = null): void {
    this.state = { available, reason: available ? null : (reason ?? 'SMTP probing is unavailable') };
  }
}
