export { startRig, useRig, type RigHandle, type RigInfo } from './rig.js';
export { RIG_ENV } from './config.js';
export { DROP_AFTER_RCPTS, GATE_SESSIONS, GATE_WAIT_MS, PEER_ERROR_LIMIT, TARPIT_MS } from './peers.js';
export { SOCKS_PASSWORD, SOCKS_USER } from './socks5-server.js';
export * from './zones.js';
export { postfixCpuMs } from './postfix-cpu.js';
export { startRateLimitPeer, type RateLimitPeer, type RateLimitPeerOptions, type RateLimitStyle, type PeerSession } from './rate-limit-peer.js';
export { startCountingRelay, type CountingRelay, type RelayedConnection } from './counting-relay.js';
