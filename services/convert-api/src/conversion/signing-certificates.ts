/**
 * Which certificate signs a `sign` conversion (issue 25): the operator's (`CONVERT_SIGNING_P12`,
 * opened at start-up) or one of the account's own, uploaded as a PKCS#12 file and kept sealed
 * with the service's secrets key (the S3 exports' SecretBox, bound to the row's id); it is
 * unsealed in memory only when a conversion signs. Keys never cross accounts: every lookup is
 * by account and id.
 */
import { credentialFromText, credentialToText, CredentialError, openPkcs12, type SignOptions, type SigningCredential } from '@mailconv/converter';
import { AppError, newId, type SecretBox } from '@mailconv/platform';
import type { SigningCertificateRow, SigningCertificatesRepository } from '../repositories/signing-certificates.repository.js';

/** A certificate as the API answers it. */
export interface SigningCertificateRecord {
  id: string;
  subject: string;
  issuer: string;
  not_before: string;
  not_after: string;
  sha256: string;
  created_at: string;
}

/** The id of the operator's certificate in `sign.certificate`. */
export const OPERATOR_CERTIFICATE = 'operator';
/** Most certificates one account keeps. */
export const MAX_ACCOUNT_CERTIFICATES = 20;

const NOT_CONFIGURED = 'signing is not configured on this service (no operator certificate); upload one of your own with POST /api/v1/signing-certificates and give its id as sign.certificate.';

/** The operator's and the accounts' signing certificates. */
export class SigningCertificates {
  constructor(
    private readonly o: {
      repository: SigningCertificatesRepository;
      box: SecretBox;
      /** The operator's credential, or null when `CONVERT_SIGNING_P12` is not set. */
      operator: SigningCredential | null;
      clock: () => Date;
    },
  ) {}

  /**
   * Opens an uploaded PKCS#12 file and keeps its key and certificates sealed; 400 naming `file`
   * or `password` when it cannot sign. The file is opened off the event loop, its iteration
   * counts capped (`openPkcs12`, issue 45).
   */
  async add(accountId: string, p12: Buffer, password: string): Promise<SigningCertificateRecord> {
    const now = this.o.clock();
    let credential: SigningCredential;
    try {
      credential = await openPkcs12(p12, password, now);
    } catch (err) {
      if (!(err instanceof CredentialError)) throw err;
      throw new AppError('invalid_request', err.message, { field: err.field });
    }
    if ((await this.o.repository.list(accountId)).length >= MAX_ACCOUNT_CERTIFICATES) {
      throw new AppError('invalid_request', `An account keeps at most ${MAX_ACCOUNT_CERTIFICATES} signing certificates; delete one first.`, { field: 'file' });
    }
    const id = newId('sgc', now.getTime());
    const f = credential.facts;
    const row: SigningCertificateRow = {
      id,
      account_id: accountId,
      subject: f.subject,
      issuer: f.issuer,
      not_before: f.notBefore.toISOString(),
      not_after: f.notAfter.toISOString(),
      sha256: f.sha256,
      sealed: this.o.box.seal(credentialToText(credential), id),
      created_at: now.toISOString(),
    };
    await this.o.repository.insert(row);
    return record(row);
  }

  async list(accountId: string): Promise<SigningCertificateRecord[]> {
    return (await this.o.repository.list(accountId)).map(record);
  }

  /** Deletes one of the account's certificates; 404 for none (or another account's). */
  async remove(accountId: string, id: string): Promise<void> {
    if (!(await this.o.repository.delete(accountId, id))) throw new AppError('not_found', 'No such signing certificate.');
  }

  /**
   * When a conversion asks for `sign`: the subject of the certificate that will sign, or 400
   * naming `sign` (nothing configured; an id that is not one of the account's; expired).
   */
  async check(accountId: string, certificate: string): Promise<string> {
    if (certificate === OPERATOR_CERTIFICATE) {
      if (!this.o.operator) throw new AppError('invalid_request', NOT_CONFIGURED, { field: 'sign' });
      return this.o.operator.facts.subject;
    }
    const row = await this.o.repository.find(accountId, certificate);
    if (!row) throw new AppError('invalid_request', 'sign.certificate: no such signing certificate (not found among your certificates).', { field: 'sign' });
    if (new Date(row.not_after) < this.o.clock()) throw new AppError('invalid_request', `sign.certificate: the certificate expired on ${row.not_after}.`, { field: 'sign' });
    return row.subject;
  }

  /** The credential that signs, unsealed in memory for this conversion only; undefined when it is gone (deleted meanwhile). */
  async credential(accountId: string, certificate: string): Promise<SigningCredential | undefined> {
    if (certificate === OPERATOR_CERTIFICATE) return this.o.operator ?? undefined;
    const row = await this.o.repository.find(accountId, certificate);
    return row ? credentialFromText(this.o.box.open(row.sealed, row.id)) : undefined;
  }
}

function record(row: SigningCertificateRow): SigningCertificateRecord {
  return { id: row.id, subject: row.subject, issuer: row.issuer, not_before: row.not_before, not_after: row.not_after, sha256: row.sha256, created_at: row.created_at };
}

/** `sign` as a conversion's row keeps it for the worker: the option as the API takes it, and the subject the record answers. */
export interface StoredSign {
  sign?: Record<string, unknown>;
  sign_subject?: string;
}

/** The stored form of a validated `sign`, after checking its certificate (400 naming `sign`; refused when `signing` is absent). */
export async function storedSign(o: SignOptions, accountId: string, signing: SigningCertificates | undefined): Promise<StoredSign> {
  if (!signing) throw new AppError('invalid_request', NOT_CONFIGURED, { field: 'sign' });
  const subject = await signing.check(accountId, o.certificate);
  const sign = { certificate: o.certificate, visible: o.visible, page: o.page, ...(o.box ?? {}), ...(o.reason ? { reason: o.reason } : {}), ...(o.location ? { location: o.location } : {}), ...(o.contact ? { contact: o.contact } : {}) };
  return { sign, sign_subject: subject };
}
