/**
 * Mail providers recognised from their MX host names. Kept as data: adding a provider is a
 * new row, not new code. A host matches a row when it equals one of the suffixes or ends
 * with `.` + suffix; the longest matching suffix wins, which is how the Outlook consumer
 * rows (`olc.protection.outlook.com`) beat the Microsoft 365 row (`protection.outlook.com`).
 *
 * `major` marks the large hosted providers that decision 11 grades `A` when a domain has
 * two or more MX hosts with them.
 */
export interface MailProvider {
  id: string;
  name: string;
  suffixes: readonly string[];
  major: boolean;
}

export const MAIL_PROVIDERS: readonly MailProvider[] = [
  { id: 'google', name: 'Google', suffixes: ['google.com', 'googlemail.com', 'aspmx.l.google.com'], major: true },
  { id: 'microsoft365', name: 'Microsoft 365', suffixes: ['protection.outlook.com'], major: true },
  { id: 'outlook', name: 'Outlook.com (consumer)', suffixes: ['olc.protection.outlook.com', 'hotmail.com', 'msn.com'], major: true },
  { id: 'yahoo', name: 'Yahoo / AOL', suffixes: ['yahoodns.net', 'yahoo.com', 'aol.com'], major: true },
  { id: 'zoho', name: 'Zoho Mail', suffixes: ['zoho.com', 'zoho.eu', 'zoho.in', 'zoho.com.au', 'zohomail.com'], major: true },
  { id: 'icloud', name: 'iCloud Mail', suffixes: ['mail.icloud.com', 'icloud.com', 'me.com'], major: true },
  { id: 'proton', name: 'Proton Mail', suffixes: ['protonmail.ch', 'proton.me'], major: true },
  { id: 'yandex', name: 'Yandex Mail', suffixes: ['yandex.net', 'yandex.ru'], major: true },
  { id: 'fastmail', name: 'Fastmail', suffixes: ['messagingengine.com'], major: true },
  { id: 'gmx', name: 'GMX / WEB.DE', suffixes: ['gmx.net', 'gmx.com', 'web.de'], major: true },
  { id: 'mailru', name: 'Mail.ru', suffixes: ['mail.ru'], major: true },
  { id: 'mimecast', name: 'Mimecast', suffixes: ['mimecast.com', 'mimecast.co.za', 'mimecast-offshore.com'], major: true },
  { id: 'proofpoint', name: 'Proofpoint', suffixes: ['pphosted.com', 'ppe-hosted.com'], major: true },
  { id: 'barracuda', name: 'Barracuda', suffixes: ['barracudanetworks.com'], major: true },
  { id: 'cisco', name: 'Cisco Secure Email', suffixes: ['iphmx.com'], major: true },
  { id: 'spamexperts', name: 'SpamExperts / antispamcloud', suffixes: ['antispamcloud.com', 'spamexperts.com'], major: false },
  { id: 'trendmicro', name: 'Trend Micro Email Security', suffixes: ['tmes.trendmicro.com', 'tmes.trendmicro.eu'], major: false },
  { id: 'sophos', name: 'Sophos Email', suffixes: ['hydra.sophos.com'], major: false },
  { id: 'amazon', name: 'Amazon SES / WorkMail', suffixes: ['amazonaws.com'], major: false },
  { id: 'rackspace', name: 'Rackspace Email', suffixes: ['emailsrvr.com'], major: false },
  { id: 'godaddy', name: 'GoDaddy', suffixes: ['secureserver.net'], major: false },
  { id: 'ovh', name: 'OVHcloud', suffixes: ['ovh.net'], major: false },
];

const BY_SUFFIX = new Map<string, MailProvider>();
for (const p of MAIL_PROVIDERS) for (const s of p.suffixes) BY_SUFFIX.set(s, p);

/** Lower-case a host name and drop its trailing dot. */
export function normalizeHost(host: string): string {
  const h = host.trim().toLowerCase();
  return h.endsWith('.') ? h.slice(0, -1) : h;
}

/**
 * The provider an MX host belongs to, or `null`. Walks the host's parent names from the
 * longest to the shortest, so the most specific suffix wins, in O(labels).
 */
export function classifyMxHost(host: string): MailProvider | null {
  let name = normalizeHost(host);
  while (name) {
    const hit = BY_SUFFIX.get(name);
    if (hit) return hit;
    const dot = name.indexOf('.');
    if (dot < 0) return null;
    name = name.slice(dot + 1);
  }
  return null;
}

/** The provider row for an id (`google`, …), or `undefined`. */
export function providerById(id: string): MailProvider | undefined {
  return MAIL_PROVIDERS.find((p) => p.id === id);
}

/** Second-level labels under which country codes register names (`example.co.uk`, `example.com.au`). */
const COUNTRY_SLDS = new Set(['ac', 'co', 'com', 'edu', 'gov', 'ne', 'net', 'or', 'org']);

/**
 * The registrable domain of a host name, by a small rule instead of the full public suffix
 * list: the last two labels, or three when the name ends in a common second level under a
 * two-letter country code (`mx1.example.co.uk` → `example.co.uk`). Good enough to group MX
 * hosts for metrics; not for security decisions.
 */
export function registrableDomain(host: string): string {
  const labels = normalizeHost(host).split('.').filter(Boolean);
  if (labels.length <= 2) return labels.join('.');
  const take = labels.at(-1)!.length === 2 && COUNTRY_SLDS.has(labels.at(-2)!) ? 3 : 2;
  return labels.slice(-take).join('.');
}

/**
 * How metrics name the mail provider behind an MX host: the recognised provider's id
 * (`google`), else the host's registrable domain, else `none` (no MX host known).
 */
export function mxProviderLabel(provider: string | null, mxHost: string | null): string {
  if (provider) return provider;
  if (!mxHost) return 'none';
  return classifyMxHost(mxHost)?.id ?? (registrableDomain(mxHost) || 'none');
}
