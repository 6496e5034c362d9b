/** Display helpers shared by both dashboards. */

const NUMBER = new Intl.NumberFormat('en-US');

export function formatNumber(n: number): string {
  return NUMBER.format(n);
}

/** Decimal units, as the plans are written (2 GB = 2,000,000,000 bytes). */
export function formatBytes(n: number): string {
  if (n < 1000) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n / 1000;
  let i = 0;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

/** A date-time in the reader's locale, or a dash. */
export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }) + ' UTC';
}

/** A calendar day (`YYYY-MM-DD` or an instant, read in UTC) with its year. */
export function formatDateOnly(iso: string): string {
  const d = new Date(iso.length === 10 ? `${iso}T00:00:00Z` : iso);
  return d.toLocaleDateString('en-GB', { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' });
}

/** The last day of a period whose end is exclusive (the first instant of the next one). */
export function lastDayBefore(isoEnd: string): string {
  return formatDateOnly(new Date(Date.parse(isoEnd) - 1).toISOString());
}

export function formatDay(iso: string): string {
  const d = new Date(iso.length === 10 ? `${iso}T00:00:00Z` : iso);
  return d.toLocaleDateString('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' });
}
