import { spawn } from 'node:child_process';
import { promises as dns } from 'node:dns';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './processes.js';

/** A name and one of its addresses (several lines for one name give several records). */
export interface DnsRecord {
  readonly host: string;
  readonly address: string;
}

/**
 * A real DNS server for a test: Debian's dnsmasq on 127.0.0.1 at a free port, answering only
 * the given records. `no-resolv` and no `server=` lines: nothing is forwarded, so no query
 * leaves loopback; every other name under the records' top-level domains is NXDOMAIN
 * (`local=`), anything else REFUSED. Point a resolver at `server` (`host:port`).
 */
export async function startDnsServer(records: readonly DnsRecord[]): Promise<{ server: string; close(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'test-dns-'));
  const port = await freePort();
  const tlds = [...new Set(records.map((r) => r.host.split('.').pop()))];
  const lines = [
    'listen-address=127.0.0.1',
    `port=${port}`,
    'bind-interfaces',
    'no-resolv',
    'no-hosts',
    'no-poll',
    'no-negcache',
    'user=root',
    `pid-file=${join(dir, 'dnsmasq.pid')}`,
    ...tlds.map((tld) => `local=/${tld}/`),
    ...records.map((r) => `host-record=${r.host},${r.address}`),
  ];
  await writeFile(join(dir, 'dnsmasq.conf'), `${lines.join('\n')}\n`);
  const child = spawn('dnsmasq', ['--keep-in-foreground', `--conf-file=${join(dir, 'dnsmasq.conf')}`], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Ready when it answers: ask until it does (or fail with its own words).
  const probe = new dns.Resolver({ timeout: 200, tries: 1 });
  probe.setServers([`127.0.0.1:${port}`]);
  const deadline = Date.now() + 5000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`dnsmasq exited: ${stderr.trim()}`);
    const answered = await probe.resolve4(records[0]?.host ?? 'x.test').then(() => true, (e: NodeJS.ErrnoException) => e.code === 'ENOTFOUND' || e.code === 'ENODATA');
    if (answered) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`dnsmasq did not answer on 127.0.0.1:${port}: ${stderr.trim()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    server: `127.0.0.1:${port}`,
    async close() {
      child.kill('SIGTERM');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}
