import net from 'node:net';

/** Login the rig's SOCKS5 proxy expects (RFC 1929). */
export const SOCKS_USER = 'rig';
export const SOCKS_PASSWORD = 'rig-secret';
export const SOCKS_PORT = 1080;

/**
 * A minimal SOCKS5 proxy (RFC 1928 CONNECT, username/password required) for the prober's
 * proxy support. It only ever connects to addresses of the rig's own /24 and answers
 * "not allowed by ruleset" to anything else, so it cannot be used to leave the rig.
 */
export async function startSocks5(address: string, subnet: string): Promise<{ close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    let buffer = Buffer.alloc(0);
    let step: 'greeting' | 'auth' | 'request' = 'greeting';
    const onData = (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      if (step === 'greeting') {
        if (buffer.length < 2 || buffer.length < 2 + (buffer[1] ?? 0)) return;
        const methods = buffer.subarray(2, 2 + (buffer[1] ?? 0));
        buffer = buffer.subarray(2 + (buffer[1] ?? 0));
        if (!methods.includes(0x02)) return void client.end(Buffer.from([0x05, 0xff]));
        client.write(Buffer.from([0x05, 0x02]));
        step = 'auth';
      }
      if (step === 'auth') {
        const ulen = buffer[1] ?? 0;
        const plen = buffer[2 + ulen];
        if (plen === undefined || buffer.length < 3 + ulen + plen) return;
        const user = buffer.subarray(2, 2 + ulen).toString();
        const pass = buffer.subarray(3 + ulen, 3 + ulen + plen).toString();
        buffer = buffer.subarray(3 + ulen + plen);
        if (user !== SOCKS_USER || pass !== SOCKS_PASSWORD) return void client.end(Buffer.from([0x01, 0x01]));
        client.write(Buffer.from([0x01, 0x00]));
        step = 'request';
      }
      if (step === 'request') {
        if (buffer.length < 10) return;
        const reply = (code: number) => Buffer.from([0x05, code, 0x00, 0x01, 0, 0, 0, 0, 0, 0]);
        if (buffer[1] !== 0x01 || buffer[3] !== 0x01) return void client.end(reply(0x08));
        const target = [...buffer.subarray(4, 8)].join('.');
        const port = buffer.readUInt16BE(8);
        buffer = buffer.subarray(10);
        if (!target.startsWith(`${subnet}.`)) return void client.end(reply(0x02));
        client.off('data', onData);
        client.pause();
        const upstream = net.connect({ host: target, port, localAddress: address });
        sockets.add(upstream);
        upstream.on('close', () => sockets.delete(upstream));
        upstream.once('connect', () => {
          client.write(reply(0x00));
          if (buffer.length > 0) upstream.write(buffer);
          client.pipe(upstream);
          upstream.pipe(client);
          client.resume();
        });
        upstream.on('error', (e: NodeJS.ErrnoException) => {
          if (!client.destroyed) client.end(reply(e.code === 'ECONNREFUSED' ? 0x05 : 0x04));
        });
        client.on('close', () => upstream.destroy());
      }
    };
    client.on('data', onData);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(SOCKS_PORT, address, () => resolve());
  });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}
