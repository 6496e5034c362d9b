import { Type } from 'typebox';
import { Nullable, StringEnum } from '@mailconv/platform';
import { GRADES, REASONS, STATUSES } from '@mailconv/verifier';

/** The contract's VerificationResult; `reason`, `status` and `grade` enumerated from the engine's closed lists. */
export const VerificationResultSchema = Type.Object(
  {
    email: Type.String({ description: 'The input as received.' }),
    normalized: Type.String({ description: 'Trimmed, lowercased; `+tag` removed for gmail.com and googlemail.com.' }),
    is_valid: Type.Boolean({ description: 'Safe to send: `status == "valid"`.' }),
    status: StringEnum(STATUSES),
    reason: Nullable(
      StringEnum(REASONS, {
        description:
          'Why the status is not `valid`; null when nothing is wrong. `unverifiable`, `smtp_rate_limited` and `smtp_unavailable` extend the contract’s list: `smtp_rate_limited` (issue 49) the mail server rate-limits us (4.7.28, 4.7.650, a 421…) or its MX host is cooling down after such a reply — single and batch answers come at once, bulk jobs wait and retry; `smtp_unavailable` (issue 23) answers `use_smtp` at once, `unknown` with `checks.smtp` null, while the server’s SMTP self-check finds no egress reaching port 25 (see `/readyz` `smtp`).',
      }),
    ),
    confidence: Type.Integer({ minimum: 0, maximum: 100 }),
    score: Type.Integer({ minimum: 0, maximum: 100 }),
    grade: StringEnum(GRADES, { description: 'A 90–100, B 80–89, C 70–79, D 60–69, F 0–59.' }),
    suggestion: Nullable(Type.String({ description: 'Did-you-mean correction of a mistyped domain.' })),
    checks: Type.Object({
      syntax: Type.Boolean(),
      dns: Type.Boolean({ description: 'The domain accepts mail (MX, or an address record as implicit MX).' }),
      smtp: Nullable(Type.Boolean({ description: 'Mailbox probe result; null when not probed or undecided.' })),
      catch_all: Nullable(Type.Boolean({ description: 'Null unless the catch-all probe ran (plans with `catch_all`).' })),
      is_disposable: Type.Boolean(),
      disposable: Type.Boolean({ description: 'Alias of `is_disposable`.' }),
      role_based: Type.Boolean(),
      free_provider: Type.Boolean(),
      mx: Type.Object({
        count: Type.Integer(),
        providers: Type.Array(Type.String()),
        grade: StringEnum(GRADES, { description: 'A: 2+ MX at a major provider; B: 2+ MX; C: one MX; D: address record only; F: none or null MX.' }),
      }),
    }),
    cached: Type.Optional(
      Type.Literal(true, {
        description:
          'Extension (decision 28): present, and true, only when the SMTP outcome was reused from a probe of the same address for the same account within `EMAIL_SMTP_CACHE_TTL` (default 24 h) instead of probed now. Charged like any verification.',
      }),
    ),
  },
  {
    example: {
        email: 'Alice+news@Gmail.com',
        normalized: 'alice@gmail.com',
        is_valid: true,
        status: 'valid',
        reason: null,
        confidence: 75,
        score: 90,
        grade: 'A',
        suggestion: null,
        checks: { syntax: true, dns: true, smtp: null, catch_all: null, is_disposable: false, disposable: false, role_based: false, free_provider: true, mx: { count: 5, providers: ['google'], grade: 'A' } },
    },
  },
);

export const QuotaSchema = Type.Object({
  limit: Type.Integer(),
  used_this_month: Type.Integer(),
  remaining: Type.Integer(),
});

export const SingleResponse = Type.Intersect([Type.Object({ success: Type.Boolean() }), VerificationResultSchema, Type.Object({ quota: QuotaSchema })]);

export const BatchResponse = Type.Object({
  success: Type.Boolean(),
  batch_id: Type.String({ description: '`batch_…`' }),
  status: StringEnum(['completed']),
  summary: Type.Object({
    total: Type.Integer(),
    valid: Type.Integer(),
    invalid: Type.Integer(),
    risky: Type.Integer({ description: 'Extension: count of `risky` results.' }),
    unknown: Type.Integer({ description: 'Extension: count of `unknown` results.' }),
    accuracy: Type.Number({ description: 'Mean `confidence` of the results, one decimal.' }),
  }),
  results: Type.Array(VerificationResultSchema, { description: 'In input order.' }),
  quota: QuotaSchema,
});
