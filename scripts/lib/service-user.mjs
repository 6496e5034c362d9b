// Least privilege for `npm start` run as root (issue 21): the services run as the system user
// `mailconv`, which owns their data folders; the conversion engines run as `mailconv-engine`,
// which owns nothing. `mailconv` is in the group `mailconv-engine` (folders and inputs are
// shared with the engines through it) and a sudo rule lets it run commands as
// `mailconv-engine` and as no one else. Every step checks first, so a second start changes
// nothing. Nothing here runs when `npm start` is run by an ordinary user.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { log, ROOT, run } from './ensure.mjs';

export const SERVICE_USER = 'mailconv';
export const ENGINE_USER = 'mailconv-engine';
const SUDOERS = '/etc/sudoers.d/mailconv';
const SUDOERS_TEXT = `# Written by mailconv's scripts/lib/service-user.mjs: the conversion service (${SERVICE_USER})
# runs its engines as ${ENGINE_USER}, and may run nothing as any other user.
Defaults:${SERVICE_USER} !use_pty, !syslog, !pam_session, !lecture, env_reset
${SERVICE_USER} ALL=(${ENGINE_USER}:${ENGINE_USER}) NOPASSWD: ALL
`;

/** uid and gid of a user, or null. */
export function userIds(name) {
  const r = spawnSync('getent', ['passwd', name], { encoding: 'utf8' });
  if (r.status !== 0) return null;
  const f = r.stdout.trim().split(':');
  return { uid: Number(f[2]), gid: Number(f[3]) };
}

function ensureGroup(name) {
  if (spawnSync('getent', ['group', name]).status !== 0) run('groupadd', ['--system', name]);
}

function ensureUser(name, group, extraGroups = []) {
  if (!userIds(name)) {
    log(`creating the system user ${name}`);
    run('useradd', ['--system', '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', '--gid', group, ...(extraGroups.length ? ['--groups', extraGroups.join(',')] : []), name]);
    return;
  }
  const groups = spawnSync('id', ['-nG', name], { encoding: 'utf8' }).stdout.trim().split(/\s+/);
  for (const g of extraGroups) if (!groups.includes(g)) run('usermod', ['--append', '--groups', g, name]);
}

function ensureSudoRule() {
  if (existsSync(SUDOERS) && readFileSync(SUDOERS, 'utf8') === SUDOERS_TEXT) return;
  const draft = `${SUDOERS}.new`;
  writeFileSync(draft, SUDOERS_TEXT, { mode: 0o440 });
  // visudo checks the syntax before the rule is put in place: a broken file would lock sudo.
  run('visudo', ['-cqf', draft]);
  run('mv', ['-f', draft, SUDOERS]);
}

/** The data folders the services write, as their settings name them (defaults under data/). */
export function dataFolders(env = process.env) {
  const at = (value, fallback) => resolve(ROOT, value || fallback);
  const folders = [at(env.EMAIL_DATA_DIR, 'data/email'), at(env.CONVERT_DATA_DIR, 'data/convert')];
  if (env.CONVERT_STORAGE_DIR) folders.push(at(env.CONVERT_STORAGE_DIR, ''));
  return folders;
}

/**
 * As root: makes the users, the sudo rule and the data folders (owned by `mailconv`).
 * Answers what the services are then started as. Not root: answers null (they run as the caller).
 */
export function ensureServiceUsers(env = process.env) {
  if (process.getuid?.() !== 0) return null;
  ensureGroup(ENGINE_USER);
  ensureGroup(SERVICE_USER);
  ensureUser(ENGINE_USER, ENGINE_USER);
  ensureUser(SERVICE_USER, SERVICE_USER, [ENGINE_USER]);
  ensureSudoRule();
  const service = userIds(SERVICE_USER);
  for (const dir of dataFolders(env)) {
    // Folders made on the way (data/) stay passable (0755): the service user must reach its own below.
    mkdirSync(dirname(dir), { recursive: true, mode: 0o755 });
    mkdirSync(dir, { recursive: true, mode: 0o750 });
    // Only what is not the service's yet (a first start as root, files of an older version):
    // the owner changes, groups stay (uploads are shared with the engines' group).
    run('find', [dir, '-xdev', '!', '-user', SERVICE_USER, '-exec', 'chown', '--no-dereference', SERVICE_USER, '{}', '+']);
  }
  return { user: SERVICE_USER, engineUser: ENGINE_USER, ...service };
}

/** The command prefix that runs a program as the service user, with no capabilities kept. */
export function asServiceUser(drop) {
  return drop ? ['/usr/bin/setpriv', `--reuid=${drop.uid}`, `--regid=${drop.gid}`, '--init-groups', '--inh-caps=-all', '--'] : [];
}

