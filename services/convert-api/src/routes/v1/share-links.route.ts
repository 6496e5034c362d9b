import { Type } from 'typebox';
import { NO_NUL, Nullable, StringEnum, type ServiceApp } from '@mailconv/platform';
import { MAX_SHARE_SECONDS, MIN_SHARE_SECONDS, type ShareLinksService } from '../../conversion/share-links.service.js';
import { IdParams } from '../../conversion/schemas.js';
import { ownerOf, type ConvertDeps } from '../../deps.js';
import { SECURED, errors, secured } from '../../schemas.js';

const Link = Type.Object({
  link_id: Type.String({ description: '`lnk_…`' }),
  conversion_id: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  expires_at: Type.String({ format: 'date-time' }),
  revoked_at: Nullable(Type.String({ format: 'date-time' })),
  state: StringEnum(['active', 'expired', 'revoked'] as const),
});

const LinkWithUrl = Type.Intersect([Link, Type.Object({ url: Type.String({ description: 'The download URL, `…/api/v1/shared/sh_…`: anyone holding it can download until it expires. Shown only in this answer (only a hash of its token is kept).' }) })]);

/** `POST|GET /api/v1/jobs/{id}/links` and `DELETE /api/v1/jobs/{id}/links/{link_id}` (extension, issue 24). */
export function registerShareLinkRoutes(app: ServiceApp, deps: ConvertDeps, links: ShareLinksService): void {
  const tags = ['conversion'];

  app.post(
    '/api/v1/jobs/:id/links',
    {
      schema: {
        tags,
        summary: 'Make a share link: the output downloadable without an API key until it expires (extension)',
        description:
          `\`expires_in\` seconds (${MIN_SHARE_SECONDS}–${MAX_SHARE_SECONDS}, never past the output’s own \`expires_at\`; longer → 400 naming it); ` +
          'omitted: until the output expires or 7 days, whichever is first. Only a completed conversion can be shared (409 before; 410 once shredded or expired). ' +
          'Shredding the conversion ends every link (410). Not charged.',
        security: SECURED,
        params: IdParams,
        body: Type.Object({ expires_in: Type.Optional(Type.Integer({ minimum: MIN_SHARE_SECONDS, maximum: MAX_SHARE_SECONDS })) }, { additionalProperties: false }),
        response: secured({ 201: Type.Object({ success: Type.Boolean(), link: LinkWithUrl }), ...errors(400, 401, 404, 409, 410, 413, 415, 429, 500) }),
        'x-extension': true,
      },
    },
    async (request, reply) => {
      const link = await links.create(ownerOf(deps, request.principal!), request.params.id, request.body?.expires_in);
      return reply.code(201).send({ success: true, link });
    },
  );

  app.get(
    '/api/v1/jobs/:id/links',
    {
      schema: {
        tags,
        summary: 'The share links of a conversion, without their URLs (extension)',
        security: SECURED,
        params: IdParams,
        response: secured({ 200: Type.Object({ success: Type.Boolean(), links: Type.Array(Link) }), ...errors(401, 404, 429, 500) }),
        'x-extension': true,
      },
    },
    async (request) => ({ success: true, links: await links.list(ownerOf(deps, request.principal!), request.params.id) }),
  );

  app.delete(
    '/api/v1/jobs/:id/links/:link_id',
    {
      schema: {
        tags,
        summary: 'Revoke a share link: its URL answers 410 from now on (extension)',
        security: SECURED,
        params: Type.Object({ id: Type.String(), link_id: Type.String({ minLength: 1, maxLength: 64, pattern: NO_NUL }) }),
        response: secured({ 200: Type.Object({ success: Type.Boolean(), link: Link }), ...errors(401, 404, 429, 500) }),
        'x-extension': true,
      },
    },
    async (request) => ({ success: true, link: await links.revoke(ownerOf(deps, request.principal!), request.params.id, request.params.link_id) }),
  );
}
