/**
 * What the DNS check found out about a domain's mail routing. Kept small and flat so the
 * verdict layer can map it onto the contract (`checks.mx`, reasons `domain_not_found`,
 * `domain_no_mx`, `dns_error`).
 *
 * | `status`       | meaning                                                          | reason it maps to   |
 * |----------------|------------------------------------------------------------------|---------------------|
 * | `mx`           | MX records; `hosts` sorted by preference                         | —                   |
 * | `implicit_mx`  | no MX, but A/AAAA records: the domain itself is the mail host    | —                   |
 * |                | (RFC 5321 §5.1); `hosts` holds the domain at preference 0        |                     |
 * | `null_mx`      | a null MX (RFC 7505): the domain says it accepts no mail         | `domain_no_mx`      |
 * | `no_mail_host` | the domain exists but has neither MX nor A/AAAA records          | `domain_no_mx`      |
 * | `no_mx_address`| MX records, but no MX host has an address (each one NXDOMAIN or  | `domain_no_mx`      |
 * |                | without A/AAAA): RFC 5321 §5.1, no usable mail host; `hosts` kept |                     |
 * | `not_found`    | NXDOMAIN                                                         | `domain_not_found`  |
 * | `error`        | time-out, SERVFAIL, refused…: nothing can be concluded           | `dns_error`         |
 */
export type DnsStatus = 'mx' | 'implicit_mx' | 'null_mx' | 'no_mail_host' | 'no_mx_address' | 'not_found' | 'error';

/** Why a lookup failed when `status` is `error`. */
export type DnsErrorCode = 'timeout' | 'servfail' | 'refused' | 'other';

/** Letter grade of the mail routing (decision 11); `null` when DNS failed and nothing is known. */
export type MxGrade = 'A' | 'B' | 'C' | 'D' | 'F';

/** One mail exchanger. `exchange` is lower-case, without the trailing dot. */
export interface MxHost {
  exchange: string;
  priority: number;
  /** Provider id from the provider table (`google`, `microsoft365`, …), `null` when unrecognised. */
  provider: string | null;
}

/** Outcome of {@link DnsResolver.lookupMail}. */
export interface DnsOutcome {
  /** The domain as looked up (ASCII / punycode, lower-case). */
  domain: string;
  status: DnsStatus;
  /** Mail hosts in the order to try them (preference, then as received); empty unless `mx`/`implicit_mx`. */
  hosts: MxHost[];
  /** Distinct provider ids of `hosts`, in host order. */
  providers: string[];
  /** Decision 11; `null` when `status` is `error`. */
  grade: MxGrade | null;
  /** Set only when `status` is `error`. */
  error: { code: DnsErrorCode; message: string } | null;
}
