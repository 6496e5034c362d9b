import { readFileSync } from 'node:fs';
import { isFreeProvider } from './lists.check.js';

/**
 * Mailbox domains people mistype, most used first (the order breaks ties). Every entry is a
 * real, distinct provider: an address at one of them is never "corrected".
 */
export const POPULAR_DOMAINS: readonly string[] = [
  'gmail.com', 'yahoo.com', 'hotmail.com', 'outlook.com', 'icloud.com', 'aol.com', 'live.com',
  'msn.com', 'me.com', 'mac.com', 'googlemail.com', 'ymail.com', 'rocketmail.com',
  'protonmail.com', 'proton.me', 'gmx.com', 'gmx.de', 'gmx.net', 'mail.com', 'email.com',
  'zoho.com', 'yandex.ru', 'yandex.com', 'mail.ru', 'inbox.ru', 'list.ru', 'bk.ru', 'rambler.ru',
  'web.de', 't-online.de', 'freenet.de', 'qq.com', '163.com', '126.com', 'naver.com',
  'hanmail.net', 'daum.net', 'yahoo.co.uk', 'yahoo.co.jp', 'yahoo.fr', 'yahoo.de', 'yahoo.es',
  'yahoo.it', 'yahoo.ca', 'yahoo.com.br', 'hotmail.co.uk', 'hotmail.fr', 'hotmail.de',
  'hotmail.es', 'hotmail.it', 'live.co.uk', 'live.fr', 'outlook.fr', 'outlook.de', 'outlook.es',
  'libero.it', 'virgilio.it', 'orange.fr', 'free.fr', 'laposte.net', 'wanadoo.fr', 'sfr.fr',
  'comcast.net', 'verizon.net', 'att.net', 'sbcglobal.net', 'cox.net', 'charter.net',
  'earthlink.net', 'bellsouth.net', 'optonline.net', 'btinternet.com', 'sky.com',
  'virginmedia.com', 'bigpond.com', 'shaw.ca', 'rogers.com', 'sympatico.ca', 'uol.com.br',
  'bol.com.br', 'terra.com.br', 'seznam.cz', 'wp.pl', 'o2.pl', 'interia.pl', 'onet.pl',
  'ukr.net', 'abv.bg', 'rediffmail.com', 'fastmail.com', 'tutanota.com', 'hey.com', 'aim.com',
  'juno.com', 'ziggo.nl', 'telenet.be', 'bluewin.ch', 'tiscali.it', 'alice.it', 'mailbox.org',
  'posteo.de',
];

/** TLDs a mistyped one is corrected to, most used first. */
const COMMON_TLDS: readonly string[] = [
  'com', 'net', 'org', 'de', 'uk', 'fr', 'ru', 'it', 'es', 'nl', 'br', 'ca', 'au', 'edu', 'gov',
  'info', 'io', 'co', 'us', 'ch', 'be', 'at', 'pl', 'se', 'jp', 'in', 'biz',
];

interface Split {
  domain: string;
  /** First label. */
  name: string;
  /** Everything after the first label (`com`, `co.uk`). */
  rest: string;
}

function split(domain: string): Split {
  const dot = domain.indexOf('.');
  return { domain, name: domain.slice(0, dot), rest: domain.slice(dot + 1) };
}

const POPULAR: readonly Split[] = POPULAR_DOMAINS.map(split);
const POPULAR_SET: ReadonlySet<string> = new Set(POPULAR_DOMAINS);
const POPULAR_NAMES: ReadonlySet<string> = new Set(POPULAR.map((p) => p.name));
const TLDS: ReadonlySet<string> = new Set(
  readFileSync(new URL('../../lists/tlds.txt', import.meta.url), 'utf8').split('\n').filter((l) => l !== ''),
);

// Rows of the distance matrix, reused: suggestions run in the hot path.
const MAX = 64;
const row0 = new Int32Array(MAX + 1);
const row1 = new Int32Array(MAX + 1);
const row2 = new Int32Array(MAX + 1);

/**
 * Optimal-string-alignment distance (Levenshtein plus adjacent transpositions, the usual
 * typing slips), or `limit + 1` as soon as it must exceed `limit`.
 */
export function typoDistance(a: string, b: string, limit: number): number {
  const n = a.length;
  const m = b.length;
  if (Math.abs(n - m) > limit) return limit + 1;
  if (n > MAX || m > MAX) return a === b ? 0 : limit + 1;
  let prev2 = row0;
  let prev = row1;
  let cur = row2;
  for (let j = 0; j <= m; j++) prev[j] = j;
  for (let i = 1; i <= n; i++) {
    cur[0] = i;
    let rowMin = i;
    const ca = a.charCodeAt(i - 1);
    for (let j = 1; j <= m; j++) {
      const cb = b.charCodeAt(j - 1);
      const cost = ca === cb ? 0 : 1;
      let v = Math.min((prev[j] as number) + 1, (cur[j - 1] as number) + 1, (prev[j - 1] as number) + cost);
      if (i > 1 && j > 1 && ca === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === cb) {
        v = Math.min(v, (prev2[j - 2] as number) + 1);
      }
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > limit) return limit + 1;
    const t = prev2;
    prev2 = prev;
    prev = cur;
    cur = t;
  }
  return prev[m] as number;
}

/** How many slips a provider's name may carry: none for short names (`aol`, `live`: too many real look-alikes). */
function nameLimit(name: string): number {
  if (name.length <= 4) return 0;
  return name.length >= 8 ? 2 : 1;
}

/**
 * Did-you-mean for a domain (ASCII, lowercase): the popular provider it is a slip away from
 * (`gmial.com` → `gmail.com`, `hotmial.con` → `hotmail.com`), else the same domain with a
 * mistyped TLD fixed (`example.cmo` → `example.com`), else null. Never suggests for a popular
 * provider or another known mailbox provider, and only when the first letter matches (people
 * rarely miss it, and look-alike companies usually differ there: `cloud.com` is not `icloud.com`).
 */
export function suggestDomain(domain: string): string | null {
  if (POPULAR_SET.has(domain)) return null;
  const dot = domain.indexOf('.');
  if (dot <= 0) return null;
  const name = domain.slice(0, dot);
  const rest = domain.slice(dot + 1);
  // A known provider of its own (gmx.at, live.ca) stays; a provider's name under a wrong
  // suffix (gmail.co) is still a slip even if some list calls it a provider.
  if (isFreeProvider(domain) && !POPULAR_NAMES.has(name)) return null;
  const lastDot = domain.lastIndexOf('.');
  const tld = domain.slice(lastDot + 1);
  const realTld = TLDS.has(tld);

  let best: string | null = null;
  let bestCost = 99;
  for (const p of POPULAR) {
    const c0 = name.charCodeAt(0);
    if (c0 !== p.name.charCodeAt(0) && !(c0 === p.name.charCodeAt(1) && name.charCodeAt(1) === p.name.charCodeAt(0))) continue;
    const limit = nameLimit(p.name);
    const nd = name === p.name ? 0 : typoDistance(name, p.name, limit);
    if (nd > limit) continue;
    let rd = 0;
    if (rest !== p.rest) {
      rd = typoDistance(rest, p.rest, 1);
      if (rd > 1) continue;
      // Under a real TLD the only slips we fix are to .com/.net (gmail.co, yahoo.cm): providers
      // run many country domains (hotmail.be is not hotmail.de), and a misspelt name under a
      // real TLD is more likely another company's domain.
      if (realTld && !(nd === 0 && (p.rest === 'com' || p.rest === 'net'))) continue;
    }
    const cost = nd + rd;
    if (cost > 0 && cost < bestCost) {
      best = p.domain;
      bestCost = cost;
    }
  }
  if (best !== null) return best;

  if (realTld) return null;
  for (const t of COMMON_TLDS) {
    if (typoDistance(tld, t, 1) === 1) return `${domain.slice(0, lastDot + 1)}${t}`;
  }
  return null;
}
