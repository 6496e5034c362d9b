/**
 * A child process of the quota concurrency test: opens the database on its own
 * connection(s) and fires random charges, reservations and refunds at one account as fast
 * as it can, starting at an agreed instant so that several processes overlap. Prints what
 * succeeded as one JSON line.
 */
import { parseDatabaseUrl } from '../config/settings.js';
import type { CoreTables } from '../db/core-schema.js';
import { openDatabase } from '../db/database.js';
import { QuotaLedger } from '../quota/quota-ledger.js';

interface Args {
  url: string;
  accountId: string;
  limit: number;
  ops: number;
  seed: number;
  startAt: number;
  parallel: number;
}

const args = JSON.parse(process.argv[2] ?? '{}') as Args;
let seed = args.seed;
const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));

const database = openDatabase<CoreTables>(parseDatabaseUrl(args.url, process.cwd()), { maxConnections: args.parallel });
const ledger = new QuotaLedger(database);
const totals = { charged: 0, reserved: 0, refunded: 0, denied: 0, refundDenied: 0 };
const reservations: Array<{ id: string; left: number }> = [];

await new Promise((r) => setTimeout(r, Math.max(0, args.startAt - Date.now())));

async function worker(ops: number): Promise<void> {
  for (let i = 0; i < ops; i++) {
    const roll = rand();
    if (roll < 0.6) {
      const units = int(1, 10);
      const r = await ledger.charge(args.accountId, units, args.limit);
      if (r.ok) totals.charged += units;
      else totals.denied += 1;
    } else if (roll < 0.85 || reservations.length === 0) {
      const units = int(5, 40);
      const r = await ledger.reserve(args.accountId, units, args.limit);
      if (r.ok) {
        totals.reserved += units;
        reservations.push({ id: r.reservationId, left: units });
      } else totals.denied += 1;
    } else {
      const res = reservations[int(0, reservations.length - 1)]!;
      // Sometimes ask for more than is left: the ledger must refuse, not over-refund.
      const units = rand() < 0.2 ? res.left + 1 : int(0, res.left);
      const r = await ledger.refund(res.id, units);
      if (r.ok) {
        totals.refunded += units;
        res.left -= units;
      } else totals.refundDenied += 1;
    }
  }
}

await Promise.all(Array.from({ length: args.parallel }, () => worker(Math.ceil(args.ops / args.parallel))));
await database.close();
process.stdout.write(`${JSON.stringify(totals)}\n`);
