/**
 * Which conversions stay charged (convert-decisions.md item 18, issue #13): a conversion
 * that fails or is shredded before it finishes is not charged, whatever the cause — the
 * engine rejected the file, the service failed, or the caller shredded it. Only completed
 * conversions keep their unit (a completed one shredded later stays charged).
 */
import type { ConversionStatus } from '../repositories/conversions.repository.js';

/** A failure with this code gives the unit back: every failure does. */
export function refundsFailure(_code: string): boolean {
  return true;
}

/** Shredding a record that was in `status` gives the unit back when it had not finished. */
export function refundsShred(status: string): boolean {
  return status === ('queued' satisfies ConversionStatus) || status === ('processing' satisfies ConversionStatus);
}
