import net from 'node:net';
import { PEER_USERS } from './zones.js';

/**
 * How a {@link RateLimitPeer} limits (issue 49): `gmail` answers the RCPT past the limit
 * with Gmail's multi-line `421-4.7.28 … temporarily rate limited` and closes the session;
 * `microsoft` answers it `451 4.7.650 … temporarily rate limited due to IP reputation` and
 * keeps the session; `blocklist` answers every RCPT with a permanent `550 5.7.1` block-list
 * refusal (never a rate limit).
 */
export type RateLimitStyle = 'gmail' | 'microsoft' | 'blocklist';

export interface RateLimitPeerOptions {
  style: RateLimitStyle;
  /** RCPTs answered in any `windowMs` (over all sessions) before the limit. Default 5. */
  perWindow?: number;
  windowMs?: number;
}

/** One session the peer saw: when it was opened (ms since the epoch) and the RCPTs it carried. */
export interface PeerSession {
  openedAt: number;
  rcpts: number;
}

export interface RateLimitPeer {
  port: number;
  sessions: PeerSession[];
  /** When each RCPT was answered with the rate-limit reply (ms since the epoch). */
  limitedAt: number[];
  close(): Promise<void>;
}

const GMAIL_421 = [
  '421-4.7.28 [127.0.0.1      15] Our system has detected an unusual rate of',
  '421-4.7.28 unsolicited mail originating from your IP address. To protect our',
  '421-4.7.28 users from spam, mail sent from your IP address has been temporarily',
  '421-4.7.28 rate limited. Please visit',
  '421 4.7.28  https://support.google.com/mail/answer/188131 for more information. rig - gsmtp',
].join('\r\n');
const MICROSOFT_451 = '451 4.7.650 The mail server [127.0.0.1] has been temporarily rate limited due to IP reputation. For e-mail delivery information, see https://aka.ms/postmaster (S843)';
const BLOCKLIST_550 = '550 5.7.1 Service unavailable, Client host [127.0.0.1] blocked using Spamhaus. To request removal from this list see https://www.spamhaus.org/query/ip/127.0.0.1';

/**
 * A loopback SMTP server that rate-limits like the big providers do (issue 49): it answers
 * `perWindow` RCPTs in any `windowMs`, known users (`PEER_USERS`) 250 and others 550 5.1.1,
 * and the ones past that with its style's reply. Listens on `address` at a free port; a
 * test points `EMAIL_SMTP_PORT` at it. PIPELINING, no STARTTLS, no DATA.
 */
export async function startRateLimitPeer(address: string, options: RateLimitPeerOptions): Promise<RateLimitPeer> {
  const perWindow = options.perWindow ?? 5;
  const windowMs = options.windowMs ?? 10_000;
  const answered: number[] = [];
  const sockets = new Set<net.Socket>();
  const peer: RateLimitPeer = { port: 0, sessions: [], limitedAt: [], close: async () => {} };
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    const session: PeerSession = { openedAt: Date.now(), rcpts: 0 };
    peer.sessions.push(session);
    socket.setEncoding('latin1');
    socket.write('220 rig rate-limit peer ESMTP\r\n');
    let buffer = '';
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0 && !socket.destroyed && socket.writable) {
        const line = buffer.slice(0, nl).trim();
        buffer = buffer.slice(nl + 1);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO' || verb === 'HELO') socket.write('250-rig\r\n250 PIPELINING\r\n');
        else if (verb === 'MAIL') socket.write('250 2.1.0 Ok\r\n');
        else if (verb === 'RSET') socket.write('250 2.0.0 Ok\r\n');
        else if (verb === 'QUIT') socket.end('221 2.0.0 Bye\r\n');
        else if (verb === 'RCPT') {
          session.rcpts++;
          if (options.style === 'blocklist') {
            socket.write(`${BLOCKLIST_550}\r\n`);
            continue;
          }
          const now = Date.now();
          while (answered.length > 0 && answered[0]! <= now - windowMs) answered.shift();
          if (answered.length >= perWindow) {
            peer.limitedAt.push(now);
            if (options.style === 'gmail') {
              socket.end(`${GMAIL_421}\r\n`);
              return;
            }
            socket.write(`${MICROSOFT_451}\r\n`);
            continue;
          }
          answered.push(now);
          const local = /<([^@>]*)@/.exec(line)?.[1]?.toLowerCase() ?? '';
          socket.write((PEER_USERS as readonly string[]).includes(local) ? '250 2.1.5 Ok\r\n' : '550 5.1.1 <x>: Recipient address rejected: User unknown\r\n');
        } else socket.write('502 5.5.2 Error: command not recognized\r\n');
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, address, () => resolve());
  });
  peer.port = (server.address() as net.AddressInfo).port;
  peer.close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  return peer;
}
