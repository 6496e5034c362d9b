import { createHmac, timingSafeEqual } from 'node:crypto';

/** Name of the header that carries the signature of a webhook delivery. */
export const SIGNATURE_HEADER = 'x-service-signature';

/** The signature the service sends for `rawBody`: `sha256=` + hex HMAC-SHA256 under `secret`. */
export function signWebhook(rawBody: string | Uint8Array, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`;
}

/**
 * Checks a delivery's `X-Service-Signature` against the raw request body, in constant time.
 * Pass the body exactly as received (bytes or the undecoded string), before any JSON
 * parsing: re-serialised JSON does not have the same bytes. Returns false for a missing,
 * malformed or wrong signature; never throws on bad input.
 */
export function verifyWebhookSignature(rawBody: string | Uint8Array, signatureHeader: string | string[] | undefined | null, secret: string): boolean {
  const header = Array.isArray(signatureHeader) ? signatureHeader[0] : signatureHeader;
  if (typeof header !== 'string' || !secret) return false;
  const match = /^sha256=([0-9a-f]{64})$/i.exec(header.trim());
  if (!match) return false;
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  const given = Buffer.from(match[1]!.toLowerCase(), 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
