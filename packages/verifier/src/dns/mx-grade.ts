import { providerById } from './providers.js';
import type { DnsStatus, MxGrade, MxHost } from './types.js';

/**
 * `checks.mx.grade` per decision 11: A for two or more MX hosts at a recognised major
 * provider, B for two or more MX hosts, C for one, D when mail falls back to the domain's
 * address record (implicit MX), F for none or a null MX. `null` after a DNS error: the
 * routing is unknown, and grading it F would read as "no mail host".
 */
export function mxGrade(status: DnsStatus, hosts: readonly MxHost[]): MxGrade | null {
  switch (status) {
    case 'error':
      return null;
    case 'implicit_mx':
      return 'D';
    case 'mx': {
      if (hosts.length >= 2) {
        const atMajor = hosts.filter((h) => h.provider !== null && providerById(h.provider)?.major === true).length;
        return atMajor >= 2 ? 'A' : 'B';
      }
      return hosts.length === 1 ? 'C' : 'F';
    }
    default:
      return 'F';
  }
}
