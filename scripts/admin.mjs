// `npm run admin -- <email|convert> <command> [options]`: account and key administration of
// one service, on that service's own database. Setup output goes to stderr so that
// `--json` output on stdout can be parsed.
import { runBuilt } from './lib/ensure.mjs';

const SERVICES = { email: 'email-api', convert: 'convert-api' };
const [service, ...rest] = process.argv.slice(2);
if (!service || !(service in SERVICES)) {
  process.stderr.write(
    `Usage: npm run admin -- <email|convert> <command> [options]\n` +
      `  e.g. npm run admin -- email create-account --email you@example.com --plan starter --json\n` +
      `       npm run admin -- convert help\n` +
      (service ? `\nUnknown service ${JSON.stringify(service)}: use email or convert.\n` : ''),
  );
  process.exit(2);
}
runBuilt(`services/${SERVICES[service]}/dist/admin.js`, rest);
