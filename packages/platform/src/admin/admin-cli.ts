import { parseArgs } from 'node:util';
import type { AccountsRepository, AccountRecord } from '../accounts/accounts.repository.js';
import type { BasePlan, PlanCatalog } from '../accounts/plans.js';
import { hashPassword, passwordProblem } from '../dashboard/passwords.js';

/** What the admin CLI needs from a service: its repositories, opened on demand. */
export interface AdminTarget {
  service: string;
  /** Commands of the service's own, handled before this CLI (e.g. the email service's `smtp-check`), for the usage text. */
  moreUsage?: string;
  open(): Promise<{ accounts: AccountsRepository; plans: PlanCatalog<BasePlan>; close(): Promise<void> }>;
}

interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
  /** Reads a secret (the password of set-password): standard input, never the command line. */
  readSecret?: (prompt: string) => Promise<string>;
}

const USAGE = (service: string) => `Usage: npm run admin -- ${service} <command> [options]

Commands:
  create-account --email EMAIL [--plan PLAN] [--key-name NAME] [--json]
      Create an account and its first API key (the key is shown once).
  create-key (--account ID | --email EMAIL) [--name NAME] [--json]
      Create another API key for an account (shown once).
  set-plan (--account ID | --email EMAIL) --plan PLAN [--json]
      Move an account to another plan.
  set-password (--account ID | --email EMAIL) [--password-stdin] [--json]
      Set the account's dashboard password, read from standard input (a prompt on a
      terminal; the first line when piped), never from the command line. Signs out the
      account's dashboard sessions.
  list-accounts [--json]
      List accounts with their plans.
  bootstrap-owner [--email EMAIL] [--json]
      Create the owner account with the top plan if the service has no account yet.`;

class UsageError extends Error {}

const EMAIL_RE = /^[^\s@]+@[^\s@]+$/;

/**
 * Runs one admin command against a service's database. Returns the exit code: 0 done,
 * 1 refused (unknown account, e-mail taken), 2 bad arguments.
 */
export async function runAdminCli(argv: readonly string[], target: AdminTarget, io: Io): Promise<number> {
  const [command, ...rest] = argv;
  if (!command) {
    io.err(USAGE(target.service) + (target.moreUsage ? `\n${target.moreUsage}` : ''));
    return 2;
  }
  if (command === 'help' || command === '--help' || command === '-h') {
    // Asked for: the usage is the answer (stdout, exit 0), so it can be paged or searched.
    io.out(USAGE(target.service) + (target.moreUsage ? `\n${target.moreUsage}` : ''));
    return 0;
  }
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...rest],
      strict: true,
      allowPositionals: false,
      options: {
        email: { type: 'string' },
        plan: { type: 'string' },
        account: { type: 'string' },
        name: { type: 'string' },
        'key-name': { type: 'string' },
        'password-stdin': { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
      },
    }));
  } catch (err) {
    io.err(`${target.service} ${command}: ${(err as Error).message}\n\n${USAGE(target.service)}`);
    return 2;
  }
  const json = values.json === true;
  const { accounts, plans, close } = await target.open();
  try {
    const planOf = (id: string | undefined, fallback: string): string => {
      const plan = id ?? fallback;
      if (!plans.get(plan)) throw new UsageError(`unknown plan ${JSON.stringify(plan)}; plans: ${Object.keys(plans.plans).join(', ')}`);
      return plan;
    };
    const accountOf = async (): Promise<AccountRecord> => {
      if (typeof values.account === 'string') {
        const a = await accounts.getAccount(values.account);
        if (!a) throw new RefusedError(`no account with id ${values.account}`);
        return a;
      }
      if (typeof values.email === 'string') {
        const a = await accounts.findAccountByEmail(values.email);
        if (!a) throw new RefusedError(`no account with e-mail ${values.email}`);
        return a;
      }
      throw new UsageError('give --account ID or --email EMAIL');
    };
    const print = (obj: Record<string, unknown>, text: string) => io.out(json ? JSON.stringify(obj) : text);

    switch (command) {
      case 'create-account':
      case 'bootstrap-owner': {
        const owner = command === 'bootstrap-owner';
        const email = typeof values.email === 'string' ? values.email : owner ? 'owner@localhost' : undefined;
        if (!email) throw new UsageError('--email is required');
        if (!EMAIL_RE.test(email)) throw new UsageError(`not an e-mail address: ${JSON.stringify(email)}`);
        const plan = planOf(typeof values.plan === 'string' ? values.plan : undefined, owner ? plans.ownerPlan : plans.defaultPlan);
        if (owner) {
          const existing = await accounts.countAccounts();
          if (existing > 0) {
            print({ created: false, accounts: existing }, `${target.service}: ${existing} account(s) exist; no owner created.`);
            return 0;
          }
        }
        const keyName = typeof values['key-name'] === 'string' ? values['key-name'] : owner ? 'owner' : 'default';
        const res = await accounts.createAccount({ email, plan, keyName });
        if (!res.ok) throw new RefusedError(`an account with e-mail ${email.toLowerCase()} already exists`);
        const out = { account_id: res.account.id, email: res.account.email, plan: res.account.plan, api_key: res.apiKey };
        print(owner ? { created: true, ...out } : out, `Created ${target.service} account ${out.account_id} (${out.email}, plan ${out.plan}).\nAPI key (shown once): ${out.api_key}`);
        return 0;
      }
      case 'create-key': {
        const account = await accountOf();
        const name = typeof values.name === 'string' ? values.name : 'default';
        const res = await accounts.createKey(account.id, name);
        if (!res) throw new RefusedError(`no account with id ${account.id}`);
        print({ account_id: account.id, key_id: res.key.id, name, api_key: res.apiKey }, `Created key ${res.key.id} for ${account.email}.\nAPI key (shown once): ${res.apiKey}`);
        return 0;
      }
      case 'set-plan': {
        if (typeof values.plan !== 'string') throw new UsageError('--plan is required');
        const plan = planOf(values.plan, '');
        const account = await accountOf();
        await accounts.setPlan(account.id, plan);
        print({ account_id: account.id, email: account.email, plan }, `${account.email} is now on plan ${plan}.`);
        return 0;
      }
      case 'set-password': {
        const account = await accountOf();
        if (!io.readSecret) throw new UsageError('no standard input to read the password from');
        const password = await io.readSecret(`New dashboard password for ${account.email}: `);
        const problem = passwordProblem(password);
        if (problem) throw new RefusedError(problem);
        if (!(await accounts.setPasswordHash(account.id, await hashPassword(password)))) throw new RefusedError(`no account with id ${account.id}`);
        print({ account_id: account.id, email: account.email, password_set: true }, `Dashboard password set for ${account.email}; its dashboard sessions were signed out.`);
        return 0;
      }
      case 'list-accounts': {
        const list = await accounts.listAccounts();
        if (json) io.out(JSON.stringify(list.map((a) => ({ account_id: a.id, email: a.email, plan: a.plan, created_at: a.created_at }))));
        else if (list.length === 0) io.out('No accounts.');
        else for (const a of list) io.out(`${a.id}  ${a.plan.padEnd(10)}  ${a.email}  (created ${a.created_at})`);
        return 0;
      }
      default:
        throw new UsageError(`unknown command ${JSON.stringify(command)}`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`${target.service} ${command}: ${err.message}\n\n${USAGE(target.service)}`);
      return 2;
    }
    if (err instanceof RefusedError) {
      io.err(`${target.service} ${command}: ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
    await close();
  }
}

class RefusedError extends Error {}
