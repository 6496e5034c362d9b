import { createReadStream } from 'node:fs';
import contentDisposition from 'content-disposition';
import rangeParser from 'range-parser';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError, required, withHeaders, type RateLimiter, type ServiceApp } from '@mailconv/platform';
import type { DownloadTarget } from '../../conversion/conversion.service.js';
import type { ShareLinksService } from '../../conversion/share-links.service.js';
import { Binary, JobTokenParams, TokenParams } from '../../conversion/schemas.js';
import { ownerOf, type ConvertDeps } from '../../deps.js';
import { SECURED, errors, secured } from '../../schemas.js';

const DOWNLOAD_HEADERS = {
  'Content-Disposition': Type.String({ description: '`attachment` with the output file name (`filename` and RFC 8187 `filename*`).' }),
  Digest: Type.String({ description: '`sha-256=<base64>` of the whole output (RFC 3230).' }),
  'Repr-Digest': Type.String({ description: '`sha-256=:<base64>:` of the whole output (RFC 9530).' }),
  ETag: Type.String({ description: 'The hex SHA-256 of the output, quoted.' }),
  'X-Content-Type-Options': Type.String({ description: '`nosniff`: a browser keeps to the Content-Type and never runs an output as a page or script (issue 45).' }),
};

const DESCRIPTION =
  'Needs the owner’s API key and the token. Streams the output with Content-Type, Content-Length, ' +
  'Content-Disposition (attachment, the output file name), `Digest: sha-256=<base64>` and `Repr-Digest: sha-256=:<base64>:` ' +
  '(the whole output’s SHA-256, also on partial answers), an ETag of the hex SHA-256, `Accept-Ranges: bytes` and `X-Content-Type-Options: nosniff`. ' +
  'One `Range` (bytes=a-b, a-, -n) answers 206 with Content-Range; a suffix `-n` longer than the output is the whole output (206, `bytes 0-<size-1>/<size>`, RFC 9110 §14.1.3); ' +
  'several ranges answer the whole file (200); an unsatisfiable one (a start past the end, or `-0`) 416.';

/** A download's answers: the file, a range of it, and the errors of `statuses` (416 with its Content-Range). */
const downloadResponses = (...statuses: number[]) =>
  secured({
    200: withHeaders(Binary('The whole output.'), required(DOWNLOAD_HEADERS)),
    206: withHeaders(Binary('The requested byte range.'), required({ ...DOWNLOAD_HEADERS, 'Content-Range': Type.String({ description: '`bytes <first>-<last>/<size>`.' }) })),
    ...errors(...statuses),
    416: withHeaders(errors(416)[416]!, required({ 'Content-Range': Type.String({ description: '`bytes */<size>`.' }) })),
  });

const responses = downloadResponses(401, 404, 409, 410, 429, 500);

/** Streams the file, honouring a single byte `Range`; both download routes and share links answer through it. */
function send(request: FastifyRequest, reply: FastifyReply, file: DownloadTarget) {
  const header = request.headers.range;
  const ranges = header ? rangeParser(file.size_bytes, wholeSuffixes(header, file.size_bytes), { combine: true }) : -2;
  // Checked before the file's headers are set: a 416 is an error answer, not a partial file.
  if (ranges === -1) {
    throw new AppError('range_not_satisfiable', `The range is outside the ${file.size_bytes} bytes of the output.`, undefined, { 'content-range': `bytes */${file.size_bytes}` });
  }
  const b64 = Buffer.from(file.sha256, 'hex').toString('base64');
  reply
    .header('content-type', file.mime_type)
    .header('content-disposition', contentDisposition(file.filename))
    .header('digest', `sha-256=${b64}`)
    .header('repr-digest', `sha-256=:${b64}:`)
    .header('etag', `"${file.sha256}"`)
    .header('accept-ranges', 'bytes')
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', 'private, no-store');
  // A malformed header (-2) or several ranges: answer the whole file, as RFC 9110 allows.
  if (ranges !== -2 && ranges.type === 'bytes' && ranges.length === 1) {
    const { start, end } = ranges[0]!;
    return reply
      .code(206)
      .header('content-range', `bytes ${start}-${end}/${file.size_bytes}`)
      .header('content-length', end - start + 1)
      .send(createReadStream(file.path, { start, end }));
  }
  return reply.header('content-length', file.size_bytes).send(createReadStream(file.path));
}

/**
 * A suffix range longer than the file (`bytes=-99999999`) means the whole file (RFC 9110
 * §14.1.3, issue 45); range-parser would find it unsatisfiable. Such suffixes are cut to the
 * file's size; `-0` stays as it is (unsatisfiable).
 */
function wholeSuffixes(header: string, size: number): string {
  const eq = header.indexOf('=');
  if (eq < 0) return header;
  const specs = header.slice(eq + 1).split(',').map((spec) => {
    const suffix = /^\s*-(\d+)\s*$/.exec(spec);
    return suffix && Number(suffix[1]) > size ? `-${size}` : spec;
  });
  return `${header.slice(0, eq + 1)}${specs.join(',')}`;
}

/**
 * `GET /api/v1/shared/{token}` (extension, issue 24): a share link's download, without an
 * API key, counted per client address (`CONVERT_SHARE_RPM`) before anything is looked up.
 * Registered outside the authenticated scope.
 */
export function registerSharedDownloadRoute(app: ServiceApp, links: ShareLinksService, limits: { perMinute: number; limiter: RateLimiter }): void {
  app.get(
    '/api/v1/shared/:token',
    {
      schema: {
        tags: ['conversion'],
        summary: 'Download an output through a share link, without an API key (extension)',
        description:
          'The `url` of `POST /api/v1/jobs/{id}/links`. The same answer as the keyed download (Digest, Repr-Digest, ETag, `X-Content-Type-Options: nosniff`, one Range → 206, a suffix longer than the output → all of it), ' +
          `plus \`Referrer-Policy: no-referrer\` and \`X-Robots-Tag: noindex\`. An unknown link is 404; a revoked or expired link, or an output shredded or expired, is 410. ` +
          `At most ${limits.perMinute} requests per minute from one address (429 with Retry-After).`,
        security: [],
        params: TokenParams,
        response: downloadResponses(404, 410, 429, 500),
        'x-extension': true,
      },
      onRequest: async (request, reply) => {
        const d = await limits.limiter.consume(request.ip, limits.perMinute);
        reply.headers({ 'ratelimit-limit': d.limit, 'ratelimit-remaining': d.remaining, 'ratelimit-reset': d.resetSeconds });
        if (!d.allowed) throw new AppError('rate_limited', `At most ${d.limit} shared downloads per minute from one address; retry in ${d.resetSeconds} s.`, undefined, { 'retry-after': String(d.resetSeconds) });
      },
    },
    async (request, reply) => {
      const file = await links.open(request.params.token);
      // A link is a secret: not passed on to other sites, not indexed.
      reply.header('referrer-policy', 'no-referrer').header('x-robots-tag', 'noindex');
      return send(request, reply, file);
    },
  );
}

/** `GET /api/v1/download/{token}` and `GET /api/v1/jobs/{id}/download/{token}`. */
export function registerDownloadRoutes(app: ServiceApp, deps: ConvertDeps): void {
  app.get(
    '/api/v1/download/:token',
    { schema: { tags: ['conversion'], summary: 'Download a converted output by its token', description: DESCRIPTION, security: SECURED, params: TokenParams, response: responses } },
    async (request, reply) => send(request, reply, await deps.conversions.download(ownerOf(deps, request.principal!), request.params.token)),
  );
  app.get(
    '/api/v1/jobs/:id/download/:token',
    { schema: { tags: ['conversion'], summary: 'Download a job’s output by job id and token', description: DESCRIPTION, security: SECURED, params: JobTokenParams, response: responses } },
    async (request, reply) => send(request, reply, await deps.conversions.download(ownerOf(deps, request.principal!), request.params.token, request.params.id)),
  );
}
