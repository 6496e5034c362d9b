import fc from 'fast-check';
import type { FastifyInstance, InjectOptions } from 'fastify';
import type { ErrorTable } from '../errors/app-error.js';
import type { answerChecker, RecordedAnswer } from './openapi.js';

// fast-check arbitraries for requests a careless or hostile client may send (issue #15), and
// the one property every route must keep under them: an answer documented for the route,
// in the contract's error shape with a code from the service's closed list, never a 500.

/** Strings that have broken parsers, databases and log lines before. */
const NASTY_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b@valid.test',
  '\ud800',
  'x\udfffy@valid.test',
  '\u202eevil',
  '\r\n',
  '\t',
  '%00',
  '%',
  '../../etc/passwd',
  '__proto__',
  'constructor',
  'toString',
  '<script>alert(1)</script>',
  "'; DROP TABLE accounts;--",
  '1e309',
  '-0',
  'NaN',
  'null',
  'true',
  '@',
  'a@b',
  'alice@valid.test',
  'ALICE@VALID.TEST',
  'üñî@exämple.test',
  '"quoted local"@valid.test',
  'a@[127.0.0.1]',
  'a@[IPv6:::1]',
  'user+tag@catchall.test',
  'x@does-not-exist.test',
  '💥'.repeat(40),
  'é'.repeat(600),
  'key_00000000000000000000000000',
  'wh_00000000000000000000000000',
  'cnv_00000000000000000000000000',
  'http://127.0.0.1:1/hook',
  'https://hooks.example.test/x',
  'javascript:alert(1)',
  'file:///etc/passwd',
];

/** Any string: arbitrary code points (lone surrogates, NUL, controls, astral), graphemes, known-bad ones, long runs. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 2, arbitrary: fc.string({ maxLength: 30 }).map((s) => `${s}@valid.test`) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('a', 'é', '\u0000', '💥', '@', '%'), fc.integer({ min: 100, max: 70_000 })).map(([c, n]) => c.repeat(n)) },
);

/** Numbers JSON can carry that code often does not expect. */
export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(0, -0, -1, 1, 0.5, 2 ** 31, 2 ** 32, 2 ** 53, Number.MAX_SAFE_INTEGER + 2, -(2 ** 63), 1e300, Number.MIN_VALUE),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** Arrays nested `depth` deep (the services refuse past 64 levels before parsing). */
export const deepNesting: fc.Arbitrary<unknown> = fc.integer({ min: 1, max: 80 }).chain((depth) =>
  fc.constantFrom('[', '{').map((open) => {
    let v: unknown = 'x';
    for (let i = 0; i < depth; i++) v = open === '[' ? [v] : { a: v };
    return v;
  }),
);

/** Any JSON value, with hostile leaves, odd keys and nesting within and past the limits. */
export const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
  {
    weight: 4,
    arbitrary: fc.letrec<{ value: unknown }>((tie) => ({
      value: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        hostileString,
        hostileNumber,
        fc.constantFrom(true, false, null),
        fc.array(tie('value'), { maxLength: 5 }),
        fc.dictionary(fc.oneof(hostileString, fc.constantFrom('__proto__', 'constructor', 'email', 'emails', 'url')), tie('value'), { maxKeys: 4 }),
      ),
    })).value,
  },
  { weight: 1, arbitrary: deepNesting },
  { weight: 1, arbitrary: fc.array(fc.constant(0), { minLength: 1000, maxLength: 20_000 }) },
);

/**
 * Bodies for a route taking the object `fields` describes (field → arbitrary of plausible
 * values, hostile ones welcome): objects of those fields (each present or not), the same
 * with one field replaced by any JSON value or with an unknown key added, and any JSON value.
 */
export function hostileBody(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<unknown> {
  const names = Object.keys(fields);
  const plausible = fc.record(fields, { requiredKeys: [] }).map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined)) as Record<string, unknown>);
  const oneReplaced = names.length === 0 ? plausible : fc.tuple(plausible, fc.constantFrom(...names), hostileJson).map(([r, k, v]) => ({ ...r, [k]: v }));
  const extraKey = fc.tuple(plausible, fc.oneof(hostileString, fc.constantFrom('__proto__', 'constructor', 'prototype')), hostileJson).map(([r, k, v]) => {
    const out = { ...r };
    Object.defineProperty(out, k, { value: v, enumerable: true, configurable: true, writable: true });
    return out;
  });
  return fc.oneof({ weight: 4, arbitrary: plausible }, { weight: 3, arbitrary: oneReplaced }, { weight: 1, arbitrary: extraKey }, { weight: 1, arbitrary: hostileJson });
}

/** A request body as bytes: usually the JSON of `value`, sometimes broken or empty. */
export function hostilePayload(value: fc.Arbitrary<unknown>): fc.Arbitrary<string | Buffer> {
  return fc.oneof(
    { weight: 8, arbitrary: value.map((v) => JSON.stringify(v) ?? 'null') },
    { weight: 1, arbitrary: fc.constantFrom('', '{', '{"email":', '[1,2', 'nul', '\u0000', '{"a":1}{"b":2}', '{"email":"a@b.test",}', "{'email':'x'}", '\ufeff{"email":"a@valid.test"}') },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)) },
  );
}

/** Content-Type values a client may send for a JSON body. */
export const contentTypes: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      undefined,
      '',
      'application/json; charset=utf-8',
      'application/json; charset=UTF-8',
      'APPLICATION/JSON',
      'application/json;',
      'application/json; charset=latin1',
      'application/json; charset="utf-16"',
      'application/json ; boundary=x',
      'application/vnd.api+json',
      'application/problem+json',
      'text/json',
      'text/plain',
      'text/csv',
      'application/x-www-form-urlencoded',
      'multipart/form-data',
      'multipart/form-data; boundary=',
      'multipart/form-data; boundary=x',
      'application/octet-stream',
      '*/*',
      'application/*',
      'garbage',
      ';;;',
    ),
  },
);

/** Header values limited to what HTTP lets through (visible ASCII, space, tab, obs-text). */
export const headerText: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 40 }),
  fc.constantFrom('', ' ', '\t', 'é', 'x'.repeat(256), 'x'.repeat(300), 'a b', '"quoted"', '\u00ff\u00fe'),
  fc.integer({ min: 1, max: 4000 }).map((n) => 'k'.repeat(n)),
);

/** `Range` values, sensible and not. */
export const rangeHeader: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('bytes=0-0', 'bytes=0-', 'bytes=-1', 'bytes=-0', 'bytes=1-0', 'bytes=0-1,2-3', 'bytes=99999999999999999999-', 'bytes=a-b', 'bytes=', 'items=0-1', 'bytes=-', 'bytes=0-0,0-0,0-0'),
  fc.tuple(fc.nat(), fc.nat()).map(([a, b]) => `bytes=${a}-${b}`),
  headerText,
);

/** Extra headers: each absent or with an odd value. */
export const oddHeaders: fc.Arbitrary<Record<string, string>> = fc
  .record(
    {
      'idempotency-key': headerText,
      range: rangeHeader,
      accept: fc.constantFrom('*/*', 'text/html', 'application/xml', 'application/json;q=0', ''),
      'accept-encoding': fc.constantFrom('gzip', 'br', 'identity;q=0', '*;q=0', 'x'),
      'if-none-match': headerText,
      'x-forwarded-for': fc.constantFrom('1.2.3.4', '::1', 'garbage', '1.1.1.1, 2.2.2.2', ''),
      'x-request-id': headerText,
      'content-encoding': fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'x'),
    },
    { requiredKeys: [] },
  )
  .map((h) => Object.fromEntries(Object.entries(h).filter(([, v]) => v !== undefined)) as Record<string, string>);

/** One query-string value as it may appear on the wire (percent-encoded or raw garbage). */
const queryValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('', '0', '1', '-1', '1.5', '1e3', '999999999999999999999', 'true', 'csv', 'json', 'CSV', 'null', '[]', '%', '%zz', '%00', '%ff%fe', '%E2%82', '+', '%20'),
  fc.integer().map(String),
  hostileString.filter((s) => s.length < 2000).map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, '?'))),
);

/**
 * A query string over the route's known `params` and a few others: absent, single, repeated
 * (`a=1&a=2`), bare (`a`) or with odd values; the legacy `api_key` too.
 */
export function hostileQuery(params: readonly string[]): fc.Arbitrary<string> {
  const name = fc.oneof({ weight: 4, arbitrary: params.length > 0 ? fc.constantFrom(...params) : fc.constant('x') }, { weight: 1, arbitrary: fc.constantFrom('api_key', 'x', '__proto__', '', '%', 'a[b]', 'a.b') });
  const pair = fc.tuple(name, fc.option(queryValue, { nil: undefined })).map(([k, v]) => (v === undefined ? k : `${k}=${v}`));
  return fc.array(pair, { maxLength: 4 }).map((pairs) => (pairs.length ? `?${pairs.join('&')}` : ''));
}

/** A path segment: percent-encoded odd text, raw `%` garbage, or an id-looking value. */
export const pathSegment: fc.Arbitrary<string> = fc.oneof(
  hostileString.filter((s) => s.length > 0 && s.length < 3000).map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, '?'))),
  fc.constantFrom('%', '%zz', '%00', '%ff', '..', '.', '%2e%2e', 'a%2Fb', '%C0%AF', 'x'.repeat(5000)),
);

/** What a property asks of every answer, and where it was provoked. */
export interface AnswerRules {
  /** The service's closed error table (code → status). */
  errors: ErrorTable;
}

/**
 * The problems with one injected answer: any 500 or unknown code, an error body that is not
 * `{error, message}` JSON, or a status other than the one its code maps to.
 */
export function contractProblems(res: { statusCode: number; headers: Record<string, unknown>; body: string }, rules: AnswerRules): string[] {
  const problems: string[] = [];
  if (res.statusCode >= 500 && res.statusCode !== 503) problems.push(`status ${res.statusCode}: ${res.body.slice(0, 300)}`);
  if (res.statusCode < 400) return problems;
  if (!String(res.headers['content-type'] ?? '').startsWith('application/json')) {
    problems.push(`error ${res.statusCode} not JSON (${String(res.headers['content-type'])})`);
    return problems;
  }
  let body: unknown;
  try {
    body = JSON.parse(res.body);
  } catch {
    problems.push(`error ${res.statusCode} body is not JSON: ${res.body.slice(0, 200)}`);
    return problems;
  }
  const { error, message } = (body ?? {}) as { error?: unknown; message?: unknown };
  if (typeof error !== 'string' || typeof message !== 'string') problems.push(`error body lacks {error, message}: ${res.body.slice(0, 200)}`);
  else if (!(error in rules.errors)) problems.push(`code ${error} is not in the closed list`);
  else if (rules.errors[error as keyof ErrorTable] !== res.statusCode) problems.push(`code ${error} answered with ${res.statusCode}, its table says ${rules.errors[error as keyof ErrorTable]}`);
  return problems;
}

/** How many runs and how long: `PROPERTY_SEED` replays a failure, `PROPERTY_RUNS` scales the run count. */
export interface PropertyBudget {
  numRuns: number;
  /** Runs stop (counting as passed) after this long, so a slow machine keeps the suite bounded. */
  timeLimitMs: number;
}

/** The seed of this process's properties: `PROPERTY_SEED` when set, else a fresh one (printed). */
export function propertySeed(env: NodeJS.ProcessEnv = process.env): number {
  const given = env.PROPERTY_SEED;
  if (given !== undefined && /^-?\d+$/.test(given)) return Number(given);
  return (Date.now() ^ (process.pid << 16)) | 0;
}

/**
 * Checks that every request `requests` generates is answered within the contract by `app`:
 * {@link contractProblems} plus the served document (status, headers and body documented for
 * the route, via {@link answerChecker}). Seeded and bounded; the seed and the failing
 * request are in the thrown error, and the seed is printed before the run.
 */
export async function assertRequestsKeepContract(
  app: FastifyInstance,
  name: string,
  requests: fc.Arbitrary<InjectOptions & { url: string }>,
  rules: AnswerRules & PropertyBudget & { seed: number; answers: RecordedAnswer[]; checkDocument: Awaited<ReturnType<typeof answerChecker>> },
): Promise<{ runs: number; statuses: Record<number, number> }> {
  const statuses: Record<number, number> = {};
  let runs = 0;
  console.log(`# property "${name}": seed ${rules.seed} (replay with PROPERTY_SEED=${rules.seed})`);
  const details = await fc.check(
    fc.asyncProperty(requests, async (req) => {
      const from = rules.answers.length;
      const res = await app.inject(req);
      runs++;
      statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
      const problems = [...contractProblems(res, rules), ...rules.checkDocument(rules.answers.slice(from))];
      if (problems.length > 0) throw new Error(problems.map((p) => (p.length > 400 ? `${p.slice(0, 400)}…` : p)).join('\n'));
    }),
    { seed: rules.seed, numRuns: rules.numRuns, interruptAfterTimeLimit: rules.timeLimitMs, markInterruptAsFailure: false, endOnFailure: false },
  );
  if (details.failed) {
    const example = details.counterexample?.[0] as (InjectOptions & { url: string }) | undefined;
    const shown = example ? JSON.stringify({ method: example.method, url: example.url.slice(0, 500), headers: example.headers, payload: String(example.payload ?? '').slice(0, 500) }) : '(none)';
    throw new Error(
      `property "${name}" failed (seed ${details.seed}, path ${details.counterexamplePath}; replay with PROPERTY_SEED=${details.seed})\n` +
        `request: ${shown}\n${details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)}`,
    );
  }
  return { runs, statuses };
}

