#!/usr/bin/env node
/**
 * `npm run verify -- [options] ADDRESS… | --file PATH`: verifies addresses with the real
 * engine (DNS, optional SMTP probe) and prints one line per address, in input order.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { parseDnsServers } from './dns/dns.check.js';
import { createEngine } from './engine.js';
import { SmtpConfigError } from './smtp/smtp.check.js';
import type { VerificationResult } from './types.js';

const USAGE = `Usage: npm run verify -- [options] ADDRESS…
       npm run verify -- [options] --file PATH        (one address per line; - for stdin)

Options:
  --smtp                 probe the mailbox over SMTP, with the catch-all probe
  --helo NAME            EHLO name for SMTP probes (required with --smtp)
  --from ADDRESS         MAIL FROM for SMTP probes (required with --smtp)
  --smtp-port N          port of the MX hosts (default 25)
  --allow-private        let probes reach loopback/private addresses (labs, tests)
  --restrict-to CIDR,…   probe only addresses inside these networks
  --dns-server HOST:PORT resolver to use (repeatable or comma-separated; default: the system's)
  --concurrency N        addresses verified at the same time (default 32)
  --json                 one VerificationResult (JSON) per line
  -h, --help             this text`;

class UsageError extends Error {}

function options(argv: string[]) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        smtp: { type: 'boolean', default: false },
        helo: { type: 'string' },
        from: { type: 'string' },
        'smtp-port': { type: 'string' },
        'allow-private': { type: 'boolean', default: false },
        'restrict-to': { type: 'string' },
        'dns-server': { type: 'string', multiple: true },
        concurrency: { type: 'string' },
        file: { type: 'string' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const v = parsed.values;
  const int = (name: string, value: string | undefined, fallback: number, max: number) => {
    if (value === undefined) return fallback;
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1 || n > max) throw new UsageError(`--${name} must be a whole number from 1 to ${max}`);
    return n;
  };
  if (!v.help && parsed.positionals.length === 0 && v.file === undefined) throw new UsageError('give at least one address, or --file PATH');
  if (parsed.positionals.length > 0 && v.file !== undefined) throw new UsageError('give addresses or --file, not both');
  let dnsServers: string[] = [];
  try {
    dnsServers = parseDnsServers((v['dns-server'] ?? []).join(','));
  } catch (err) {
    throw new UsageError(`--dns-server: ${(err as Error).message}`);
  }
  if (v.smtp && (!v.helo || !v.from)) throw new UsageError('--smtp needs --helo NAME and --from ADDRESS (a host name and an address of your own)');
  return {
    help: v.help ?? false,
    addresses: parsed.positionals,
    file: v.file,
    json: v.json ?? false,
    concurrency: int('concurrency', v.concurrency, 32, 1000),
    dnsServers,
    smtp: v.smtp
      ? {
          helo: v.helo!,
          from: v.from!,
          port: int('smtp-port', v['smtp-port'], 25, 65535),
          allowPrivate: v['allow-private'] ?? false,
          ...(v['restrict-to'] ? { restrictTo: v['restrict-to'].split(',').map((s) => s.trim()).filter(Boolean) } : {}),
        }
      : null,
  };
}

async function* lines(path: string): AsyncGenerator<string> {
  const input = path === '-' ? process.stdin : createReadStream(path, { encoding: 'utf8' });
  for await (const line of createInterface({ input, crlfDelay: Infinity })) {
    const address = line.trim();
    if (address) yield address;
  }
}

async function* fromArray(items: readonly string[]): AsyncGenerator<string> {
  yield* items;
}

function human(r: VerificationResult): string {
  const extra = [r.reason ?? '', r.suggestion ? `did you mean ${r.suggestion}?` : ''].filter(Boolean).join(' ');
  return `${r.email}\t${r.status}\t${r.score}/${r.grade}${extra ? `\t${extra}` : ''}`;
}

async function main(): Promise<number> {
  let o: ReturnType<typeof options>;
  try {
    o = options(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`verify: ${(err as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (o.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  let engine;
  try {
    engine = createEngine({ dns: { servers: o.dnsServers }, smtp: o.smtp });
  } catch (err) {
    if (err instanceof SmtpConfigError) {
      process.stderr.write(`verify: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  const source = o.file !== undefined ? lines(o.file) : fromArray(o.addresses);
  const progress = o.file !== undefined && process.stderr.isTTY;
  const started = Date.now();
  let done = 0;
  // A window of verifications in flight, printed strictly in input order.
  const window: Array<Promise<VerificationResult>> = [];
  const print = (r: VerificationResult) => {
    process.stdout.write(`${o.json ? JSON.stringify(r) : human(r)}\n`);
    done += 1;
    if (progress && done % 50 === 0) {
      const rate = Math.round((done * 1000) / Math.max(1, Date.now() - started));
      process.stderr.write(`\r${done} verified, ${rate}/s `);
    }
  };
  for await (const address of source) {
    window.push(engine.verifier.verify(address, { smtp: o.smtp !== null, catchAll: o.smtp !== null }));
    if (window.length >= o.concurrency) print(await window.shift()!);
  }
  while (window.length) print(await window.shift()!);
  if (progress) process.stderr.write(`\r${done} verified in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  // Sessions kept open for reuse say QUIT now rather than at their idle time-out.
  engine.prober?.close();
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    const e = err as NodeJS.ErrnoException;
    process.stderr.write(e.code === 'ENOENT' || e.code === 'EACCES' ? `verify: cannot read ${e.path ?? 'the file'} (${e.code})\n` : `verify: ${e.stack ?? String(err)}\n`);
    process.exitCode = 1;
  },
);
