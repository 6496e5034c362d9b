import { execFileSync } from 'node:child_process';
import { chownSync, mkdirSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { BENCH_DOMAIN_COUNT, BENCH_USERS_PER_DOMAIN, D, HOST_OCTETS, POSTFIX_SPECIAL, POSTFIX_USERS, benchDomains, benchIsCatchAll, benchTruth } from './zones.js';

/**
 * A private Postfix instance (its own config, queue and data directories under the rig
 * directory, started with `postfix -c`), so it never touches the system's /etc/postfix and
 * two rigs can run side by side.
 *
 * It cannot send mail anywhere: master.cf has no `smtp`/`lmtp`/`local`/`pipe` delivery
 * services at all, every transport is `discard`, there is no relayhost, relaying is
 * refused (`reject_unauth_destination` with an empty `mynetworks`), and smtpd listens only
 * on the rig's loopback addresses. It also makes no DNS queries (`smtpd_peername_lookup =
 * no`, no DNS-based restrictions). Probes never send DATA anyway.
 */
export interface PostfixInstance {
  configDir: string;
  stop(): void;
}

function mailboxes(): string {
  const lines: string[] = [];
  for (const d of [D.valid, D.multiMx, D.aOnly, D.busyPrimary]) {
    for (const u of POSTFIX_USERS) lines.push(`${u}@${d} ok`);
    for (const s of POSTFIX_SPECIAL) lines.push(`${s.local}@${d} ok`);
  }
  lines.push(`@${D.catchAll} ok`, `@${D.greylist} ok`);
  benchDomains().forEach((d, i) => {
    if (benchIsCatchAll(i)) lines.push(`@${d} ok`);
    for (let u = 0; u < BENCH_USERS_PER_DOMAIN; u++) {
      if (benchTruth(i, u) !== 'user_unknown') lines.push(`u${String(u).padStart(3, '0')}@${d} ok`);
    }
  });
  return lines.join('\n') + '\n';
}

// The bulk-job benchmark's 4-digit users (`benchJobAddresses`), by the last two digits as
// benchTruth says: 00–59 exist (60–84 only on catch-all domains, whose `@domain` entry
// covers them), 85–92 full, 93–99 disabled. A regexp map costs nothing per smtpd start,
// where 100,000 texthash lines would be read by every new smtpd process.
const JOB_USER = 'u[0-9][0-9]';
const JOB_DOMAIN = '@bench-[0-9][0-9][.]test$/';
function jobMailboxes(): string {
  return [`/^${JOB_USER}[0-5][0-9]${JOB_DOMAIN} ok`, `/^${JOB_USER}(8[5-9]|9[0-9])${JOB_DOMAIN} ok`].join('\n') + '\n';
}
function jobRecipientAccess(): string {
  return [`/^${JOB_USER}(8[5-9]|9[0-2])${JOB_DOMAIN} 552 5.2.2 Mailbox full, over quota`, `/^${JOB_USER}9[3-9]${JOB_DOMAIN} 550 5.2.1 Mailbox disabled, account inactive`].join('\n') + '\n';
}

function recipientAccess(): string {
  const lines: string[] = [];
  for (const d of [D.valid, D.multiMx, D.aOnly]) for (const s of POSTFIX_SPECIAL) lines.push(`${s.local}@${d} ${s.reply}`);
  lines.push(`${D.greylist} 450 4.7.1 Greylisted, please try again later`);
  for (let i = 0; i < BENCH_DOMAIN_COUNT; i++) {
    const d = benchDomains()[i];
    for (let u = 0; u < BENCH_USERS_PER_DOMAIN; u++) {
      const t = benchTruth(i, u);
      const addr = `u${String(u).padStart(3, '0')}@${d}`;
      if (t === 'mailbox_full') lines.push(`${addr} 552 5.2.2 Mailbox full, over quota`);
      if (t === 'disabled') lines.push(`${addr} 550 5.2.1 Mailbox disabled, account inactive`);
    }
  }
  return lines.join('\n') + '\n';
}

/** Writes the instance's main.cf/master.cf/maps and starts it; throws with the log tail on failure. */
export function startPostfix(subnet: string, dir: string, port: number, certFile: string, keyFile: string): PostfixInstance {
  const etc = join(dir, 'postfix');
  const queue = join(dir, 'postfix-queue');
  const data = join(dir, 'postfix-data');
  for (const p of [etc, queue, data]) mkdirSync(p, { recursive: true });
  const postfixUid = Number(execFileSync('id', ['-u', 'postfix'], { encoding: 'utf8' }).trim());
  chownSync(data, postfixUid, userInfo().gid);
  const at = (octet: number) => `${subnet}.${octet}`;
  const domains = [D.valid, D.multiMx, D.aOnly, D.busyPrimary, D.catchAll, D.greylist, ...benchDomains()];
  const main = {
    compatibility_level: '3.6',
    queue_directory: queue,
    data_directory: data,
    mail_owner: 'postfix',
    setgid_group: 'postdrop',
    myhostname: `mx.${D.valid}`,
    mydomain: D.valid,
    myorigin: '$myhostname',
    mydestination: '',
    // The listeners themselves are the explicit addresses in master.cf.
    inet_interfaces: 'loopback-only',
    inet_protocols: 'ipv4',
    mynetworks: `${at(254)}/32`,
    relayhost: '',
    relay_domains: '',
    default_transport: 'discard',
    local_transport: 'discard',
    virtual_transport: 'discard',
    relay_transport: 'discard',
    alias_maps: '',
    alias_database: '',
    virtual_mailbox_domains: domains.join(' '),
    virtual_mailbox_maps: `texthash:${join(etc, 'mailboxes')}, regexp:${join(etc, 'job_mailboxes')}`,
    smtpd_relay_restrictions: 'reject_unauth_destination',
    smtpd_recipient_restrictions: `check_recipient_access texthash:${join(etc, 'recipient_access')}, check_recipient_access regexp:${join(etc, 'job_recipient_access')}`,
    smtpd_peername_lookup: 'no',
    // Probes open a queue file at each accepted RCPT and drop it at RSET; nothing is ever
    // delivered, so the inflow/outflow tokens of Postfix's flow control never come back
    // and every envelope would pause for a second. A real MX delivers and does not stall.
    in_flow_delay: '0s',
    smtpd_tls_security_level: 'may',
    smtpd_tls_cert_file: certFile,
    smtpd_tls_key_file: keyFile,
    smtpd_banner: '$myhostname ESMTP rig',
    biff: 'no',
    maillog_file: join(dir, 'postfix.log'),
    maillog_file_prefixes: dir,
  };
  writeFileSync(join(etc, 'main.cf'), Object.entries(main).map(([k, v]) => `${k} = ${v}`).join('\n') + '\n');
  const listeners = (['postfix', 'bench0', 'bench1', 'bench2', 'bench3'] as const).map((r) => `${at(HOST_OCTETS[r])}:${port} inet n - n - - smtpd`);
  const services = [
    'pickup    unix  n - n 60 1 pickup',
    'cleanup   unix  n - n - 0 cleanup',
    'qmgr      unix  n - n 300 1 qmgr',
    'tlsmgr    unix  - - n 1000? 1 tlsmgr',
    'rewrite   unix  - - n - - trivial-rewrite',
    'bounce    unix  - - n - 0 bounce',
    'defer     unix  - - n - 0 bounce',
    'trace     unix  - - n - 0 bounce',
    'verify    unix  - - n - 1 verify',
    'flush     unix  n - n 1000? 0 flush',
    'proxymap  unix  - - n - - proxymap',
    'showq     unix  n - n - - showq',
    'error     unix  - - n - - error',
    'retry     unix  - - n - - error',
    'discard   unix  - - n - - discard',
    'anvil     unix  - - n - 1 anvil',
    'scache    unix  - - n - 1 scache',
    'postlog   unix-dgram n - n - 1 postlogd',
  ];
  writeFileSync(join(etc, 'master.cf'), [...listeners, ...services].join('\n') + '\n');
  writeFileSync(join(etc, 'mailboxes'), mailboxes());
  writeFileSync(join(etc, 'recipient_access'), recipientAccess());
  writeFileSync(join(etc, 'job_mailboxes'), jobMailboxes());
  writeFileSync(join(etc, 'job_recipient_access'), jobRecipientAccess());
  try {
    execFileSync('postfix', ['-c', etc, 'start'], { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    let tail = '';
    try {
      tail = execFileSync('tail', ['-n', '20', join(dir, 'postfix.log')], { encoding: 'utf8' });
    } catch {
      /* no log yet */
    }
    throw new Error(`postfix did not start (${(err as Error).message}); log:\n${tail}`);
  }
  return {
    configDir: etc,
    stop() {
      try {
        execFileSync('postfix', ['-c', etc, 'stop'], { stdio: 'ignore' });
      } catch {
        /* already stopped */
      }
    },
  };
}
