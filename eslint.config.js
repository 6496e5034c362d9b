// Lint runs as part of `npm test`; rules stay syntax-level so the whole tree lints in seconds.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'data/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', Buffer: 'readonly', fetch: 'readonly', performance: 'readonly', setImmediate: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      // `interface ServiceErrorCodes extends Record<Code, true> {}`: each service's codes merged into AppError's type.
      '@typescript-eslint/no-empty-object-type': ['error', { allowInterfaces: 'with-single-extends' }],
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Read settings through the service config schema.' }],
    },
  },
  {
    // Processes are started only by the converter's exec adapter (engines call it, never
    // child_process: issue 16) and the places below.
    files: ['**/*.ts', '**/*.mjs', '**/*.js'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: ['child_process', 'node:child_process'].map((name) => ({ name, message: 'Start processes through the converter\'s exec adapter (packages/converter/src/exec/); see eslint.config.js for the exemptions.' })),
        },
      ],
    },
  },
  {
    files: [
      // The adapter itself, with its tests.
      'packages/converter/src/exec/**',
      // The test rig runs dnsmasq, Postfix and its own daemon process.
      'test-rig/**',
      // Setup, test and benchmark scripts install packages, build and start servers.
      'scripts/**/*.mjs',
      'bench/**/*.mjs',
      // Tests that run the real thing in another process: the CLI, servers killed mid-job,
      // workers, the quota hammer, Node with a list refresh, the engines' reference tools
      // (pdfinfo and the like, to check outputs independently of the adapter), openssl for a
      // throw-away webhook CA; the shared helper that starts and kills service processes in
      // the crash and scale-out tests.
      'packages/converter/src/testing/tools.ts',
      // The hostile-file generators build their files with the real tools (qpdf and the like).
      'packages/converter/src/testing/hostile-files.ts',
      // The signature tests' throw-away PKI (openssl, certutil) and pdfsig without network (bwrap).
      'packages/converter/src/testing/test-pki.ts',
      // The exploit generators (tar/zip by Python) and the compromised test engine (mknod).
      'packages/converter/src/testing/exploit-files.ts',
      // The output guard's test makes FIFOs and device nodes (mkfifo, mknod as root).
      'packages/converter/src/guards/output-guard.test.ts',
      // The exploit suite reads outputs with independent tools (qpdf, pdftotext, bsdtar, tesseract).
      'services/convert-api/src/routes/v1/exploit-harness.test-support.ts',
      'packages/platform/src/testing/processes.ts',
      // The fault tests' own PostgreSQL and Redis (initdb, pg_ctl, redis-server).
      'packages/platform/src/testing/own-services.ts',
      // The full-disk tests' small tmpfs volumes (mount, umount).
      'packages/platform/src/testing/small-volume.ts',
      // A test's own DNS server (dnsmasq) on loopback.
      'packages/platform/src/testing/dns-server.ts',
      // The webhook receiver's throw-away CA (openssl).
      'packages/platform/src/testing/webhook-receiver.ts',
      // The answer guard's test: a process whose mismatch no test looked at exits 1.
      'packages/platform/src/testing/answer-guard.test.ts',
      'packages/platform/src/quota/quota-ledger.test.ts',
      'packages/verifier/src/checks/lists.check.test.ts',
      'packages/verifier/src/cli.test.ts',
      // The email admin CLI's smtp-check, run as an operator runs it (issue 23).
      'services/email-api/src/smtp-self-check.test.ts',
      'services/convert-api/src/process.test.ts',
      // `npm start` itself, run as root, to check the uids of what it starts.
      'services/convert-api/src/least-privilege.test.ts',
      'services/convert-api/src/routes/v1/conversions.test.ts',
      // pdftotext reads the PDF a URL was printed to.
      'services/convert-api/src/routes/v1/url-convert.test.ts',
      // Batches: archives made by Info-ZIP's zip, bsdtar and mkfifo; results read with unzip and pdfinfo.
      'packages/converter/src/batch.test.ts',
      'services/convert-api/src/routes/v1/batch.test.ts',
      // Filled and flattened PDFs read back with qpdf, pdftotext and pdfinfo (issue 25).
      'services/convert-api/src/routes/v1/pdf-forms.test.ts',
      // PDF/A and PDF/UA through the API: pdfinfo reads the downloaded PDF (issue 25).
      'services/convert-api/src/routes/v1/pdf-archive.test.ts',
      // Redaction and page marks (issue 25): downloads read with pdftotext and pdfinfo.
      'services/convert-api/src/routes/v1/pdf-markup.test.ts',
      // An animated PNG uploaded as .png: identify counts the downloaded GIF's frames (issue 31).
      'services/convert-api/src/routes/v1/apng-upload.test.ts',
      'services/email-api/src/process.test.ts',
      'services/email-api/src/jobs/jobs-crash.test.ts',
      // The SDK/CLI suites create accounts with the services' admin CLI and run the CLI; the
      // load test runs bench/load.mjs.
      'packages/client/test/**',
      // The dashboards' build type-checks with tsc; their browser suite sets passwords with the admin CLI.
      'packages/dashboard/build.mjs',
      'packages/dashboard/test/**',
    ],
    rules: { 'no-restricted-imports': 'off' },
  },
  {
    // The config loaders, scripts and test support are the only places allowed to read the
    // environment; and the SDK's CLI (MAILCONV_* settings of its user, like flags).
    files: ['**/src/config.ts', '**/src/config/**', 'scripts/**', 'bench/**', '**/src/testing/**', '**/*.test.ts', '**/*.test-support.ts', '**/src/server.ts', '**/src/admin.ts', 'packages/client/src/cli.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
);
