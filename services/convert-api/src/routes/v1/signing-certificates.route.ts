import { Type } from 'typebox';
import { MAX_PKCS12_BYTES, PKCS12_LIMITS, PKCS12_TIMEOUT_MS } from '@mailconv/converter';
import { AppError, NO_NUL } from '@mailconv/platform';
import type { RateLimiter, ServiceApp } from '@mailconv/platform';
import type { FastifyRequest } from 'fastify';
import type { SigningCertificates } from '../../conversion/signing-certificates.js';
import { SECURED, errors, secured } from '../../schemas.js';
import { multipartError } from './multipart.js';

const Certificate = Type.Object({
  id: Type.String({ description: '`sgc_…`: give it as sign.certificate.' }),
  subject: Type.String(),
  issuer: Type.String(),
  not_before: Type.String({ format: 'date-time' }),
  not_after: Type.String({ format: 'date-time' }),
  sha256: Type.String({ description: 'SHA-256 fingerprint of the certificate (hex).' }),
  created_at: Type.String({ format: 'date-time' }),
});

const UploadCertificateBody = Type.Unsafe({
  type: 'object',
  nullable: true,
  required: ['file', 'password'],
  properties: {
    file: { type: 'string', format: 'binary', description: `A PKCS#12 file (.p12/.pfx, at most ${MAX_PKCS12_BYTES / 1024} KB) holding one private key (RSA or EC) and its certificate, with the issuers' certificates if you want them carried in signatures.` },
    password: { type: 'string', format: 'password', maxLength: 1024, description: 'The file’s password. Used once to open it, never kept, logged or answered.' },
  },
});

/**
 * `POST|GET /api/v1/signing-certificates` and `DELETE /api/v1/signing-certificates/{id}`
 * (extension, issue 25). Uploads are counted per account (`uploads`, issue 45) before the
 * body is read, on top of the plan's limit: opening a file may keep a core busy for seconds.
 */
export function registerSigningCertificateRoutes(app: ServiceApp, signing: SigningCertificates, uploads: { perMinute: number; limiter: RateLimiter }): void {
  const tags = ['conversion'];
  app.post(
    '/api/v1/signing-certificates',
    {
      schema: {
        tags,
        summary: 'Add a signing certificate for the sign option: a PKCS#12 file and its password (extension)',
        description:
          'The key and certificates are kept sealed with the service’s secrets key and opened only in memory while a conversion signs; the password is not kept. ' +
          'A wrong password, a file without a private key or without its certificate, or a certificate that is expired or not valid yet → 400 naming file or password. ' +
          `A file asking for more than ${PKCS12_LIMITS.maxIterations} iterations in one key derivation (MAC, PBKDF2 or PKCS#12 PBE), or ${PKCS12_LIMITS.maxTotalIterations} in all, is refused at once (400 naming file: "… iteration count N is above the limit ${PKCS12_LIMITS.maxIterations}"; OpenSSL writes 2048); ` +
          `one that takes longer than ${PKCS12_TIMEOUT_MS / 1000} s to open is refused too (400 naming file). ` +
          `At most ${uploads.perMinute} uploads per minute per account, on top of the plan's rate limit (429 rate_limited with Retry-After).`,
        security: SECURED,
        consumes: ['multipart/form-data'],
        body: { content: { 'multipart/form-data': { schema: UploadCertificateBody } } },
        response: secured({ 201: Type.Object({ success: Type.Boolean(), certificate: Certificate }), ...errors(400, 401, 413, 415, 429, 500) }),
        'x-extension': true,
      },
      onRequest: async (request) => {
        // After the scope's authentication (the scope's onRequest hooks run first): counted per account, before the body is read.
        const d = await uploads.limiter.consume(request.principal!.accountId, uploads.perMinute);
        if (!d.allowed) throw new AppError('rate_limited', `At most ${d.limit} signing-certificate uploads per minute per account; retry in ${d.resetSeconds} s.`, undefined, { 'retry-after': String(d.resetSeconds) });
      },
    },
    async (request, reply) => {
      const { file, password } = await readCertificateForm(request);
      const certificate = await signing.add(request.principal!.accountId, file, password);
      return reply.code(201).send({ success: true, certificate });
    },
  );
  app.get(
    '/api/v1/signing-certificates',
    {
      schema: {
        tags,
        summary: 'Your signing certificates (extension)',
        security: SECURED,
        response: secured({ 200: Type.Object({ success: Type.Boolean(), certificates: Type.Array(Certificate) }), ...errors(401, 429, 500) }),
        'x-extension': true,
      },
    },
    async (request) => ({ success: true, certificates: await signing.list(request.principal!.accountId) }),
  );
  app.delete(
    '/api/v1/signing-certificates/:id',
    {
      schema: {
        tags,
        summary: 'Delete one of your signing certificates: its sealed key is removed (extension)',
        security: SECURED,
        params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, pattern: NO_NUL }) }),
        response: secured({ 200: Type.Object({ success: Type.Boolean() }), ...errors(401, 404, 429, 500) }),
        'x-extension': true,
      },
    },
    async (request) => {
      await signing.remove(request.principal!.accountId, request.params.id);
      return { success: true };
    },
  );
}

/** The form's `file` (in memory: a few KB) and `password`; 400 naming the missing or unknown part. */
async function readCertificateForm(request: FastifyRequest): Promise<{ file: Buffer; password: string }> {
  if (!request.isMultipart()) throw new AppError('unsupported_media_type', 'Send the certificate as multipart/form-data with the parts "file" and "password".');
  let file: Buffer | undefined;
  let password: string | undefined;
  try {
    for await (const part of request.parts({ limits: { fileSize: MAX_PKCS12_BYTES, files: 1, fields: 1, fieldSize: 1024, parts: 2 } })) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file') throw new AppError('invalid_request', 'The file part must be named "file".', { field: 'file' });
        file = await part.toBuffer();
      } else if (part.fieldname === 'password') {
        if (part.valueTruncated) throw new AppError('invalid_request', 'The password is longer than 1024 bytes.', { field: 'password' });
        password = String(part.value);
      } else throw new AppError('invalid_request', 'The fields are file and password.', { field: 'file' });
    }
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === 'FST_REQ_FILE_TOO_LARGE') throw new AppError('invalid_request', `The certificate file must be at most ${MAX_PKCS12_BYTES / 1024} KB.`, { field: 'file' });
    throw multipartError(err);
  }
  if (!file || file.length === 0) throw new AppError('invalid_request', "'file' (the .p12/.pfx file) is required.", { field: 'file' });
  if (password === undefined) throw new AppError('invalid_request', "'password' is required (an empty one is sent as an empty field).", { field: 'password' });
  return { file, password };
}
