export { startRig, useRig, type RigHandle, type RigInfo } from './rig.js';
export { RIG_ENV } from './config.js';
export { TARPIT_MS } from './peers.js';
export { SOCKS_PASSWORD, SOCKS_USER } from './socks5-server.js';
export * from './zones.js';
export { postfixCpuMs } from './postfix-cpu.js';
