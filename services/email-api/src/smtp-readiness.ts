import { Type, type Static } from 'typebox';
import { Nullable, StringEnum } from '@mailconv/platform';
import type { SmtpSelfCheck } from '@mailconv/verifier';

const EgressCheckSchema = Type.Object({
  egress: Type.String({ description: '`direct`, `source:ADDRESS` or `socks5://HOST:PORT` (never a password).' }),
  address: Nullable(Type.String({ description: 'The address mail servers see: a source address, a proxy’s `?address=`, or the direct connection’s own; null when not known.' })),
  helo: Type.String(),
  port25: Type.Object({
    status: StringEnum(['open', 'refused_greeting', 'closed', 'timeout', 'egress_failed', 'not_configured', 'error']),
    detail: Nullable(Type.String()),
  }),
  starttls: StringEnum(['offered', 'not_offered', 'failed', 'not_checked']),
  fcrdns: Type.Object({ status: StringEnum(['pass', 'fail', 'unknown']), ptr: Type.Array(Type.String()), detail: Type.String() }),
  blocklists: Type.Array(Type.Object({ zone: Type.String(), status: StringEnum(['listed', 'not_listed', 'error']), detail: Nullable(Type.String()) })),
});

/**
 * `smtp` of `/readyz` (an extension, issue 23): the last SMTP self-check. `status`:
 * `available` an egress reaches port 25 of the probe host; `unavailable` none does
 * (verifications with `use_smtp` answer `smtp_unavailable` at once); `unknown` no probe host
 * is configured; `pending` the first check has not finished. It never makes `/readyz` 503:
 * the service verifies without SMTP. Null when SMTP probing is not configured.
 */
export const SmtpReadinessSchema = Nullable(
  Type.Object(
    {
      status: StringEnum(['available', 'unavailable', 'unknown', 'pending']),
      reason: Nullable(Type.String()),
      checked_at: Nullable(Type.String({ format: 'date-time' })),
      probe_host: Nullable(Type.String()),
      egresses: Type.Array(EgressCheckSchema),
    },
    { description: 'SMTP self-check (extension, issue 23): egress reachability of port 25, STARTTLS, FCrDNS and DNS block lists. Never decides readiness; null without SMTP probing.' },
  ),
);
export type SmtpReadiness = Static<typeof SmtpReadinessSchema>;

/** The section as `/readyz` and the dashboard show it. */
export function smtpReadiness(configured: boolean, check: SmtpSelfCheck | null): SmtpReadiness {
  if (!configured) return null;
  if (!check) return { status: 'pending', reason: null, checked_at: null, probe_host: null, egresses: [] };
  return {
    status: check.available === true ? 'available' : check.available === false ? 'unavailable' : 'unknown',
    reason: check.reason,
    checked_at: check.checkedAt,
    probe_host: check.probeHost,
    egresses: check.egresses.map((e) => ({ ...e, port25: { ...e.port25 }, fcrdns: { ...e.fcrdns }, blocklists: e.blocklists.map((l) => ({ ...l })) })),
  };
}
