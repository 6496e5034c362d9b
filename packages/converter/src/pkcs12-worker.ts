/**
 * The worker-thread side of `openPkcs12` (issue 45): opens one PKCS#12 file with `loadPkcs12`
 * under the limits the parent set (heap, time-out) and answers the credential as text (kept
 * in memory, sent to the parent thread only), or the refusal.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Pkcs12Answer, Pkcs12Job } from './pkcs12-open.js';
import { CredentialError, credentialToText, loadPkcs12 } from './signing-credential.js';

function open(job: Pkcs12Job): Pkcs12Answer {
  try {
    return { ok: true, credential: credentialToText(loadPkcs12(job.bytes, job.password, new Date(job.now), job.limits)) };
  } catch (e) {
    if (e instanceof CredentialError) return { ok: true, refused: { message: e.message, field: e.field } };
    // The detail goes to the parent's failure detail, never to the client.
    return { ok: false, message: 'The certificate file could not be opened.', detail: (e as Error).message };
  }
}

parentPort?.postMessage(open(workerData as Pkcs12Job));
