import dgram from 'node:dgram';

/**
 * Two deliberately broken resolvers for the DNS failure cases: one answers every query
 * with SERVFAIL, the other swallows every query (a resolver that has gone silent). dnsmasq
 * forwards `servfail.test` and `silent.test` to them, so the failures come through a real
 * DNS server, as they would in production.
 */
export async function startBrokenResolver(address: string, mode: 'servfail' | 'silent'): Promise<{ close(): Promise<void> }> {
  const socket = dgram.createSocket('udp4');
  socket.on('message', (msg, rinfo) => {
    if (mode === 'silent' || msg.length < 12) return;
    // Same id and question; QR=1, RD copied, RA=1, RCODE=2 (SERVFAIL); no answers.
    const reply = Buffer.from(msg);
    reply[2] = 0x80 | ((msg[2] ?? 0) & 0x01);
    reply[3] = 0x80 | 0x02;
    reply.writeUInt16BE(0, 6);
    reply.writeUInt16BE(0, 8);
    reply.writeUInt16BE(0, 10);
    // Keep only the header and the question section (drop any EDNS OPT record).
    let end = 12;
    while (end < reply.length && reply[end] !== 0) end += (reply[end] ?? 0) + 1;
    end += 5;
    socket.send(reply.subarray(0, Math.min(end, reply.length)), rinfo.port, rinfo.address);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(53, address, () => resolve());
  });
  return { close: () => new Promise<void>((resolve) => socket.close(() => resolve())) };
}
