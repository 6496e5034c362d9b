import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { D, HOST_OCTETS, SELF_CHECK, webhookRecords, zoneHosts, zoneMx } from './zones.js';

/**
 * dnsmasq configuration for the rig's zone. It answers only from this file: `no-resolv`
 * and no upstream `server=` lines except the two rig resolvers on the same /24, so no
 * query ever leaves the loopback network; names outside the zone get REFUSED/NXDOMAIN.
 */
export function dnsmasqConfig(subnet: string, dir: string, benchOffset = 0): string {
  const at = (octet: number) => `${subnet}.${octet}`;
  const lines = [
    `listen-address=${at(2)}`,
    'port=53',
    'bind-interfaces',
    'no-resolv',
    'no-hosts',
    'no-poll',
    'no-negcache',
    'user=root',
    `pid-file=${join(dir, 'dnsmasq.pid')}`,
    `log-facility=${join(dir, 'dnsmasq.log')}`,
    // Authoritative-style answers for the rig's names: NXDOMAIN for anything unlisted.
    'local=/test/',
    'local=/yahoodns.net/',
    'local=/outlook.com/',
    'local=/google.com/',
    // The two failure cases go to rig resolvers on this /24 (see dns-responders.ts).
    `server=/${D.servfail}/${at(4)}#53`,
    `server=/${D.silent}/${at(3)}#53`,
  ];
  // With a latency relay in front of the benchmark MX hosts, their names point at the relays.
  for (const { host, role } of zoneHosts()) lines.push(`host-record=${host},${at(HOST_OCTETS[role] + (role.startsWith('bench') ? benchOffset : 0))}`);
  lines.push(`host-record=${D.aaaaOnly},::1`);
  // The webhook tests' names (loopback, but for the rebinding name's one refused public address).
  for (const { host, address } of webhookRecords()) lines.push(`host-record=${host},${address}`);
  // Google-hosted names resolve to the dead address: they exist for the provider/grade checks only.
  for (const h of ['aspmx.l.google.com', 'alt1.aspmx.l.google.com', 'alt2.aspmx.l.google.com']) lines.push(`host-record=${h},${at(HOST_OCTETS.dead)}`);
  for (const mx of zoneMx()) lines.push(`mx-host=${mx.domain},${mx.host},${mx.priority}`);
  // RFC 7505 null MX as a raw record (type 15): preference 0x0000, exchange = root (0x00).
  lines.push(`dns-rr=${D.nullMx},15,000000`);
  lines.push(`txt-record=${D.noMail},"v=spf1 -all"`);
  // The SMTP self-check (issue 23): host-record gives both A and PTR (forward-confirmed);
  // the mismatching egress gets a PTR of another name and a HELO name pointing elsewhere;
  // the listed egress is in the first block-list zone (address= makes no PTR for 127.0.0.2).
  const rev = (octet: number) => `${octet}.${subnet.split('.').reverse().join('.')}`;
  lines.push(`host-record=${SELF_CHECK.good.helo},${at(SELF_CHECK.good.octet)}`);
  lines.push(`host-record=${SELF_CHECK.listed.helo},${at(SELF_CHECK.listed.octet)}`);
  lines.push(`host-record=${SELF_CHECK.mismatch.helo},${at(SELF_CHECK.mismatch.forwardOctet)}`);
  lines.push(`ptr-record=${rev(SELF_CHECK.mismatch.octet)}.in-addr.arpa,${SELF_CHECK.mismatch.ptr}`);
  lines.push(`address=/${rev(SELF_CHECK.listed.octet)}.${SELF_CHECK.blocklists[0]}/127.0.0.2`);
  return lines.join('\n') + '\n';
}

/** Starts dnsmasq in the foreground (so it dies with the rig) and waits until it answers. */
export async function startDnsmasq(subnet: string, dir: string, benchOffset = 0): Promise<ChildProcess> {
  const conf = join(dir, 'dnsmasq.conf');
  writeFileSync(conf, dnsmasqConfig(subnet, dir, benchOffset));
  const child = spawn('dnsmasq', ['--keep-in-foreground', `--conf-file=${conf}`], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (b: Buffer) => (stderr += b.toString()));
  const { promises: dns } = await import('node:dns');
  const probe = new dns.Resolver({ timeout: 200, tries: 1 });
  probe.setServers([`${subnet}.2:53`]);
  for (let i = 0; i < 50; i++) {
    if (child.exitCode !== null) throw new Error(`dnsmasq exited: ${stderr.trim()}`);
    try {
      await probe.resolve4(`mx.${D.valid}`);
      return child;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  child.kill();
  throw new Error(`dnsmasq did not answer on ${subnet}.2:53: ${stderr.trim()}`);
}
