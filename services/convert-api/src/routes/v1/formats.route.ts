import { Type } from 'typebox';
import { OCR_LANGUAGES, PRESETS, formatInfo, normaliseExtension, quote } from '@mailconv/converter';
import { AppError, type ServiceApp } from '@mailconv/platform';
import type { ConvertDeps } from '../../deps.js';
import { SECURED, errors, secured } from '../../schemas.js';

const Format = Type.Object({
  ext: Type.String(),
  mime_type: Type.String(),
  family: Type.String(),
  name: Type.String(),
  paged: Type.Optional(Type.Boolean({ description: 'page_range applies; `pages` is reported.' })),
  readable: Type.Boolean({ description: 'Accepted as a source.' }),
  writable: Type.Boolean({ description: 'Produced as a target.' }),
});

const Formats = Type.Object({
  success: Type.Boolean(),
  formats_count: Type.Integer(),
  pairs_count: Type.Integer({ description: 'Proven (source, target) pairs: each was converted from a real sample and its output accepted by an independent tool (`npm run matrix`, packages/converter/proven-pairs.json); only these are listed and routed.' }),
  formats: Type.Array(Format),
  presets: Type.Array(Type.Object({ name: Type.String(), description: Type.String(), families: Type.Array(Type.String()) })),
  ocr_languages: Type.Array(Type.Object({ code: Type.String(), alias: Type.String() })),
});

const Targets = Type.Object({
  success: Type.Boolean(),
  source: Type.Object({ ext: Type.String(), mime_type: Type.String(), family: Type.String() }),
  targets: Type.Array(
    Type.Object({
      format: Type.String(),
      mime_type: Type.String(),
      family: Type.String(),
      engines: Type.Array(Type.String(), { description: 'Engines of the preferred route, in order.' }),
      via: Type.Optional(Type.String({ description: 'Intermediate format of a chained route.' })),
      presets: Type.Array(Type.String()),
    }),
  ),
});

/** `GET /api/v1/formats` and `GET /api/v1/formats/{ext}/targets`, from the engine's own registry. */
export function registerFormatRoutes(app: ServiceApp, deps: ConvertDeps): void {
  const registry = deps.converter.registry;
  // The catalogue only changes with the engines found at start-up: build the answers once.
  const formats = registry.formats();
  const formatsAnswer = {
    success: true,
    formats_count: formats.length,
    pairs_count: registry.pairs().length,
    formats,
    presets: PRESETS.map((p) => ({ name: p.name, description: p.description, families: [...p.families] })),
    ocr_languages: Object.entries(OCR_LANGUAGES).map(([code, alias]) => ({ code, alias })),
  };

  app.get(
    '/api/v1/formats',
    { schema: { tags: ['formats'], summary: 'Every supported format with its MIME type, the presets and the OCR languages', security: SECURED, response: secured({ 200: Formats, ...errors(401, 429, 500) }) } },
    async () => formatsAnswer,
  );

  app.get(
    '/api/v1/formats/:ext/targets',
    {
      schema: {
        tags: ['formats'],
        summary: 'The proven target formats of a source extension',
        security: SECURED,
        params: Type.Object({ ext: Type.String() }),
        response: secured({ 200: Targets, ...errors(401, 404, 429, 500) }),
      },
    },
    async (request) => {
      const info = formatInfo(normaliseExtension(request.params.ext));
      const targets = info ? registry.targets(info.ext) : [];
      if (!info || targets.length === 0) throw new AppError('not_found', `${quote(request.params.ext)} is not a source format this service reads; see GET /api/v1/formats.`);
      return {
        success: true,
        source: { ext: info.ext, mime_type: info.mime_type, family: info.family },
        targets: targets.map((t) => ({ ...t, engines: [...t.engines], presets: [...t.presets] })),
      };
    },
  );
}
