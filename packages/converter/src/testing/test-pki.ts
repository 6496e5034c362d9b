/**
 * A throw-away PKI for signature tests (issue 25), made with openssl: a CA without AIA, OCSP
 * or CRL addresses, signers issued by it (RSA, EC, already expired), their PKCS#12 files, one
 * without a key, and an NSS database that trusts the CA, for poppler's `pdfsig`. Tests only.
 */
import { spawnSync } from 'node:child_process';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';

/** Paths of the test PKI's files. */
export interface TestPki {
  readonly dir: string;
  readonly caPem: string;
  /** `sql:` NSS database trusting the CA. */
  readonly nssDir: string;
  /** The password of every PKCS#12 file here. */
  readonly password: string;
  /** RSA signer "Jane Signer" with the CA in the file. */
  readonly rsaP12: string;
  /** EC P-256 signer "Erin Signer". */
  readonly ecP12: string;
  /** A certificate whose validity ended yesterday. */
  readonly expiredP12: string;
  /** The certificate alone, no private key. */
  readonly noKeyP12: string;
}

function run(cmd: string, args: string[], cwd: string): void {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr}`);
}

const CONFIG = `[req]
distinguished_name = dn
prompt = no
[dn]
CN = Mailconv Test CA
[ca_ext]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[signer_ext]
basicConstraints = CA:FALSE
keyUsage = critical,digitalSignature,nonRepudiation
extendedKeyUsage = emailProtection
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
`;

/** Makes the PKI in `dir` (created). */
export async function makeTestPki(dir: string, password = 'test-p12-password'): Promise<TestPki> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'pki.cnf'), CONFIG);
  const openssl = (...args: string[]): void => run('/usr/bin/openssl', args, dir);
  openssl('req', '-x509', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '30', '-config', 'pki.cnf', '-extensions', 'ca_ext');
  const issue = (name: string, cn: string, keyArgs: string[], days: string): void => {
    openssl('req', '-new', ...keyArgs, '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}/O=Mailconv Test`);
    openssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.pem`, '-days', days, '-extfile', 'pki.cnf', '-extensions', 'signer_ext');
    openssl('pkcs12', '-export', '-inkey', `${name}.key`, '-in', `${name}.pem`, '-certfile', 'ca.pem', '-out', `${name}.p12`, '-passout', `pass:${password}`);
  };
  issue('rsa', 'Jane Signer', ['-newkey', 'rsa:2048'], '10');
  issue('ec', 'Erin Signer', ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'], '10');
  issue('expired', 'Old Signer', ['-newkey', 'rsa:2048'], '-1');
  openssl('pkcs12', '-export', '-nokeys', '-in', 'rsa.pem', '-out', 'nokey.p12', '-passout', `pass:${password}`);
  await mkdir(join(dir, 'nss'));
  run('/usr/bin/certutil', ['-N', '-d', 'sql:nss', '--empty-password'], dir);
  run('/usr/bin/certutil', ['-A', '-d', 'sql:nss', '-n', 'mailconv-test-ca', '-t', 'CT,C,C', '-i', 'ca.pem'], dir);
  return {
    dir,
    caPem: join(dir, 'ca.pem'),
    nssDir: `sql:${join(dir, 'nss')}`,
    password,
    rsaP12: join(dir, 'rsa.p12'),
    ecP12: join(dir, 'ec.p12'),
    expiredP12: join(dir, 'expired.p12'),
    noKeyP12: join(dir, 'nokey.p12'),
  };
}

/**
 * poppler's `pdfsig` report of `pdf`, with `-no-ocsp`, against the PKI's NSS database. With
 * `trust`, a second run without `-no-ocsp` whose certificate line is appended: poppler 22.12
 * reads a stale NSS error after a successful chain check with OCSP disabled and reports
 * "Unknown issue"; that run has no network at all (bubblewrap's own network namespace), and
 * the test certificates name no OCSP responder anyway.
 */
export function pdfsig(pdf: string, pki: TestPki, trust = false): string {
  const r = spawnSync('/usr/bin/pdfsig', ['-nssdir', pki.nssDir, '-no-ocsp', pdf], { encoding: 'utf8', timeout: 60_000 });
  let out = `${r.stdout}${r.stderr}`;
  if (trust) {
    const t = spawnSync('/usr/bin/bwrap', ['--unshare-net', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--', '/usr/bin/pdfsig', '-nssdir', pki.nssDir, pdf], { encoding: 'utf8', timeout: 60_000 });
    out += `\nWithout network:\n${t.stdout}${t.stderr}`;
  }
  return out;
}

/**
 * Signature `index` of `pdf` as pdfsig dumps it (its /Contents, DER CMS) and the bytes its
 * /ByteRange covers, written in `workDir`: what `openssl cms -verify -content` checks.
 */
export async function signedParts(pdf: string, pki: TestPki, index: number, workDir: string): Promise<{ cms: string; content: string }> {
  const copy = join(workDir, `dump-${Date.now()}-${index}-${basename(pdf)}`);
  await copyFile(pdf, copy);
  // pdfsig writes the dumps into its working folder, named after the file.
  run('/usr/bin/pdfsig', ['-nssdir', pki.nssDir, '-no-ocsp', '-dump', copy], workDir);
  const bytes = await readFile(copy);
  const ranges = [...bytes.toString('latin1').matchAll(/\/ByteRange \[(\d+) (\d+) (\d+) (\d+) *\]/g)][index]?.slice(1).map(Number);
  if (!ranges) throw new Error(`no signature ${index} in ${pdf}`);
  const [a, b, c, d] = ranges as [number, number, number, number];
  const content = `${copy}.content${index}`;
  await writeFile(content, Buffer.concat([bytes.subarray(a, a + b), bytes.subarray(c, c + d)]));
  return { cms: `${copy}.sig${index}`, content };
}

export * from './hostile-pkcs12.js';
