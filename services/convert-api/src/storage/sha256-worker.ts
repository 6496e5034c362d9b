/**
 * The hashing thread of {@link OffThreadSha256}: SHA-256 of many streams at once, each by its
 * id, reading blocks of the stream's shared memory; every update is acknowledged (the slot
 * may then be filled again) and a digest answered on request.
 */
import { createHash, type Hash } from 'node:crypto';
import { parentPort } from 'node:worker_threads';
import type { HashReply, HashRequest } from './off-thread-hash.js';

const streams = new Map<number, { hash: Hash; memory: SharedArrayBuffer }>();
const port = parentPort!;

port.on('message', (m: HashRequest) => {
  let reply: HashReply;
  if (m.op === 'open') {
    streams.set(m.id, { hash: createHash('sha256'), memory: m.memory });
    return;
  }
  const stream = streams.get(m.id);
  if (m.op === 'drop') {
    streams.delete(m.id);
    return;
  }
  if (!stream) {
    // Opened on a thread that has since stopped: its bytes so far were never hashed here.
    reply = { id: m.id, op: 'unknown' };
  } else if (m.op === 'update') {
    stream.hash.update(new Uint8Array(stream.memory, m.offset, m.length));
    reply = { id: m.id, op: 'updated' };
  } else {
    streams.delete(m.id);
    reply = { id: m.id, op: 'digest', hex: stream.hash.digest('hex') };
  }
  port.postMessage(reply);
});
