// The README's examples through clients generated from the services' OpenAPI documents with
// openapi-typescript (types: packages/client/src/generated/) and openapi-fetch (the calls),
// written as a user of either generator would write them; `generated-clients.test.ts` runs
// them against both services. README.md ("Generated clients") shows the same calls.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import createClient from 'openapi-fetch';
// The types openapi-typescript generated from each served document (what `npx
// openapi-typescript http://127.0.0.1:8080/openapi.json -o email-api.ts` writes), as the SDK ships them.
import type { ConvertApiPaths as ConvertPaths, EmailApiPaths as EmailPaths } from '@mailconv/client';

/** Fails with the service's `{error, message}` when a call did not succeed. */
function ok<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.error !== undefined || result.data === undefined) throw new Error(`${result.response.status}: ${JSON.stringify(result.error)}`);
  return result.data;
}

export async function emailExamples(baseUrl: string, apiKey: string, addresses: { single: string; list: string[] }) {
  const email = createClient<EmailPaths>({ baseUrl, headers: { Authorization: `Bearer ${apiKey}` } });

  // One address.
  const single = ok(await email.POST('/api/v1/verify-single', { body: { email: addresses.single } }));

  // Up to 10,000 at once, answered together.
  const batch = ok(await email.POST('/api/v1/verify-batch', { body: { emails: addresses.list } }));

  // A bulk job: submit, wait for it, then fetch its results as CSV.
  const submitted = ok(await email.POST('/api/v1/jobs', { body: { emails: addresses.list } }));
  let job = ok(await email.GET('/api/v1/jobs/{job_id}', { params: { path: { job_id: submitted.job_id } } }));
  while (job.status === 'queued' || job.status === 'processing') {
    await new Promise((resolve) => setTimeout(resolve, 200));
    job = ok(await email.GET('/api/v1/jobs/{job_id}', { params: { path: { job_id: submitted.job_id } } }));
  }
  const csv = ok(await email.GET('/api/v1/jobs/{job_id}/results', { params: { path: { job_id: submitted.job_id }, query: { format: 'csv' } }, parseAs: 'text' }));
  return { single, batch, job, csv };
}

export async function convertExamples(baseUrl: string, apiKey: string, files: { image: string; documents: string[] }) {
  const convert = createClient<ConvertPaths>({ baseUrl, headers: { Authorization: `Bearer ${apiKey}` } });
  const upload = async (path: string) => {
    const bytes = new Blob([await readFile(path)]);
    // The document describes the multipart form (`file`, binary); the serializer sends it as FormData.
    const bodySerializer = () => {
      const form = new FormData();
      form.append('file', bytes, basename(path));
      return form;
    };
    return ok(await convert.POST('/api/v1/upload', { body: { file: basename(path) }, bodySerializer }));
  };

  // Upload, convert (waiting up to 60 s), download, and check the SHA-256 the record names.
  const uploaded = await upload(files.image);
  const converted = ok(await convert.POST('/api/v1/convert', { params: { query: { wait: 60 } }, body: { upload_id: uploaded.upload_id, target_format: 'webp' } }));
  const bytes = ok(await convert.GET('/api/v1/download/{token}', { params: { path: { token: converted.download_token! } }, parseAs: 'arrayBuffer' }));
  const sha256 = createHash('sha256').update(Buffer.from(bytes)).digest('hex');
  if (sha256 !== converted.output?.sha256) throw new Error(`checksum mismatch: ${sha256} != ${converted.output?.sha256}`);

  // Merge: several uploads into one PDF, in order.
  const ids = [];
  for (const path of files.documents) ids.push((await upload(path)).upload_id);
  const merged = ok(await convert.POST('/api/v1/merge', { params: { query: { wait: 120 } }, body: { upload_ids: ids } }));
  const pdf = ok(await convert.GET('/api/v1/download/{token}', { params: { path: { token: merged.download_token! } }, parseAs: 'arrayBuffer' }));
  return { uploaded, converted, bytes: Buffer.from(bytes), merged, pdf: Buffer.from(pdf) };
}
