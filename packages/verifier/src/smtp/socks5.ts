import net from 'node:net';
import { ioTimeout } from './io-timeout.js';

/** A SOCKS5 proxy (RFC 1928) with optional username/password (RFC 1929). */
export interface Socks5Proxy {
  host: string;
  port: number;
  username?: string;
  password?: string;
}

/** Why the proxy did not give us a tunnel. */
export class Socks5Error extends Error {
  constructor(
    readonly kind: 'proxy_unreachable' | 'proxy_auth_failed' | 'proxy_refused' | 'target_refused' | 'protocol',
    message: string,
  ) {
    super(message);
  }
}

// CONNECT reply codes (RFC 1928 §6) that mean "the target said no", not "the proxy is broken".
const TARGET_REFUSED = new Set([0x03, 0x04, 0x05]);

/**
 * Opens a TCP tunnel through a SOCKS5 proxy to `address:port` (an IP address: MX names are
 * resolved, and checked against the private-address rule, before we get here). Resolves
 * with the proxy socket, now carrying the target's byte stream.
 */
export function connectViaSocks5(proxy: Socks5Proxy, address: string, port: number, timeoutMs: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: proxy.host, port: proxy.port });
    let buffer = Buffer.alloc(0);
    let step: 'method' | 'auth' | 'connect' = 'method';
    const fail = (err: Socks5Error) => {
      timer.cancel();
      socket.destroy();
      reject(err);
    };
    // The proxy's answers that came while the loop was stalled are read before this fires (issue 44).
    const timer = ioTimeout(() => fail(new Socks5Error('proxy_unreachable', `no tunnel through ${proxy.host}:${proxy.port} within ${timeoutMs} ms`)), timeoutMs);
    const withAuth = proxy.username !== undefined;
    socket.once('connect', () => socket.write(Buffer.from(withAuth ? [0x05, 0x02, 0x00, 0x02] : [0x05, 0x01, 0x00])));
    socket.on('error', (e: NodeJS.ErrnoException) => fail(new Socks5Error('proxy_unreachable', `${proxy.host}:${proxy.port}: ${e.code ?? e.message}`)));
    const sendConnect = () => {
      step = 'connect';
      const v6 = net.isIPv6(address);
      const addr = v6 ? ipv6Bytes(address) : Buffer.from(address.split('.').map(Number));
      const head = Buffer.from([0x05, 0x01, 0x00, v6 ? 0x04 : 0x01]);
      const tail = Buffer.from([port >> 8, port & 0xff]);
      socket.write(Buffer.concat([head, addr, tail]));
    };
    const onData = (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      if (step === 'method') {
        if (buffer.length < 2) return;
        const method = buffer[1];
        buffer = buffer.subarray(2);
        if (method === 0x00) return sendConnect();
        if (method === 0x02 && withAuth) {
          step = 'auth';
          const u = Buffer.from(proxy.username ?? '');
          const p = Buffer.from(proxy.password ?? '');
          socket.write(Buffer.concat([Buffer.from([0x01, u.length]), u, Buffer.from([p.length]), p]));
          return;
        }
        return fail(new Socks5Error('proxy_auth_failed', 'the proxy accepts none of our authentication methods'));
      }
      if (step === 'auth') {
        if (buffer.length < 2) return;
        const ok = buffer[1] === 0x00;
        buffer = buffer.subarray(2);
        if (!ok) return fail(new Socks5Error('proxy_auth_failed', 'the proxy refused our credentials'));
        return sendConnect();
      }
      // CONNECT reply: VER REP RSV ATYP BND.ADDR BND.PORT
      if (buffer.length < 5) return;
      const rep = buffer[1] ?? 0xff;
      const atyp = buffer[3];
      const length = atyp === 0x01 ? 10 : atyp === 0x04 ? 22 : 7 + (buffer[4] ?? 0);
      if (rep !== 0x00) {
        return fail(new Socks5Error(TARGET_REFUSED.has(rep) ? 'target_refused' : 'proxy_refused', `the proxy could not connect to ${address}:${port} (reply ${rep})`));
      }
      if (buffer.length < length) return;
      socket.off('data', onData);
      socket.removeAllListeners('error');
      timer.cancel();
      const rest = buffer.subarray(length);
      if (rest.length > 0) socket.unshift(rest);
      resolve(socket);
    };
    socket.on('data', onData);
  });
}

function ipv6Bytes(address: string): Buffer {
  const [head = '', tail = ''] = address.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = address.includes('::') ? [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t] : h;
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(parseInt(g || '0', 16), i * 2));
  return out;
}
