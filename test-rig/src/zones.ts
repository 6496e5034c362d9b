/**
 * The rig's truth, as data: which test domain routes where and how each mailbox answers.
 * The DNS zone (dnsmasq), the Postfix maps and the scriptable peers are all generated from
 * this file, and tests and the benchmark compare what the verifier says with it.
 *
 * Host roles are resolved to loopback addresses when the rig starts (each rig instance has
 * its own 127.X.Y.0/24, so rigs of parallel test runs do not collide).
 */

/** The SMTP peers of the rig. `postfix` and `bench*` are a real Postfix; the rest are scripted. */
export type HostRole =
  | 'postfix'
  | 'dead'
  | 'greet421'
  | 'tarpit'
  | 'disconnect'
  | 'secondRcpt452'
  | 'blocklist'
  | 'acceptAll'
  | 'lockstep'
  | 'dropMidPipeline'
  | 'errorLimit'
  | 'doubleReply'
  | 'gate'
  | 'bench0'
  | 'bench1'
  | 'bench2'
  | 'bench3';

/** Last octet of each role inside the rig's /24. `.2` is dnsmasq, `.3` a silent resolver, `.4` a SERVFAIL one. */
export const HOST_OCTETS: Record<HostRole, number> = {
  postfix: 10,
  dead: 9,
  greet421: 30,
  tarpit: 31,
  disconnect: 32,
  secondRcpt452: 33,
  blocklist: 34,
  acceptAll: 35,
  lockstep: 36,
  dropMidPipeline: 37,
  errorLimit: 38,
  doubleReply: 39,
  gate: 41,
  bench0: 20,
  bench1: 21,
  bench2: 22,
  bench3: 23,
};
export const DNS_OCTET = 2;
export const SILENT_DNS_OCTET = 3;
export const SERVFAIL_DNS_OCTET = 4;
/** SOCKS5 proxy (port 1080) that only connects inside the rig's /24. */
export const SOCKS_OCTET = 40;

/** Names of the test domains, for tests to refer to. */
export const D = {
  /** MX 10 → Postfix: alice, bob exist; full (552 5.2.2), disabled (550 5.2.1); others 550 5.1.1. */
  valid: 'valid.test',
  /** MX 10 → dead address, MX 20 and 30 → Postfix (listed out of order in the zone). */
  multiMx: 'multi-mx.test',
  /** MX → Postfix, every recipient accepted. */
  catchAll: 'catchall.test',
  /** MX → Postfix, every RCPT answered 450 4.7.1 (what a greylisting policy server says). */
  greylist: 'greylist.test',
  /** Null MX (RFC 7505). */
  nullMx: 'nullmx.test',
  /** No MX, an A record → Postfix (RFC 5321 §5.1 implicit MX). */
  aOnly: 'a-only.test',
  /** No MX, only an AAAA record (::1). */
  aaaaOnly: 'aaaa-only.test',
  /** Exists (has a TXT record) but has neither MX nor address records. */
  noMail: 'no-mail.test',
  /** Not in the zone: NXDOMAIN. */
  nxdomain: 'does-not-exist.test',
  /** MX 10 and 20 → hosts that are not in the zone (NXDOMAIN): MX records, no mail host. */
  mxNoAddress: 'mx-no-address.test',
  /** Forwarded by dnsmasq to a rig resolver that answers SERVFAIL. */
  servfail: 'servfail.test',
  /** Forwarded by dnsmasq to a rig resolver that never answers. */
  silent: 'silent.test',
  /** MX → an address where nothing listens (connection refused). */
  deadMx: 'dead-mx.test',
  /** MX → a peer that answers 421 at connect. */
  busy: 'busy.test',
  /** MX 10 → the 421 peer, MX 20 → Postfix: a busy primary falls back like a dead one. */
  busyPrimary: 'busy-primary.test',
  /** MX → a peer that stalls before answering RCPT. */
  slow: 'slow.test',
  /** MX → a peer that drops the connection at RCPT. */
  drop: 'drop.test',
  /** MX → a peer that answers 452 4.5.3 to a second recipient in one envelope (unknown provider). */
  strict: 'strict-rcpt.test',
  /** MX at `*.mail.protection.outlook.com` → the 452-on-second-recipient peer (Microsoft 365 rules). */
  m365: 'contoso.test',
  /** MX → a peer that refuses with a block-list reply. */
  blocked: 'blocked.test',
  /** MX at `*.yahoodns.net` → a peer that accepts every recipient (Yahoo rules). */
  yahoo: 'yahoo-like.test',
  /** MX → a peer without PIPELINING that hangs up on a client that pipelines anyway. */
  lockstep: 'lockstep.test',
  /** MX → a peer that drops the connection in the middle of a pipelined group (after 2 RCPT answers a session). */
  dropPipeline: 'drop-pipeline.test',
  /** MX → a peer that answers 421 and hangs up once a session has 4 rejected recipients. */
  errorLimit: 'error-limit.test',
  /** MX → a peer that answers MAIL twice, so every later reply is one place off. */
  doubleReply: 'double-reply.test',
  /** MX → a peer that answers no RCPT until 3 sessions are open at once, and refuses a 4th. */
  gate: 'gate.test',
  /** MX at Google and two more hosts, for the provider/grade checks (not probed). */
  google: 'google-hosted.test',
  /** `d0000.wild.test` … `d9999.wild.test`: MX → Postfix. Ten thousand domains for load tests. */
  wildcard: 'wild.test',
} as const;

/**
 * Host names of the webhook tests (services/email-api), resolved through the rig like any
 * other name. Every answer is a loopback address, where the tests' HTTPS receiver listens,
 * with one exception: {@link WEBHOOK_HOSTS.rebind} also answers one public address, so the
 * address guard can be seen refusing a name whose answers mix public and private addresses
 * (what a rebinding DNS gives). Nothing may connect to that address: the guard refuses
 * the name, and the tests' apps fence deliveries to loopback (`EMAIL_WEBHOOKS_RESTRICT_TO`).
 */
export const WEBHOOK_HOSTS = {
  /** A 127.0.0.1: the receiver (its certificate names this host). */
  receiver: 'hooks.example.test',
  /** AAAA ::1 only. */
  receiverV6: 'hooks6.example.test',
  /** A 127.0.0.1 and A {@link REBIND_PUBLIC_ADDRESS}: never passes the guard. */
  rebind: 'rebind.example.test',
  /** Not in the zone: NXDOMAIN. */
  nowhere: 'nowhere.example.test',
} as const;

/** The one non-loopback address in the zone (see {@link WEBHOOK_HOSTS}); never connected to. */
export const REBIND_PUBLIC_ADDRESS = '93.184.216.34';

/** Address records of the webhook names. */
export function webhookRecords(): Array<{ host: string; address: string }> {
  return [
    { host: WEBHOOK_HOSTS.receiver, address: '127.0.0.1' },
    { host: WEBHOOK_HOSTS.receiverV6, address: '::1' },
    { host: WEBHOOK_HOSTS.rebind, address: REBIND_PUBLIC_ADDRESS },
    { host: WEBHOOK_HOSTS.rebind, address: '127.0.0.1' },
  ];
}

/**
 * The SMTP self-check's egresses (issue 23): addresses in the rig's /24 (last octet below),
 * their HELO names, and the rig's DNS block lists. The rig's DNS serves the names' A records,
 * the addresses' PTR records and the block-list zones; no real list is ever asked.
 */
export const SELF_CHECK = {
  /** A and PTR agree: FCrDNS passes; not listed. */
  good: { octet: 50, helo: 'egress-ok.selfcheck.test' },
  /** PTR names another host and the HELO name resolves elsewhere: FCrDNS fails. */
  mismatch: { octet: 51, helo: 'egress-mismatch.selfcheck.test', ptr: 'someone-else.selfcheck.test', forwardOctet: 59 },
  /** FCrDNS passes, but the address is listed in {@link SELF_CHECK.blocklists}[0]. */
  listed: { octet: 52, helo: 'egress-listed.selfcheck.test' },
  /** Block-list zones served by the rig (the first lists the `listed` egress with 127.0.0.2). */
  blocklists: ['zen.blocklist.test', 'bl.blocklist.test'],
} as const;

/** Local parts the scripted peers treat as existing mailboxes. */
export const PEER_USERS = ['alice', 'bob'] as const;

/** Postfix mailboxes and special answers on `valid.test` (and `multi-mx.test`, `a-only.test`). */
export const POSTFIX_USERS = ['alice', 'bob', 'carol'] as const;
export const POSTFIX_SPECIAL: ReadonlyArray<{ local: string; reply: string }> = [
  { local: 'full', reply: '552 5.2.2 Mailbox full, over quota' },
  { local: 'disabled', reply: '550 5.2.1 Mailbox disabled, account inactive' },
];

/** MX host name used for the Microsoft-365-like domain (matches the provider table). */
export const M365_MX = 'contoso-test.mail.protection.outlook.com';
/** MX host name used for the Yahoo-like domain. */
export const YAHOO_MX = 'mta5.am0.yahoodns.net';

/** One MX record of the zone: target host name and the role whose address it resolves to. */
export interface ZoneMx {
  domain: string;
  priority: number;
  host: string;
}

/** Address records: host name → role. */
export function zoneHosts(): Array<{ host: string; role: HostRole }> {
  return [
    { host: `mx.${D.valid}`, role: 'postfix' },
    { host: `mx1.${D.multiMx}`, role: 'dead' },
    { host: `mx2.${D.multiMx}`, role: 'postfix' },
    { host: `mx3.${D.multiMx}`, role: 'postfix' },
    { host: D.aOnly, role: 'postfix' },
    { host: `mx.${D.deadMx}`, role: 'dead' },
    { host: `mx.${D.busy}`, role: 'greet421' },
    { host: `mx.${D.slow}`, role: 'tarpit' },
    { host: `mx.${D.drop}`, role: 'disconnect' },
    { host: `mx.${D.strict}`, role: 'secondRcpt452' },
    { host: M365_MX, role: 'secondRcpt452' },
    { host: `mx.${D.blocked}`, role: 'blocklist' },
    { host: YAHOO_MX, role: 'acceptAll' },
    { host: `mx.${D.lockstep}`, role: 'lockstep' },
    { host: `mx.${D.dropPipeline}`, role: 'dropMidPipeline' },
    { host: `mx.${D.errorLimit}`, role: 'errorLimit' },
    { host: `mx.${D.doubleReply}`, role: 'doubleReply' },
    { host: `mx.${D.gate}`, role: 'gate' },
    ...[0, 1, 2, 3].map((i) => ({ host: `mx${i}.bench.test`, role: `bench${i}` as HostRole })),
  ];
}

export function zoneMx(): ZoneMx[] {
  return [
    { domain: D.valid, priority: 10, host: `mx.${D.valid}` },
    // Deliberately not in preference order: the resolver must sort.
    { domain: D.multiMx, priority: 30, host: `mx3.${D.multiMx}` },
    { domain: D.multiMx, priority: 10, host: `mx1.${D.multiMx}` },
    { domain: D.multiMx, priority: 20, host: `mx2.${D.multiMx}` },
    { domain: D.catchAll, priority: 10, host: `mx.${D.valid}` },
    { domain: D.greylist, priority: 10, host: `mx.${D.valid}` },
    { domain: D.deadMx, priority: 10, host: `mx.${D.deadMx}` },
    { domain: D.mxNoAddress, priority: 10, host: `mx1.${D.mxNoAddress}` },
    { domain: D.mxNoAddress, priority: 20, host: `gone.${D.nxdomain}` },
    { domain: D.busy, priority: 10, host: `mx.${D.busy}` },
    { domain: D.busyPrimary, priority: 10, host: `mx.${D.busy}` },
    { domain: D.busyPrimary, priority: 20, host: `mx.${D.valid}` },
    { domain: D.slow, priority: 10, host: `mx.${D.slow}` },
    { domain: D.drop, priority: 10, host: `mx.${D.drop}` },
    { domain: D.strict, priority: 10, host: `mx.${D.strict}` },
    { domain: D.m365, priority: 0, host: M365_MX },
    { domain: D.blocked, priority: 10, host: `mx.${D.blocked}` },
    { domain: D.yahoo, priority: 1, host: YAHOO_MX },
    { domain: D.lockstep, priority: 10, host: `mx.${D.lockstep}` },
    { domain: D.dropPipeline, priority: 10, host: `mx.${D.dropPipeline}` },
    { domain: D.errorLimit, priority: 10, host: `mx.${D.errorLimit}` },
    { domain: D.doubleReply, priority: 10, host: `mx.${D.doubleReply}` },
    { domain: D.gate, priority: 10, host: `mx.${D.gate}` },
    { domain: D.google, priority: 1, host: 'aspmx.l.google.com' },
    { domain: D.google, priority: 5, host: 'alt1.aspmx.l.google.com' },
    { domain: D.google, priority: 10, host: 'alt2.aspmx.l.google.com' },
    ...benchDomains().map((d, i) => ({ domain: d, priority: 10, host: `mx${i % 4}.bench.test` })),
    ...loadDomains().map((d) => ({ domain: d, priority: 10, host: `mx.${D.valid}` })),
  ];
}

/** The ten thousand domains under {@link D.wildcard}, for load benchmarks (a bulk job over 10,000 domains). */
export function loadDomains(): string[] {
  return Array.from({ length: 10_000 }, (_, i) => `d${String(i).padStart(4, '0')}.${D.wildcard}`);
}

// ---- Benchmark population ------------------------------------------------------------

/** What the rig answers for an address, as the verifier should report it. */
export type Truth = 'accepted' | 'user_unknown' | 'mailbox_full' | 'disabled';

export const BENCH_DOMAIN_COUNT = 50;
export const BENCH_USERS_PER_DOMAIN = 100;

export function benchDomains(): string[] {
  return Array.from({ length: BENCH_DOMAIN_COUNT }, (_, i) => `bench-${String(i).padStart(2, '0')}.test`);
}

/** Every tenth bench domain is a catch-all. */
export function benchIsCatchAll(domainIndex: number): boolean {
  return domainIndex % 10 === 9;
}

/** Truth for user `u<NNN>` on a bench domain: 60 % exist, 25 % unknown, 8 % full, 7 % disabled. */
export function benchTruth(domainIndex: number, user: number): Truth {
  if (user < 60) return 'accepted';
  if (user < 85) return benchIsCatchAll(domainIndex) ? 'accepted' : 'user_unknown';
  if (user < 93) return 'mailbox_full';
  return 'disabled';
}

/** Users per bench domain of the bulk-job benchmark (`u0000`…`u1999`: 4 digits, next to the 3-digit ones above). */
export const BENCH_JOB_USERS_PER_DOMAIN = 2000;

/**
 * `count` (at most 100,000) addresses for the bulk-job SMTP benchmark: `u0000`… on the 50
 * bench domains, interleaved, with the same truth as user `u % 100` ({@link benchTruth}).
 * Postfix answers them from regular-expression maps (see `postfix.ts`).
 */
export function benchJobAddresses(count: number): Array<{ email: string; truth: Truth; catchAll: boolean }> {
  const domains = benchDomains();
  if (count > domains.length * BENCH_JOB_USERS_PER_DOMAIN) throw new Error(`at most ${domains.length * BENCH_JOB_USERS_PER_DOMAIN} bench job addresses`);
  return Array.from({ length: count }, (_, k) => {
    const i = k % domains.length;
    const u = Math.floor(k / domains.length);
    return { email: `u${String(u).padStart(4, '0')}@${domains[i]}`, truth: benchTruth(i, u % 100), catchAll: benchIsCatchAll(i) };
  });
}

/** The benchmark's 5,000 addresses with their expected answers, interleaved across domains. */
export function benchAddresses(): Array<{ email: string; truth: Truth; catchAll: boolean }> {
  const out: Array<{ email: string; truth: Truth; catchAll: boolean }> = [];
  const domains = benchDomains();
  for (let u = 0; u < BENCH_USERS_PER_DOMAIN; u++) {
    domains.forEach((d, i) => out.push({ email: `u${String(u).padStart(3, '0')}@${d}`, truth: benchTruth(i, u), catchAll: benchIsCatchAll(i) }));
  }
  return out;
}
