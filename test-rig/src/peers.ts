import net from 'node:net';
import { SMTPServer, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';
import { PEER_USERS } from './zones.js';

/**
 * Scripted SMTP peers for the behaviours a stock Postfix cannot easily show: a 421 at
 * connect, a tarpit, a dropped connection, a "452 4.5.3" on a second recipient
 * (Microsoft 365 style), a block-list refusal and an accept-everything server (Yahoo
 * style). All but the disconnecting one are built on `smtp-server`; all listen on the rig's SMTP
 * port (25 unless taken) of their own rig address. None accepts DATA.
 */
export type PeerKind = 'greet421' | 'tarpit' | 'disconnect' | 'secondRcpt452' | 'blocklist' | 'acceptAll';

export interface Peer {
  close(): Promise<void>;
}

/** How long the tarpit sits on a RCPT before answering (longer than any test's command time-out). */
export const TARPIT_MS = 20_000;

function smtpError(code: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode: code });
}

function isKnownUser(address: string): boolean {
  const local = address.split('@')[0]?.toLowerCase() ?? '';
  return (PEER_USERS as readonly string[]).includes(local);
}

function optionsFor(kind: Exclude<PeerKind, 'disconnect'>, timers: Set<NodeJS.Timeout>): SMTPServerOptions {
  const base: SMTPServerOptions = {
    banner: `rig ${kind} peer`,
    disabledCommands: ['AUTH', 'STARTTLS'],
    authOptional: true,
    // No reverse lookups: the peer must not ask any resolver about its clients.
    disableReverseLookup: true,
    logger: false,
    // On shutdown, drop sessions still open (a tarpitted client) after half a second.
    closeTimeout: 500,
    onData(stream, _session, callback) {
      stream.resume();
      callback(smtpError(554, '5.7.1 This rig accepts no message data'));
    },
  };
  switch (kind) {
    case 'greet421':
      return { ...base, onConnect: (_s, cb) => cb(smtpError(421, '4.7.0 Too many connections from your host, try again later')) };
    case 'tarpit':
      return {
        ...base,
        onRcptTo(_address, _session, cb) {
          const t = setTimeout(() => {
            timers.delete(t);
            cb();
          }, TARPIT_MS);
          timers.add(t);
        },
      };
    case 'secondRcpt452':
      return {
        ...base,
        onRcptTo(address, session: SMTPServerSession, cb) {
          if (session.envelope.rcptTo.length >= 1) return cb(smtpError(452, '4.5.3 Too many recipients'));
          if (isKnownUser(address.address)) return cb();
          return cb(smtpError(550, `5.1.1 <${address.address}>: Recipient address rejected: User unknown`));
        },
      };
    case 'blocklist':
      return {
        ...base,
        onRcptTo: (_a, session, cb) =>
          cb(smtpError(554, `5.7.1 Service unavailable; Client host [${session.remoteAddress}] blocked using zen.spamhaus.org`)),
      };
    case 'acceptAll':
      return { ...base, onRcptTo: (_a, _s, cb) => cb() };
  }
}

/** A raw peer that greets, answers EHLO and MAIL, and hangs up on the first RCPT. */
function disconnectPeer(sockets: Set<net.Socket>): net.Server {
  return net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.setEncoding('latin1');
    socket.write('220 rig disconnect peer ESMTP\r\n');
    let buffer = '';
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl).trim().toUpperCase();
        buffer = buffer.slice(nl + 1);
        if (line.startsWith('EHLO') || line.startsWith('HELO')) socket.write('250-rig\r\n250 PIPELINING\r\n');
        else if (line.startsWith('MAIL')) socket.write('250 2.1.0 Ok\r\n');
        else if (line.startsWith('RCPT')) return void socket.destroy();
        else if (line.startsWith('QUIT')) return void socket.end('221 2.0.0 Bye\r\n');
        else socket.write('250 2.0.0 Ok\r\n');
      }
    });
    socket.on('error', () => socket.destroy());
  });
}

/** Starts one peer on `address:port`. */
export async function startPeer(kind: PeerKind, address: string, port: number): Promise<Peer> {
  const timers = new Set<NodeJS.Timeout>();
  if (kind === 'disconnect') {
    const sockets = new Set<net.Socket>();
    const server = disconnectPeer(sockets);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, address, () => resolve());
    });
    return {
      close: () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          for (const s of sockets) s.destroy();
        }),
    };
  }
  const server = new SMTPServer(optionsFor(kind, timers));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, address, () => resolve());
  });
  server.on('error', () => {
    /* a client that vanished mid-session is not the rig's problem */
  });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        server.close(() => resolve());
      }),
  };
}
