/**
 * What the SMTP probe found out about one mailbox. Small and flat so the verdict layer
 * can map it onto the contract's reasons:
 *
 * | `status`       | meaning                                                          | reason               |
 * |----------------|------------------------------------------------------------------|----------------------|
 * | `accepted`     | RCPT accepted (250/251)                                          | — (or `catch_all`)   |
 * | `user_unknown` | 550/551/553 or 5.1.x: no such mailbox                            | `user_unknown`       |
 * | `mailbox_full` | 552 or x.2.2                                                     | `mailbox_full`       |
 * | `disabled`     | 5.2.1 or "disabled/inactive" wording                             | `mailbox_disabled`   |
 * | `greylisted`   | 450/451 or 4.7.x: try again later                                | `greylisted`         |
 * | `rate_limited` | a 4xx rate limit (`rate-limit-replies.ts`), a 421; or the MX     | `smtp_rate_limited`  |
 * |                | host is cooling down after one (issue 49)                        |                      |
 * | `blocked`      | block-list/reputation replies, policy refusals of the prober     | `smtp_blocked`       |
 * | `timeout`      | connect, command or overall time-out                             | `smtp_timeout`       |
 * | `unreachable`  | no MX host could be reached (refused, dropped, private address)  | `smtp_unreachable`   |
 * | `unknown`      | an answer that proves nothing (accept-everything providers,      | — (`unknown` status) |
 * |                | unclassifiable replies)                                          |                      |
 */
export type SmtpStatus =
  | 'accepted'
  | 'user_unknown'
  | 'mailbox_full'
  | 'disabled'
  | 'greylisted'
  | 'rate_limited'
  | 'blocked'
  | 'timeout'
  | 'unreachable'
  | 'unknown';

/** One complete SMTP reply (all lines of a multi-line reply joined by `\n` in `text`). */
export interface SmtpReply {
  code: number;
  /** RFC 3463 enhanced status code (`5.1.1`) when the server sent one. */
  enhanced: string | null;
  /** Reply text without the code and enhanced code. */
  text: string;
}

/** Result of probing one address. */
export interface SmtpOutcome {
  email: string;
  status: SmtpStatus;
  /** `true` the domain accepts any local part, `false` it rejects some, `null` not probed or undecided. */
  catchAll: boolean | null;
  /** The reply that decided `status` (RCPT, or the greeting/MAIL reply that stopped the session). */
  reply: SmtpReply | null;
  /** MX host name and address that answered, when a session was opened. */
  mxHost: string | null;
  mxAddress: string | null;
  /** Whether the session ran over STARTTLS. */
  tls: boolean;
  /** Provider id of the MX (from the DNS check), `null` when unrecognised. */
  provider: string | null;
  /**
   * Machine detail for the cases the status alone does not explain: `private_address`,
   * `address_not_allowed`, `no_mail_host`, `mx_lookup_failed`, `no_mx_address`,
   * `connection_refused`, `connect_timeout`, `command_timeout`, `overall_timeout`,
   * `connection_lost`, `tls_failed`, `proxy_failed`, `protocol_error`, `sender_refused`,
   * `accept_all_provider`, `invalid_address`, `no_progress`, `cooling_down` (rate-limited host, not asked).
   */
  detail: string | null;
}

/** Thrown at construction when the prober is not configured to probe honestly. */
export class SmtpConfigError extends Error {}
