import { readFileSync } from 'node:fs';

/** What the word lists say about one address. */
export interface ListsOutcome {
  /** The domain, or a parent of it, is a known temporary-mail service. */
  disposable: boolean;
  /** The local part names a role or a group (`info`, `admin`, `noreply`…), not a person. */
  roleBased: boolean;
  /** The domain is a free mailbox provider (consumer webmail). */
  freeProvider: boolean;
}

function load(file: string): Set<string> {
  // Lists live next to the package (`lists/`), committed and refreshed by scripts/refresh-lists.mjs.
  const text = readFileSync(new URL(`../../lists/${file}`, import.meta.url), 'utf8');
  const set = new Set<string>();
  for (const line of text.split('\n')) if (line !== '') set.add(line);
  return set;
}

const DISPOSABLE = load('disposable.txt');
const DISPOSABLE_EXACT = load('disposable-exact.txt');
const FREE = load('free.txt');
const ROLES = load('roles.txt');

/** Sizes of the loaded lists, for health checks and the README. */
export const LIST_SIZES = Object.freeze({ disposable: DISPOSABLE.size + DISPOSABLE_EXACT.size, free: FREE.size, roles: ROLES.size });

/**
 * True when `domain` (ASCII, lowercase) or one of its parent domains is listed as disposable:
 * throwaway services hand out subdomains (`x.mailinator.com`). Registry-level names on the
 * list (public suffixes such as `pp.ua`) match only exactly. The walk stops before the TLD.
 */
export function isDisposableDomain(domain: string): boolean {
  if (DISPOSABLE_EXACT.has(domain)) return true;
  let d = domain;
  for (;;) {
    if (DISPOSABLE.has(d)) return true;
    const dot = d.indexOf('.');
    if (dot < 0 || d.indexOf('.', dot + 1) < 0) return false;
    d = d.slice(dot + 1);
  }
}

/** True when `domain` (ASCII, lowercase) is a free mailbox provider. Exact match: a company's
 * subdomain of a provider is not a consumer mailbox. */
export function isFreeProvider(domain: string): boolean {
  return FREE.has(domain);
}

/** True when the local part (any case, `+tag` ignored) is a role account name. */
export function isRoleAccount(local: string): boolean {
  let l = local;
  const plus = l.indexOf('+');
  if (plus > 0) l = l.slice(0, plus);
  return ROLES.has(l.toLowerCase());
}

/** Runs the three list lookups; each is O(1) in the list size (Set lookups, label walk for disposable). */
export function checkLists(local: string, domain: string): ListsOutcome {
  return { disposable: isDisposableDomain(domain), roleBased: isRoleAccount(local), freeProvider: isFreeProvider(domain) };
}
