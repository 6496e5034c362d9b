import net from 'node:net';

/** One connection a {@link CountingRelay} passed on: when it opened and closed, and the RCPT commands the client sent. */
export interface RelayedConnection {
  openedAt: number;
  closedAt: number | null;
  rcpts: number;
}

export interface CountingRelay {
  /** The port it listens on (at the address it was given). */
  port: number;
  /** Connections in the order they opened. */
  connections: RelayedConnection[];
  /** Most connections open at once. */
  peak: number;
  close(): Promise<void>;
}

/**
 * A TCP relay that watches SMTP sessions from the server's side (issue 23's politeness
 * tests): it listens on `address` at a free port, passes every connection to `address:port`
 * (a rig peer), and records when each opened and closed, how many were open at once and how
 * many `RCPT TO` commands each carried (plaintext sessions: the prober without STARTTLS).
 */
export async function startCountingRelay(address: string, port: number, now: () => number = () => performance.now()): Promise<CountingRelay> {
  const sockets = new Set<net.Socket>();
  let open = 0;
  const relay: CountingRelay = { port: 0, connections: [], peak: 0, close: async () => {} };
  const server = net.createServer((client) => {
    const conn: RelayedConnection = { openedAt: now(), closedAt: null, rcpts: 0 };
    relay.connections.push(conn);
    relay.peak = Math.max(relay.peak, ++open);
    const upstream = net.connect({ host: address, port });
    let tail = '';
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => s.destroy());
    }
    let closed = false;
    const done = () => {
      if (closed) return;
      closed = true;
      conn.closedAt = now();
      open--;
      client.destroy();
      upstream.destroy();
    };
    client.on('close', done);
    upstream.on('close', done);
    client.on('data', (b) => {
      const lines = (tail + b.toString('latin1')).split('\r\n');
      tail = lines.pop() ?? '';
      conn.rcpts += lines.filter((l) => /^RCPT TO:/i.test(l)).length;
    });
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, address, () => resolve());
  });
  relay.port = (server.address() as net.AddressInfo).port;
  relay.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    });
  return relay;
}
