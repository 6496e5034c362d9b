import type { SyntaxOutcome } from './syntax.check.js';

/** Domains whose `+tag` is dropped (decision 12): Gmail ignores it when delivering. */
const TAG_STRIPPING_DOMAINS: ReadonlySet<string> = new Set(['gmail.com', 'googlemail.com']);

/**
 * `normalized` of decision 12: the address trimmed and lowercased; for `gmail.com` and
 * `googlemail.com` the `+tag` is removed (dots are kept, as the decision says). IDN domains
 * stay in their Unicode form, the one people read. An address that failed the syntax check
 * is only trimmed and lowercased.
 */
export function normalizeEmail(input: string, syntax: SyntaxOutcome): string {
  if (!syntax.ok) return input.trim().toLowerCase();
  let local = syntax.local.toLowerCase();
  const domain = syntax.domainUnicode;
  if (!syntax.quoted && TAG_STRIPPING_DOMAINS.has(domain)) {
    const plus = local.indexOf('+');
    // "+tag@gmail.com" has no mailbox name left to keep: leave it as it is.
    if (plus > 0) local = local.slice(0, plus);
  }
  return `${local}@${domain}`;
}
