import type { Verification } from './types.js';

/** One line of the verify page's table: what a check found and why that matters. */
export interface CheckLine {
  name: string;
  /** pass ✓, fail ✗, warn !, info and skipped: no mark. */
  result: 'pass' | 'fail' | 'warn' | 'info' | 'skipped';
  value: string;
  found: string;
  matters: string;
}

/** The domain's answer decides the verdict and makes the later checks moot. */
const NO_DOMAIN = new Set(['domain_not_found', 'domain_no_mx']);

/**
 * The checks of one verification in order of importance — syntax, the domain, a typo, the
 * mailbox (SMTP, catch-all), then the lists (disposable, role, free) — each saying what it
 * found and why it matters. When the domain does not exist or takes no mail, the checks that
 * need a mail server say they could not run, and the lists say what they list without
 * contradicting that (issue 30: "Disposable ✗ yes" next to "domain does not exist").
 */
export function explainChecks(v: Verification): CheckLine[] {
  const c = v.checks;
  const domain = v.normalized.slice(v.normalized.lastIndexOf('@') + 1);
  const noDomain = !c.syntax || NO_DOMAIN.has(v.reason ?? '');
  // DNS did not answer: nothing can be said of a mail server either.
  const noServer = noDomain || !c.dns;
  const lines: CheckLine[] = [];

  lines.push(
    c.syntax
      ? { name: 'Syntax', result: 'pass', value: 'valid', found: 'The address is written correctly.', matters: 'A malformed address can never receive mail.' }
      : { name: 'Syntax', result: 'fail', value: 'invalid', found: 'The address is not written correctly, so nothing else was checked.', matters: 'A malformed address can never receive mail.' },
  );
  if (!c.syntax) return lines;

  lines.push(domainLine(v, domain));

  if (v.suggestion) {
    const suggested = v.suggestion.slice(v.suggestion.lastIndexOf('@') + 1);
    lines.push({ name: 'Typo', result: 'warn', value: `${suggested}?`, found: `${domain} looks like a slip of ${suggested}: did the person mean ${v.suggestion}?`, matters: 'A mistyped domain is the commonest reason a real person’s address bounces; ask them to check it.' });
  }

  if (noServer) {
    const found = noDomain ? 'There is no mail server to ask.' : 'No mail server is known to ask.';
    lines.push({ name: 'SMTP mailbox check', result: 'skipped', value: 'not possible', found, matters: noDomain ? 'It confirms that a mailbox exists; here the domain already decides.' : 'It confirms that a mailbox exists before you send.' });
    lines.push({ name: 'Catch-all domain', result: 'skipped', value: 'not possible', found, matters: 'A server that accepts any address makes a mailbox check prove little.' });
  } else {
    lines.push(
      v.reason === 'smtp_unavailable'
        ? { name: 'SMTP mailbox check', result: 'skipped', value: 'unavailable', found: 'This server cannot reach port 25 of any mail server right now (its SMTP self-check found the way out closed), so it did not ask.', matters: 'It confirms that the mailbox exists before you send; try again once the operator has fixed it.' }
        : c.smtp === null
        ? { name: 'SMTP mailbox check', result: 'skipped', value: 'not run', found: 'The mail server was not asked (SMTP probing off, not in your plan, or not needed).', matters: 'It confirms that the mailbox exists before you send.' }
        : c.smtp
          ? { name: 'SMTP mailbox check', result: 'pass', value: 'accepted', found: 'The mail server accepted the recipient.', matters: 'The mailbox exists (unless the domain accepts every address: see catch-all).' }
          : { name: 'SMTP mailbox check', result: 'fail', value: 'refused', found: 'The mail server refused the recipient or could not be asked.', matters: 'Mail to a refused mailbox bounces.' },
    );
    lines.push(
      c.catch_all === null
        ? { name: 'Catch-all domain', result: 'skipped', value: 'not checked', found: 'Not tested (needs SMTP probing and a plan with catch-all detection).', matters: 'A server that accepts any address makes a mailbox check prove little.' }
        : c.catch_all
          ? { name: 'Catch-all domain', result: 'warn', value: 'yes', found: 'The server accepts any address at this domain.', matters: 'Its acceptance proves little: the mailbox may still not exist.' }
          : { name: 'Catch-all domain', result: 'pass', value: 'no', found: 'The server refuses addresses it does not know.', matters: 'So its answer about this mailbox is meaningful.' },
    );
  }

  if (c.disposable) {
    lines.push(
      noDomain
        ? { name: 'Disposable domain', result: 'info', value: 'listed', found: `${domain} is on the list of throw-away and look-alike domains.`, matters: 'It would not lead to a lasting mailbox either; the missing domain already decides.' }
        : { name: 'Disposable domain', result: 'fail', value: 'yes', found: `${domain} is on the list of throw-away and look-alike domains.`, matters: 'Throw-away addresses usually stop working within hours.' },
    );
  } else {
    lines.push({ name: 'Disposable domain', result: 'pass', value: 'no', found: `${domain} is not on the list of throw-away domains.`, matters: 'Throw-away addresses usually stop working within hours.' });
  }
  lines.push(
    c.role_based
      ? { name: 'Role address', result: 'warn', value: 'yes', found: 'The part before @ names a role (info, support, …), not a person.', matters: 'Read by a team; often a poor target for marketing mail.' }
      : { name: 'Role address', result: 'pass', value: 'no', found: 'The part before @ is not a role name.', matters: 'Role addresses are read by a team rather than a person.' },
  );
  lines.push({
    name: 'Free provider',
    result: 'info',
    value: c.free_provider ? 'yes' : 'no',
    found: c.free_provider ? `${domain} is a free webmail provider.` : `${domain} is not a free webmail provider.`,
    matters: 'A personal rather than a business address; it says nothing about delivery.',
  });
  return lines;
}

function domainLine(v: Verification, domain: string): CheckLine {
  const c = v.checks;
  const name = 'Domain and mail server';
  if (v.reason === 'domain_not_found') return { name, result: 'fail', value: 'does not exist', found: `${domain} does not exist in DNS.`, matters: 'Mail to it bounces at once; nothing else about the address matters.' };
  if (v.reason === 'domain_no_mx') return { name, result: 'fail', value: 'takes no mail', found: `${domain} exists but has no mail server.`, matters: 'Mail to it cannot be delivered.' };
  // Not found and no mail come first in the verdict's order; any other reason with no mail
  // server found means DNS did not answer (or was not asked, for an address literal).
  if (!c.dns) return { name, result: 'warn', value: 'unknown', found: `DNS gave no answer about ${domain}.`, matters: 'Whether mail can be delivered is not known; try again later.' };
  const servers = `${c.mx.count} mail server${c.mx.count === 1 ? '' : 's'}${c.mx.providers.length ? ` (${c.mx.providers.join(', ')})` : ''}`;
  return { name, result: 'pass', value: `grade ${c.mx.grade}`, found: `${domain} publishes ${servers}.`, matters: 'Mail can be delivered to the domain; the grade (A best, F worst) says how robust its mail setup looks.' };
}
