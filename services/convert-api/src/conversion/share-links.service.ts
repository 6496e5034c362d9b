import { createHash } from 'node:crypto';
import { AppError, newId, randomBase62 } from '@mailconv/platform';
import type { ShareLinkRow, ShareLinksRepository } from '../repositories/share-links.repository.js';
import type { ConversionService, DownloadTarget, Owner } from './conversion.service.js';

/** A share link lives at most this long (issue 24: 7 days). */
export const MAX_SHARE_SECONDS = 7 * 86_400;
/** …and at least this long. */
export const MIN_SHARE_SECONDS = 60;

/** A link as the API shows it; `url` (which holds the token) only in the creation answer. */
export interface ShareLinkRecord {
  link_id: string;
  conversion_id: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
  /** `active`, `expired` or `revoked`. */
  state: 'active' | 'expired' | 'revoked';
  url?: string;
}

const hash = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * Share links (extension, issue 24): a signed URL that downloads one conversion's output
 * without an API key until it expires (at most 7 days, never past the output's own expiry),
 * is revoked, or the conversion is shredded or expires (410). The token is random (190 bits)
 * and only its SHA-256 is stored, so the database cannot hand it out. The contract's
 * download by token keeps needing the key.
 */
export class ShareLinksService {
  constructor(
    private readonly deps: {
      links: ShareLinksRepository;
      conversions: ConversionService;
      clock: () => Date;
      publicBaseUrl: string;
    },
  ) {}

  /** Makes a link to the caller's completed conversion; `expiresIn` seconds, or until the output expires (at most 7 days). */
  async create(owner: Owner, conversionId: string, expiresIn: number | undefined): Promise<ShareLinkRecord & { url: string }> {
    const row = await this.deps.conversions.find(owner, conversionId);
    this.deps.conversions.outputOf(row);
    const now = this.deps.clock();
    const outputLeft = Math.floor((Date.parse(row.expires_at) - now.getTime()) / 1000);
    const longest = Math.min(MAX_SHARE_SECONDS, outputLeft);
    if (expiresIn !== undefined && expiresIn > longest) {
      throw new AppError(
        'invalid_request',
        `'expires_in' may be at most ${longest} seconds: ${longest === outputLeft ? `the output of ${row.id} is removed at ${row.expires_at}` : 'a link lives at most 7 days'}.`,
        { field: 'expires_in' },
      );
    }
    if (longest < MIN_SHARE_SECONDS) throw new AppError('gone', `The output of ${row.id} expires at ${row.expires_at}, too soon to share.`);
    const token = `sh_${randomBase62(32)}`;
    const link: ShareLinkRow = {
      id: newId('lnk', now.getTime()),
      account_id: owner.accountId,
      conversion_id: row.id,
      token_hash: hash(token),
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + (expiresIn ?? longest) * 1000).toISOString(),
      revoked_at: null,
    };
    await this.deps.links.insert(link);
    return { ...this.record(link, now), url: `${this.deps.publicBaseUrl}/api/v1/shared/${token}` };
  }

  async list(owner: Owner, conversionId: string): Promise<ShareLinkRecord[]> {
    await this.deps.conversions.find(owner, conversionId);
    const now = this.deps.clock();
    return (await this.deps.links.ofConversion(owner.accountId, conversionId)).map((l) => this.record(l, now));
  }

  async revoke(owner: Owner, conversionId: string, linkId: string): Promise<ShareLinkRecord> {
    await this.deps.conversions.find(owner, conversionId);
    const now = this.deps.clock();
    const link = await this.deps.links.revoke(owner.accountId, conversionId, linkId, now);
    if (!link) throw new AppError('not_found', `No share link ${linkId} on ${conversionId}.`);
    return this.record(link, now);
  }

  /** The output a token opens: 404 for an unknown token, 410 once revoked or expired, or the output is gone. */
  async open(token: string): Promise<DownloadTarget> {
    const found = /^sh_[0-9A-Za-z]{32}$/.test(token) ? await this.deps.links.findByTokenHash(hash(token)) : undefined;
    if (!found) throw new AppError('not_found', 'No shared download for this link.');
    const { link, conversion } = found;
    if (link.revoked_at) throw new AppError('gone', 'This share link was revoked by its owner.');
    if (link.expires_at <= this.deps.clock().toISOString()) throw new AppError('gone', `This share link expired at ${link.expires_at}.`);
    return this.deps.conversions.outputOf(conversion);
  }

  private record(link: ShareLinkRow, now: Date): ShareLinkRecord {
    const state = link.revoked_at ? 'revoked' : link.expires_at <= now.toISOString() ? 'expired' : 'active';
    return { link_id: link.id, conversion_id: link.conversion_id, created_at: link.created_at, expires_at: link.expires_at, revoked_at: link.revoked_at, state };
  }
}
