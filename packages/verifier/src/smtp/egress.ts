import { isIP } from 'node:net';
import { SmtpConfigError } from './types.js';
import type { Socks5Proxy } from './socks5.js';

/**
 * A way out to MX hosts (issue 23): straight from this host, from one of its local
 * addresses, or through a SOCKS5 proxy — each with the EHLO name its address's reverse DNS
 * names, when it is not the prober's own.
 */
export interface SmtpEgress {
  /** For metrics and logs: `direct`, `source:203.0.113.5`, `socks5://proxy.example:1080` (never a password). */
  readonly name: string;
  readonly proxy?: Socks5Proxy;
  /** Local address to connect from (a host with several addresses). */
  readonly localAddress?: string;
  /** EHLO name through this egress (else the prober's `helo`). */
  readonly helo?: string;
  /**
   * The address mail servers see this egress come from, when known without a connection:
   * a source address, or a proxy's `?address=` (its public side cannot be seen from here).
   * The self-check's FCrDNS and block-list checks are about this address.
   */
  readonly address?: string;
}

const HOSTNAME = /^(?=.{1,253}$)[a-z0-9-]{1,63}(\.[a-z0-9-]{1,63})+$/i;

/**
 * `EMAIL_SMTP_PROXIES`: comma-separated `socks5://[user:password@]host:port[?helo=name][&address=ip]`
 * (`address`: the proxy's public egress address, for the self-check).
 * Throws {@link SmtpConfigError} naming the bad item (its password never shown).
 */
export function parseSmtpProxies(value: string): SmtpEgress[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((item) => {
      let url: URL;
      try {
        url = new URL(item);
      } catch {
        throw new SmtpConfigError(`EMAIL_SMTP_PROXIES: an item is not a URL (socks5://[user:password@]host:port[?helo=name])`);
      }
      const shown = `socks5://${url.host}`;
      if (url.protocol !== 'socks5:') throw new SmtpConfigError(`EMAIL_SMTP_PROXIES: ${shown}: only socks5:// proxies are supported`);
      const port = Number(url.port);
      if (!url.hostname || !Number.isInteger(port) || port < 1) throw new SmtpConfigError(`EMAIL_SMTP_PROXIES: ${shown}: needs a host and a port`);
      const helo = url.searchParams.get('helo') ?? undefined;
      if (helo !== undefined && !HOSTNAME.test(helo)) throw new SmtpConfigError(`EMAIL_SMTP_PROXIES: ${shown}: helo must be a fully qualified host name`);
      const address = url.searchParams.get('address') ?? undefined;
      if (address !== undefined && !isIP(address)) throw new SmtpConfigError(`EMAIL_SMTP_PROXIES: ${shown}: address must be an IP address (the proxy's public egress address)`);
      const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
      const proxy: Socks5Proxy = {
        host,
        port,
        ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
        ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
      };
      return { name: shown, proxy, ...(helo ? { helo } : {}), ...(address ? { address } : {}) };
    });
}

/** `EMAIL_SMTP_SOURCE_ADDRESSES`: comma-separated local addresses, each `address` or `address=helo.name`. */
export function parseSourceAddresses(value: string): SmtpEgress[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((item) => {
      const [address = '', helo] = item.split('=');
      if (!isIP(address)) throw new SmtpConfigError(`EMAIL_SMTP_SOURCE_ADDRESSES: "${address}" is not an IP address`);
      if (helo !== undefined && !HOSTNAME.test(helo)) throw new SmtpConfigError(`EMAIL_SMTP_SOURCE_ADDRESSES: ${address}: the name after = must be a fully qualified host name`);
      return { name: `source:${address}`, localAddress: address, address, ...(helo ? { helo } : {}) };
    });
}

/** What happened on an egress, for metrics. */
export type EgressEvent = 'session' | 'failed' | 'refused' | 'timeout' | 'blocklisted';

/** An egress's state, as `/readyz` and the metrics show it. */
export interface EgressState {
  readonly name: string;
  readonly healthy: boolean;
  /** While out: when it is tried again (ms since the epoch). */
  readonly retryAt: number | null;
  readonly counts: Readonly<Record<EgressEvent, number>>;
}

/** First wait after an egress fails; doubled each time it fails again, up to {@link MAX_COOLDOWN_MS}. */
export const EGRESS_COOLDOWN_MS = 30_000;
export const MAX_COOLDOWN_MS = 10 * 60_000;

interface Slot {
  readonly egress: SmtpEgress;
  failures: number;
  retryAt: number;
  counts: Record<EgressEvent, number>;
}

/**
 * The egresses of a prober (shared by its instances), with their health. `pick` keeps a
 * provider on one egress (a stable hash of its key over the healthy ones), so one
 * provider sees few source addresses; an egress that fails is taken out, doubling its
 * wait each time, and tried again after it; with every egress out, the one due soonest is
 * tried (probing never stops for good).
 */
export class EgressPool {
  private readonly slots: Slot[];

  constructor(
    egresses: readonly SmtpEgress[],
    private readonly onEvent?: (egress: string, event: EgressEvent) => void,
    private readonly now: () => number = Date.now,
  ) {
    if (egresses.length === 0) throw new SmtpConfigError('at least one egress is needed');
    this.slots = egresses.map((egress) => ({ egress, failures: 0, retryAt: 0, counts: { session: 0, failed: 0, refused: 0, timeout: 0, blocklisted: 0 } }));
  }

  get size(): number {
    return this.slots.length;
  }

  /** The egresses, in configured order (the self-check goes through each). */
  list(): SmtpEgress[] {
    return this.slots.map((s) => s.egress);
  }

  /** The egress for `key` (a provider, else an MX host), not one of `tried`; null when every one was tried. */
  pick(key: string, tried: ReadonlySet<string> = new Set()): SmtpEgress | null {
    const open = this.slots.filter((s) => !tried.has(s.egress.name));
    if (open.length === 0) return null;
    const now = this.now();
    const healthy = open.filter((s) => s.retryAt <= now);
    if (healthy.length === 0) return open.reduce((a, b) => (b.retryAt < a.retryAt ? b : a)).egress;
    return (healthy[hash(key) % healthy.length] as Slot).egress;
  }

  /** The egress carried a session: it is healthy again. */
  succeeded(egress: SmtpEgress): void {
    const slot = this.slot(egress);
    slot.failures = 0;
    slot.retryAt = 0;
    this.count(slot, 'session');
  }

  /** The egress itself failed (its proxy, its local address): out until its wait is over. */
  failed(egress: SmtpEgress): void {
    const slot = this.slot(egress);
    slot.failures++;
    slot.retryAt = this.now() + Math.min(MAX_COOLDOWN_MS, EGRESS_COOLDOWN_MS * 2 ** (slot.failures - 1));
    this.count(slot, 'failed');
  }

  /** A server's answer through the egress: refused at the greeting, timed out, or a block-list reply. */
  noted(egress: SmtpEgress, event: 'refused' | 'timeout' | 'blocklisted'): void {
    this.count(this.slot(egress), event);
  }

  states(): EgressState[] {
    const now = this.now();
    return this.slots.map((s) => ({ name: s.egress.name, healthy: s.retryAt <= now, retryAt: s.retryAt > now ? s.retryAt : null, counts: { ...s.counts } }));
  }

  private slot(egress: SmtpEgress): Slot {
    const slot = this.slots.find((s) => s.egress === egress || s.egress.name === egress.name);
    if (!slot) throw new Error(`unknown egress ${egress.name}`);
    return slot;
  }

  private count(slot: Slot, event: EgressEvent): void {
    slot.counts[event]++;
    this.onEvent?.(slot.egress.name, event);
  }
}

/** FNV-1a: a stable spread of keys over egresses. */
function hash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
