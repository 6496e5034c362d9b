import net from 'node:net';

/** Relays sit at these octets, one per benchmark MX host (`.20`–`.23` → `.60`–`.63`). */
export const LATENCY_RELAY_OFFSET = 40;

/**
 * A TCP relay that holds every chunk for `delayMs` in each direction before passing it
 * on: a stand-in for the network between a verifier and a remote MX (round trip =
 * 2 × delay). Only the benchmark's optional `--rtt` run uses it; order is kept because
 * every chunk waits the same time.
 */
export async function startLatencyRelay(listen: string, target: string, port: number, delayMs: number): Promise<{ close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const track = (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
  };
  const later = (fn: () => void) => setTimeout(fn, delayMs);
  const server = net.createServer((client) => {
    track(client);
    const upstream = net.connect({ host: target, port });
    track(upstream);
    client.on('data', (b) => later(() => upstream.writable && upstream.write(b)));
    upstream.on('data', (b) => later(() => client.writable && client.write(b)));
    client.on('end', () => later(() => upstream.end()));
    upstream.on('end', () => later(() => client.end()));
    client.on('close', () => later(() => upstream.destroy()));
    upstream.on('close', () => later(() => client.destroy()));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, listen, () => resolve());
  });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}
