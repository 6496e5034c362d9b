// The rig as a process: `node test-rig/dist/daemon.js` starts every server, prints one line
// `RIG-READY {json}` on stdout, and stops everything when its stdin closes or it gets
// SIGTERM/SIGINT. Tying its life to stdin means a test run that crashes cannot leave
// dnsmasq or Postfix behind. Use startRig() (rig.ts) rather than running this by hand.
import { execFileSync, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBrokenResolver } from './dns-responders.js';
import { startDnsmasq } from './dnsmasq.js';
import { LATENCY_RELAY_OFFSET, startLatencyRelay } from './latency-relay.js';
import { startPeer, type Peer, type PeerKind } from './peers.js';
import { startPostfix, type PostfixInstance } from './postfix.js';
import { SOCKS_PORT, startSocks5 } from './socks5-server.js';
import type { RigInfo } from './rig.js';
import { DNS_OCTET, HOST_OCTETS, SERVFAIL_DNS_OCTET, SILENT_DNS_OCTET, SOCKS_OCTET, type HostRole } from './zones.js';

const PEERS: Array<{ kind: PeerKind; role: HostRole }> = [
  { kind: 'greet421', role: 'greet421' },
  { kind: 'tarpit', role: 'tarpit' },
  { kind: 'disconnect', role: 'disconnect' },
  { kind: 'secondRcpt452', role: 'secondRcpt452' },
  { kind: 'blocklist', role: 'blocklist' },
  { kind: 'acceptAll', role: 'acceptAll' },
  { kind: 'lockstep', role: 'lockstep' },
  { kind: 'dropMidPipeline', role: 'dropMidPipeline' },
  { kind: 'errorLimit', role: 'errorLimit' },
  { kind: 'doubleReply', role: 'doubleReply' },
  { kind: 'gate', role: 'gate' },
];

function udpFree(address: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = dgram.createSocket('udp4');
    s.once('error', () => resolve(false));
    s.bind(53, address, () => s.close(() => resolve(true)));
  });
}

/** A random 127.X.Y.0/24 nobody uses, so parallel rigs never share an address. */
async function pickSubnet(): Promise<string> {
  for (let i = 0; i < 20; i++) {
    const subnet = `127.${64 + Math.floor(Math.random() * 180)}.${Math.floor(Math.random() * 256)}`;
    if (await udpFree(`${subnet}.${DNS_OCTET}`)) return subnet;
  }
  throw new Error('no free 127.X.Y.0/24 found for the rig');
}

/**
 * Port 25 when it can be had on the rig's addresses; otherwise (a system MTA listening on
 * every address's port 25 blocks it) a free port, which the rig reports as `smtpPort`.
 */
function pickSmtpPort(address: string): Promise<number> {
  const tryListen = (port: number) =>
    new Promise<number | null>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(null));
      server.listen(port, address, () => {
        const bound = (server.address() as net.AddressInfo).port;
        server.close(() => resolve(bound));
      });
    });
  return tryListen(25).then((p) => p ?? tryListen(0).then((q) => q ?? Promise.reject(new Error(`no free TCP port on ${address}`))));
}

function banner(address: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: address, port });
    s.setTimeout(2000, () => s.destroy(new Error('timeout')));
    s.once('data', (b) => {
      s.end('QUIT\r\n');
      resolve(b.toString());
    });
    s.once('error', reject);
  });
}

async function waitSmtp(address: string, port: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      if ((await banner(address, port)).startsWith('220')) return;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no SMTP banner on ${address}:${port}`);
}

async function main(): Promise<void> {
  const subnet = await pickSubnet();
  const dir = mkdtempSync(join(tmpdir(), 'mailconv-rig-'));
  // Postfix's daemons run as the postfix user and must reach their data directory in here.
  chmodSync(dir, 0o755);
  const at = (octet: number) => `${subnet}.${octet}`;
  const closers: Array<() => Promise<void> | void> = [];
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    for (const close of closers.reverse()) {
      try {
        await close();
      } catch {
        /* keep stopping the rest */
      }
    }
    rmSync(dir, { recursive: true, force: true });
    process.exit(code);
  };
  process.stdin.on('end', () => void stop(0));
  process.stdin.on('close', () => void stop(0));
  process.stdin.resume();
  process.on('SIGTERM', () => void stop(0));
  process.on('SIGINT', () => void stop(0));

  try {
    // Self-signed certificate so Postfix offers STARTTLS, as real MX hosts do.
    const cert = join(dir, 'mx.pem');
    const key = join(dir, 'mx.key');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
      '-subj', '/CN=mx.valid.test', '-keyout', key, '-out', cert], { stdio: 'ignore' });

    for (const [octet, mode] of [[SILENT_DNS_OCTET, 'silent'], [SERVFAIL_DNS_OCTET, 'servfail']] as const) {
      const r = await startBrokenResolver(at(octet), mode);
      closers.push(() => r.close());
    }
    const benchDelay = Number(/^--bench-delay=(\d+)$/.exec(process.argv[2] ?? '')?.[1] ?? 0);
    const dnsmasq: ChildProcess = await startDnsmasq(subnet, dir, benchDelay > 0 ? LATENCY_RELAY_OFFSET : 0);
    closers.push(
      () =>
        new Promise<void>((resolve) => {
          if (dnsmasq.exitCode !== null) return resolve();
          dnsmasq.once('exit', () => resolve());
          dnsmasq.kill('SIGTERM');
        }),
    );
    const smtpPort = await pickSmtpPort(at(HOST_OCTETS.postfix));
    const postfix: PostfixInstance = startPostfix(subnet, dir, smtpPort, cert, key);
    closers.push(() => postfix.stop());
    for (const { kind, role } of PEERS) {
      const peer: Peer = await startPeer(kind, at(HOST_OCTETS[role]), smtpPort);
      closers.push(() => peer.close());
    }
    if (benchDelay > 0) {
      for (const role of ['bench0', 'bench1', 'bench2', 'bench3'] as const) {
        const relay = await startLatencyRelay(at(HOST_OCTETS[role] + LATENCY_RELAY_OFFSET), at(HOST_OCTETS[role]), smtpPort, benchDelay);
        closers.push(() => relay.close());
      }
    }
    const socks = await startSocks5(at(SOCKS_OCTET), subnet);
    closers.push(() => socks.close());
    for (const role of ['postfix', 'bench0', 'bench1', 'bench2', 'bench3'] as const) await waitSmtp(at(HOST_OCTETS[role]), smtpPort);

    const hosts = Object.fromEntries(Object.entries(HOST_OCTETS).map(([role, octet]) => [role, at(octet)])) as Record<HostRole, string>;
    const info: RigInfo = {
      dir,
      subnet,
      dnsServer: `${at(DNS_OCTET)}:53`,
      silentDnsServer: `${at(SILENT_DNS_OCTET)}:53`,
      smtpPort,
      socks: { host: at(SOCKS_OCTET), port: SOCKS_PORT },
      hosts,
      pid: process.pid,
    };
    process.stdout.write(`RIG-READY ${JSON.stringify(info)}\n`);
  } catch (err) {
    process.stderr.write(`rig failed to start: ${(err as Error).stack ?? String(err)}\n`);
    await stop(1);
  }
}

void main();
