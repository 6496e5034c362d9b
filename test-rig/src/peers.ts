import net from 'node:net';
import { SMTPServer, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';
import { PEER_USERS } from './zones.js';

/**
 * Scripted SMTP peers for the behaviours a stock Postfix cannot easily show: a 421 at
 * connect, a tarpit, a dropped connection, a "452 4.5.3" on a second recipient
 * (Microsoft 365 style), a block-list refusal and an accept-everything server (Yahoo
 * style); and, for the pipelining client (issue 16), a server without PIPELINING that
 * hangs up on a pipelined client, one that drops the connection in the middle of a
 * pipelined group, one that cuts a session after a few errors (Postfix's hard error
 * limit, made small), one that answers MAIL twice (every later reply is one place off),
 * and one that holds its RCPT answers until {@link GATE_SESSIONS} sessions are open at
 * once. The first six but the disconnecting one are built on `smtp-server`, the rest are
 * raw sockets (they misbehave at the byte level); all listen on the rig's SMTP port (25
 * unless taken) of their own rig address. None accepts DATA.
 */
export type PeerKind =
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
  | 'gate';

/** RCPT answers the `dropMidPipeline` peer gives in a session before it drops the connection. */
export const DROP_AFTER_RCPTS = 2;
/** Rejected recipients after which the `errorLimit` peer answers 421 and hangs up (Postfix: `smtpd_hard_error_limit`). */
export const PEER_ERROR_LIMIT = 4;
/** Sessions the `gate` peer waits to see open at once before it answers any RCPT; it refuses more than this. */
export const GATE_SESSIONS = 3;
/** How long the `gate` peer waits for them before it answers anyway. */
export const GATE_WAIT_MS = 4000;

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

function optionsFor(kind: 'greet421' | 'tarpit' | 'secondRcpt452' | 'blocklist' | 'acceptAll', timers: Set<NodeJS.Timeout>): SMTPServerOptions {
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

/** What a raw peer's connection knows: its socket, and counters the scripts keep. */
interface Conn {
  socket: net.Socket;
  rcpts: number;
  errors: number;
  /** Pipelining seen: more than one command arrived in one read. */
  pipelined: boolean;
  /** Admitted by the peer's `open` hook (counted as an open session). */
  admitted: boolean;
  /** Commands of this connection waiting for the gate. */
  holding: boolean;
}

/** Answer for a recipient on the raw peers: the known users exist, everyone else does not. */
function rcptReply(line: string): { ok: boolean; reply: string } {
  const m = /<([^>]*)>/.exec(line);
  const address = m?.[1] ?? '';
  return isKnownUser(address) ? { ok: true, reply: '250 2.1.5 Ok' } : { ok: false, reply: `550 5.1.1 <${address}>: Recipient address rejected: User unknown` };
}

/**
 * A raw peer: greets, then hands each command line to `answer`, which writes what it likes
 * (or nothing, or hangs up). `extensions` are the EHLO keywords it offers.
 */
function rawPeer(
  name: string,
  extensions: readonly string[],
  sockets: Set<net.Socket>,
  answer: (conn: Conn, verb: string, line: string) => void,
  hooks: { open?: (conn: Conn) => boolean; close?: (conn: Conn) => void } = {},
): net.Server {
  return net.createServer((socket) => {
    sockets.add(socket);
    const conn: Conn = { socket, rcpts: 0, errors: 0, pipelined: false, admitted: false, holding: false };
    socket.on('close', () => {
      sockets.delete(socket);
      if (conn.admitted) hooks.close?.(conn);
    });
    socket.on('error', () => socket.destroy());
    socket.setEncoding('latin1');
    if (hooks.open && !hooks.open(conn)) return void socket.end('421 4.7.0 Too many connections from your host\r\n');
    conn.admitted = true;
    socket.write(`220 rig ${name} peer ESMTP\r\n`);
    let buffer = '';
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      if ((buffer.match(/\n/g) ?? []).length > 1) conn.pipelined = true;
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0 && !socket.destroyed) {
        const line = buffer.slice(0, nl).replace(/\r$/, '');
        buffer = buffer.slice(nl + 1);
        const verb = line.split(/[\s:]/)[0]?.toUpperCase() ?? '';
        if (verb === 'EHLO') {
          const words = ['rig', ...extensions, 'ENHANCEDSTATUSCODES'];
          socket.write(words.map((w, i) => `250${i === words.length - 1 ? ' ' : '-'}${w}\r\n`).join(''));
        }
        else if (verb === 'HELO') socket.write('250 rig\r\n');
        else if (verb === 'QUIT') socket.end('221 2.0.0 Bye\r\n');
        else answer(conn, verb, line);
      }
    });
  });
}

/** The raw peers' scripts. */
function rawPeerFor(kind: 'lockstep' | 'dropMidPipeline' | 'errorLimit' | 'doubleReply' | 'gate', sockets: Set<net.Socket>, timers: Set<NodeJS.Timeout>): net.Server {
  const plain = (conn: Conn, verb: string, line: string): void => {
    if (verb === 'MAIL') conn.socket.write('250 2.1.0 Ok\r\n');
    else if (verb === 'RSET') conn.socket.write('250 2.0.0 Ok\r\n');
    else if (verb === 'RCPT') {
      conn.rcpts++;
      const { ok, reply } = rcptReply(line);
      if (!ok) conn.errors++;
      conn.socket.write(`${reply}\r\n`);
    } else conn.socket.write('502 5.5.2 Error: command not recognized\r\n');
  };
  switch (kind) {
    case 'lockstep':
      // No PIPELINING offered: a client that sends a command before the last reply
      // breaks RFC 2920 and is cut off, as Postfix does with smtpd_forbid_unauth_pipelining.
      return rawPeer('lockstep', [], sockets, (conn, verb, line) => {
        if (conn.pipelined) return void conn.socket.end('554 5.5.0 Error: SMTP protocol synchronization\r\n');
        plain(conn, verb, line);
      });
    case 'dropMidPipeline':
      // Answers MAIL and the first DROP_AFTER_RCPTS recipients of a session, then sends
      // half of the next reply and drops the connection.
      return rawPeer('drop-mid-pipeline', ['PIPELINING'], sockets, (conn, verb, line) => {
        if (verb === 'RCPT' && conn.rcpts >= DROP_AFTER_RCPTS) {
          conn.socket.write('250 2.1');
          return void conn.socket.destroy();
        }
        plain(conn, verb, line);
      });
    case 'errorLimit':
      // Postfix's hard error limit, made small: once a session has PEER_ERROR_LIMIT
      // errors, the next command is answered 421 and the connection closed.
      return rawPeer('error-limit', ['PIPELINING'], sockets, (conn, verb, line) => {
        if (conn.errors >= PEER_ERROR_LIMIT) return void conn.socket.end('421 4.7.0 rig Error: too many errors\r\n');
        plain(conn, verb, line);
      });
    case 'doubleReply':
      // Answers every MAIL twice: each later reply lands one place off.
      return rawPeer('double-reply', ['PIPELINING'], sockets, (conn, verb, line) => {
        if (verb === 'MAIL') conn.socket.write('250 2.1.0 Ok\r\n');
        plain(conn, verb, line);
      });
    case 'gate': {
      // Holds every RCPT answer until GATE_SESSIONS sessions are open at once (or
      // GATE_WAIT_MS passed since the first held one), and refuses a session beyond that.
      let open = 0;
      let released = false;
      let timer: NodeJS.Timeout | null = null;
      const held: Array<() => void> = [];
      const release = () => {
        if (timer) clearTimeout(timer);
        timer = null;
        released = true;
        for (const h of held.splice(0)) h();
      };
      return rawPeer(
        'gate',
        ['PIPELINING'],
        sockets,
        (conn, verb, line) => {
          // Commands after a held RCPT wait too, so the answers keep their order.
          if (released || (verb !== 'RCPT' && !conn.holding)) return plain(conn, verb, line);
          conn.holding = true;
          if (!timer) {
            const t = setTimeout(() => {
              timers.delete(t);
              release();
            }, GATE_WAIT_MS);
            timers.add(t);
            timer = t;
          }
          held.push(() => {
            conn.holding = false;
            if (!conn.socket.destroyed) plain(conn, verb, line);
          });
        },
        {
          open: () => {
            if (open >= GATE_SESSIONS) return false;
            if (++open === GATE_SESSIONS) setImmediate(release);
            return true;
          },
          close: () => {
            open--;
            // The gate opens again for the next test's sessions once all have gone.
            if (open === 0) released = false;
          },
        },
      );
    }
  }
}

/** Starts one peer on `address:port`. */
export async function startPeer(kind: PeerKind, address: string, port: number): Promise<Peer> {
  const timers = new Set<NodeJS.Timeout>();
  if (kind === 'disconnect' || kind === 'lockstep' || kind === 'dropMidPipeline' || kind === 'errorLimit' || kind === 'doubleReply' || kind === 'gate') {
    const sockets = new Set<net.Socket>();
    const server = kind === 'disconnect' ? disconnectPeer(sockets) : rawPeerFor(kind, sockets, timers);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, address, () => resolve());
    });
    return {
      close: () =>
        new Promise<void>((resolve) => {
          for (const t of timers) clearTimeout(t);
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
