import net from 'node:net';
import tls from 'node:tls';
import { ioTimeout, type IoTimeout } from './io-timeout.js';
import { parseReply } from './reply-classify.js';
import { Socks5Error, connectViaSocks5, type Socks5Proxy } from './socks5.js';
import type { SmtpReply } from './types.js';

/** Why a session could not go on. `refused` carries the server's reply (greeting or EHLO). */
export type SessionFailureKind =
  | 'connect_refused'
  | 'connect_timeout'
  | 'command_timeout'
  | 'overall_timeout'
  | 'connection_lost'
  | 'tls_failed'
  | 'proxy_failed'
  /** The local address to connect from could not be used (not this host's, in use). */
  | 'egress_failed'
  | 'protocol';

export class SessionFailure extends Error {
  constructor(
    readonly kind: SessionFailureKind,
    message: string,
  ) {
    super(message);
  }
}

/** The server answered the greeting or EHLO/HELO with a refusal. */
export class SessionRefused extends Error {
  constructor(readonly reply: SmtpReply) {
    super(`${reply.code} ${reply.enhanced ?? ''} ${reply.text}`.trim());
  }
}

export interface SessionOptions {
  address: string;
  port: number;
  /** MX host name, used as TLS SNI. */
  hostname: string;
  helo: string;
  connectTimeoutMs: number;
  commandTimeoutMs: number;
  /** Absolute time (ms, `Date.now`) after which every wait fails with `overall_timeout`. */
  deadline: number;
  /** Upgrade with STARTTLS when the server offers it. */
  starttls: boolean;
  /** A TLS session from an earlier connection to this host, to resume. */
  tlsSession?: Buffer | undefined;
  /** Reach the MX through this SOCKS5 proxy. */
  proxy?: Socks5Proxy | undefined;
  /** Connect from this local address (an egress of a host with several). */
  localAddress?: string | undefined;
}

const MAX_LINE = 4096;

// One TLS context for every session: building one per connection re-parses the CA store
// each time, which costs more CPU than the handshake. Certificates are not verified (see
// upgrade()), so no CA list is needed.
let sharedContext: tls.SecureContext | null = null;
function secureContext(): tls.SecureContext {
  sharedContext ??= tls.createSecureContext({ minVersion: 'TLSv1.2' });
  return sharedContext;
}
const MAX_LINES = 200;

/**
 * One SMTP client session over `node:net`/`node:tls`, only as much SMTP as a verifier
 * needs: greeting, EHLO (HELO fallback), STARTTLS, then MAIL/RCPT/RSET exchanges, with
 * RFC 2920 pipelining when offered. It never sends DATA. Every reply is read and returned
 * whole (code, enhanced code, text); every wait has a time-out.
 */
export class SmtpSession {
  greeting: SmtpReply | null = null;
  extensions = new Set<string>();
  tls = false;
  /** TLS session data to resume the next connection with, when the server handed one out. */
  tlsSessionData: Buffer | null = null;
  private socket: net.Socket;
  private buffer = '';
  private lines: string[] = [];
  private readonly replies: SmtpReply[] = [];
  private waiter: { resolve: (r: SmtpReply) => void; reject: (e: Error) => void; timer: IoTimeout } | null = null;
  private failure: SessionFailure | null = null;
  private readonly onData = (chunk: string) => this.receive(chunk);

  private constructor(
    socket: net.Socket,
    private readonly options: SessionOptions,
  ) {
    this.socket = socket;
    this.attach(socket);
  }

  /** Connects, reads the greeting, says EHLO and upgrades to TLS when offered. */
  static async open(options: SessionOptions): Promise<SmtpSession> {
    const socket = await connect(options);
    const session = new SmtpSession(socket, options);
    try {
      const greeting = await session.read();
      session.greeting = greeting;
      if (greeting.code !== 220) throw new SessionRefused(greeting);
      await session.hello();
      if (options.starttls && session.extensions.has('STARTTLS')) {
        const reply = await session.command('STARTTLS');
        if (reply.code === 220) {
          await session.upgrade();
          await session.hello();
        }
      }
      return session;
    } catch (err) {
      session.destroy();
      throw err;
    }
  }

  /** This end's address of the connection (through a proxy: the address the proxy was reached from). */
  get localAddress(): string | null {
    return this.socket.localAddress ?? null;
  }

  /** Whether the server accepts pipelined MAIL/RCPT/RSET groups. */
  get pipelining(): boolean {
    return this.extensions.has('PIPELINING');
  }

  /**
   * Whether the session can take another exchange: not failed, not closed, and no reply
   * waiting that nobody asked for (a server that closes an idle session says 421 first).
   */
  get usable(): boolean {
    return !this.failure && !this.socket.destroyed && this.replies.length === 0 && this.lines.length === 0 && this.buffer === '';
  }

  /** Sets the absolute time after which every wait fails with `overall_timeout` (per use of a reused session). */
  setDeadline(deadline: number): void {
    this.options.deadline = deadline;
  }

  /** A parked session must not keep the process alive; a session in use must. */
  hold(inUse: boolean): void {
    if (inUse) this.socket.ref();
    else this.socket.unref();
  }

  /**
   * Sends `commands` (pipelined when offered, one by one otherwise) and collects their
   * replies in order, one per command. On a failure the replies read so far are returned
   * with the failure. Replies that cannot be the answers to these commands — one waiting
   * before the commands were sent, or one more than the commands asked for — return no
   * reply at all with a `protocol` failure: matching by position would give a recipient
   * another command's answer.
   */
  async exchange(commands: readonly string[]): Promise<{ replies: SmtpReply[]; failure: SessionFailure | null }> {
    const replies: SmtpReply[] = [];
    if (this.replies.length > 0) return { replies, failure: this.unmatched('a reply arrived before the commands were sent') };
    try {
      if (this.pipelining) {
        this.write(commands.map((c) => `${c}\r\n`).join(''));
        for (let i = 0; i < commands.length; i++) replies.push(await this.read());
      } else {
        for (const c of commands) replies.push(await this.command(c));
      }
      if (this.replies.length > 0) return { replies: [], failure: this.unmatched('more replies than commands') };
      return { replies, failure: null };
    } catch (err) {
      if (err instanceof SessionFailure) return { replies, failure: err };
      throw err;
    }
  }

  /** Ends the session on replies that do not match the commands, and says so. */
  unmatched(message: string): SessionFailure {
    this.protocolError(message);
    return this.failure ?? new SessionFailure('protocol', message);
  }

  /** Says QUIT without waiting for the answer, and lets the socket go. */
  quit(): void {
    if (this.failure || this.socket.destroyed) return this.destroy();
    this.failure = new SessionFailure('connection_lost', 'session closed');
    this.socket.end('QUIT\r\n');
    setTimeout(() => this.socket.destroy(), 1000).unref();
  }

  /** Calls `fn` once the connection has closed (at once if it has). */
  whenClosed(fn: () => void): void {
    if (this.socket.closed) fn();
    else this.socket.once('close', fn);
  }

  destroy(): void {
    this.failure ??= new SessionFailure('connection_lost', 'session closed');
    this.socket.destroy();
  }

  private async hello(): Promise<void> {
    let reply = await this.command(`EHLO ${this.options.helo}`);
    this.extensions = new Set();
    if (reply.code !== 250) {
      reply = await this.command(`HELO ${this.options.helo}`);
      if (reply.code !== 250) throw new SessionRefused(reply);
      return;
    }
    // First line is the server's name; the rest are extension keywords.
    for (const line of reply.text.split('\n').slice(1)) {
      const keyword = line.trim().split(/\s+/)[0]?.toUpperCase();
      if (keyword) this.extensions.add(keyword);
    }
  }

  private async upgrade(): Promise<void> {
    const plain = this.socket;
    plain.off('data', this.onData);
    const servername = net.isIP(this.options.hostname) ? undefined : this.options.hostname;
    // Opportunistic TLS (RFC 7435): MX certificates are checked by nobody in SMTP-to-MX
    // delivery, and a verifier must see what a sending MTA sees.
    const secure = tls.connect({ socket: plain, servername, rejectUnauthorized: false, secureContext: secureContext(), session: this.options.tlsSession });
    secure.on('session', (data: Buffer) => (this.tlsSessionData = data));
    await new Promise<void>((resolve, reject) => {
      const timer = ioTimeout(() => reject(new SessionFailure('tls_failed', 'TLS handshake timed out')), this.timeoutMs());
      secure.once('secureConnect', () => {
        timer.cancel();
        resolve();
      });
      secure.once('error', (e) => {
        timer.cancel();
        reject(new SessionFailure('tls_failed', `TLS handshake failed: ${e.message}`));
      });
    });
    this.socket = secure;
    this.attach(secure);
    this.tls = true;
  }

  private attach(socket: net.Socket): void {
    socket.setEncoding('utf8');
    socket.on('data', this.onData);
    socket.on('error', (e: Error) => this.fail(new SessionFailure('connection_lost', e.message)));
    socket.on('close', () => this.fail(new SessionFailure('connection_lost', 'connection closed by the server')));
  }

  private command(line: string): Promise<SmtpReply> {
    this.write(`${line}\r\n`);
    return this.read();
  }

  private write(data: string): void {
    if (this.failure) return;
    this.socket.write(data);
  }

  private timeoutMs(): number {
    return Math.max(1, Math.min(this.options.commandTimeoutMs, this.options.deadline - Date.now()));
  }

  private read(): Promise<SmtpReply> {
    const ready = this.replies.shift();
    if (ready) return Promise.resolve(ready);
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      const overall = this.options.deadline - Date.now() <= this.options.commandTimeoutMs;
      const timer = ioTimeout(() => {
        const kind = overall ? 'overall_timeout' : 'command_timeout';
        this.fail(new SessionFailure(kind, `no reply within ${overall ? 'the overall time-out' : `${this.options.commandTimeoutMs} ms`}`));
        this.socket.destroy();
      }, this.timeoutMs());
      this.waiter = { resolve, reject, timer };
    });
  }

  private receive(chunk: string): void {
    this.buffer += chunk;
    let nl: number;
    while ((nl = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, nl).replace(/\r$/, '');
      this.buffer = this.buffer.slice(nl + 1);
      if (!/^\d{3}(?:[ -]|$)/.test(line)) return this.protocolError(`unexpected line "${line.slice(0, 80)}"`);
      // RFC 5321 4.2.1: every line of a multi-line reply has the same code. Lines that do
      // not may be two replies run together, and the count of replies would no longer match.
      if (this.lines.length > 0 && line.slice(0, 3) !== this.lines[0]?.slice(0, 3)) return this.protocolError('multi-line reply with mixed codes');
      this.lines.push(line);
      if (this.lines.length > MAX_LINES) return this.protocolError('reply too long');
      if (line.length === 3 || line[3] === ' ') {
        const reply = parseReply(this.lines);
        this.lines = [];
        const w = this.waiter;
        if (w) {
          this.waiter = null;
          w.timer.cancel();
          w.resolve(reply);
        } else {
          this.replies.push(reply);
        }
      }
    }
    if (this.buffer.length > MAX_LINE) this.protocolError('line too long');
  }

  private protocolError(message: string): void {
    this.fail(new SessionFailure('protocol', message));
    this.socket.destroy();
  }

  private fail(failure: SessionFailure): void {
    this.failure ??= failure;
    const w = this.waiter;
    if (w) {
      this.waiter = null;
      w.timer.cancel();
      w.reject(this.failure);
    }
  }
}

async function connect(options: SessionOptions): Promise<net.Socket> {
  if (options.proxy) {
    const limit = Math.max(1, Math.min(options.connectTimeoutMs, options.deadline - Date.now()));
    try {
      return await connectViaSocks5(options.proxy, options.address, options.port, limit);
    } catch (err) {
      if (!(err instanceof Socks5Error)) throw err;
      // A target the proxy could not reach is like a refused port; a broken proxy is not
      // the MX's fault and is reported as such.
      throw new SessionFailure(err.kind === 'target_refused' ? 'connect_refused' : err.kind === 'proxy_unreachable' && /within/.test(err.message) ? 'connect_timeout' : 'proxy_failed', err.message);
    }
  }
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: options.address, port: options.port, ...(options.localAddress ? { localAddress: options.localAddress } : {}) });
    const limit = Math.max(1, Math.min(options.connectTimeoutMs, options.deadline - Date.now()));
    // A refusal that arrived while the loop was stalled is handled before this fires (issue 44):
    // a refused connection is an answer, never "no answer".
    const timer = ioTimeout(() => {
      socket.destroy();
      reject(new SessionFailure('connect_timeout', `no connection to ${options.address}:${options.port} within ${limit} ms`));
    }, limit);
    socket.once('connect', () => {
      timer.cancel();
      socket.removeAllListeners('error');
      resolve(socket);
    });
    socket.once('error', (e: NodeJS.ErrnoException) => {
      timer.cancel();
      socket.destroy();
      // The local address is not this host's (or is taken): the egress failed, not the MX.
      if (options.localAddress && (e.code === 'EADDRNOTAVAIL' || e.code === 'EADDRINUSE' || e.code === 'EINVAL')) {
        reject(new SessionFailure('egress_failed', `cannot connect from ${options.localAddress}: ${e.code}`));
        return;
      }
      reject(new SessionFailure('connect_refused', `${options.address}:${options.port}: ${e.code ?? e.message}`));
    });
  });
}
