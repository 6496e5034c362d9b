// `npm run admin -- <email|convert> <command> [options]`: account and key administration of
// one service, on that service's own database (as the service user when run by root). Setup output goes to stderr so that
// `--json` output on stdout can be parsed.
import { runBuilt, ROOT } from './lib/ensure.mjs';
import { ensureSupportedNode } from './lib/runtime.mjs';
import { existsSync, statSync } from 'node:fs';
import { asServiceUser, dataFolders, SERVICE_USER, userIds } from './lib/service-user.mjs';

await ensureSupportedNode();
const SERVICES = { email: 'email-api', convert: 'convert-api' };
const [service, ...rest] = process.argv.slice(2);
if (!service || !(service in SERVICES)) {
  const asked = ['help', '--help', '-h'].includes(service);
  (asked ? process.stdout : process.stderr).write(
    `Usage: npm run admin -- <email|convert> <command> [options]\n` +
      `  e.g. npm run admin -- email create-account --email you@example.com --plan starter --json\n` +
      `       npm run admin -- convert help\n` +
      (service && !asked ? `\nUnknown service ${JSON.stringify(service)}: use email or convert.\n` : ''),
  );
  process.exit(asked ? 0 : 2);
}
// Run by root on the default database that `npm start` handed to the service user: as that
// user, so that the files SQLite writes stay the service's. Any other database: as the caller.
const ids = process.getuid?.() === 0 ? userIds(SERVICE_USER) : null;
const folder = dataFolders()[service === 'email' ? 0 : 1];
const ownedByService = ids !== null && !process.env[`${service.toUpperCase()}_DATABASE_URL`] && existsSync(folder) && statSync(folder).uid === ids.uid;
const drop = ownedByService ? ids : null;
runBuilt(`services/${SERVICES[service]}/dist/admin.js`, rest, ROOT, asServiceUser(drop));
