import { connect, createServer, type Server, type Socket } from 'node:net';

/** A TCP relay of a test's own on loopback, in front of a server it can cut off and restore. */
export interface TcpRelay {
  readonly port: number;
  /** `url` with its host and port replaced by the relay's. */
  via(url: string): string;
  /** Cuts every connection through the relay, both sides, as a dead network path would. */
  cut(): void;
  /** While down, new connections are accepted and dropped at once (reset); up again, relayed. */
  setDown(down: boolean): void;
  close(): Promise<void>;
}

/** Starts a relay on 127.0.0.1 to `host:port` (loopback targets only: the tests never leave the machine). */
export async function startTcpRelay(host: string, port: number): Promise<TcpRelay> {
  if (!['127.0.0.1', 'localhost', '::1'].includes(host)) throw new Error(`the relay only reaches loopback, not ${host}`);
  const sockets = new Set<Socket>();
  let down = false;
  const cut = () => {
    for (const s of sockets) s.destroy();
    sockets.clear();
  };
  const server: Server = createServer((client) => {
    if (down) {
      client.resetAndDestroy();
      return;
    }
    const upstream = connect(port, host === 'localhost' ? '127.0.0.1' : host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const relayPort = (server.address() as { port: number }).port;
  return {
    port: relayPort,
    via(url) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(relayPort);
      return u.toString();
    },
    cut,
    setDown(value) {
      down = value;
      if (value) cut();
    },
    async close() {
      cut();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
