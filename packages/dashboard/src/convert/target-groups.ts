import type { Formats, Targets } from './types.js';

/** The targets people pick most, offered first in this order (issue 30). */
const COMMON = ['pdf', 'docx', 'odt', 'txt', 'html'];

/** Families in the order they are offered, with the group's name. */
const FAMILIES: Array<[family: string, label: string]> = [
  ['pdf', 'Documents'],
  ['document', 'Documents'],
  ['text', 'Documents'],
  ['spreadsheet', 'Spreadsheets'],
  ['presentation', 'Presentations'],
  ['image', 'Images'],
  ['vector', 'Vector graphics'],
  ['ebook', 'E-books'],
  ['markup', 'Markup and web'],
  ['audio', 'Audio'],
  ['video', 'Video'],
  ['subtitle', 'Subtitles'],
  ['data', 'Data'],
  ['calendar', 'Calendars and contacts'],
  ['contact', 'Calendars and contacts'],
  ['archive', 'Archives'],
  ['model', '3D models'],
  ['font', 'Fonts'],
];

/** Labels that read better to people than "<catalogue name> (.ext)". */
const LABELS: Record<string, string> = { html: 'Web page (HTML)' };

export interface TargetOption {
  value: string;
  label: string;
}

export interface TargetGroup {
  label: string;
  options: TargetOption[];
}

/** "Word document (.docx)": the catalogue's name of the format and its extension; the extension alone when it has none. */
export function targetLabel(ext: string, formats: Formats['formats'] | undefined): string {
  const label = LABELS[ext];
  if (label) return label;
  const name = formats?.find((f) => f.ext === ext)?.name;
  return name ? `${name} (.${ext})` : ext.toUpperCase();
}

/**
 * The targets of a source as `<optgroup>`s: the common ones first, then one group per
 * family (documents, spreadsheets, images, e-books, …), each sorted by name.
 */
export function groupTargets(targets: ReadonlyArray<Pick<Targets['targets'][number], 'format' | 'family'>>, formats: Formats['formats'] | undefined): TargetGroup[] {
  const option = (t: Pick<Targets['targets'][number], 'format' | 'family'>): TargetOption => ({ value: t.format, label: targetLabel(t.format, formats) });
  const common = COMMON.flatMap((ext) => targets.filter((t) => t.format === ext)).map(option);
  const rest = targets.filter((t) => !COMMON.includes(t.format));
  const groups: TargetGroup[] = common.length ? [{ label: 'Common', options: common }] : [];
  const byLabel = new Map<string, TargetOption[]>();
  const order = (family: string) => {
    const i = FAMILIES.findIndex(([f]) => f === family);
    return i < 0 ? FAMILIES.length : i;
  };
  for (const t of [...rest].sort((a, b) => order(a.family) - order(b.family))) {
    const label = FAMILIES.find(([f]) => f === t.family)?.[1] ?? 'Other formats';
    const list = byLabel.get(label) ?? [];
    list.push(option(t));
    byLabel.set(label, list);
  }
  for (const [label, options] of byLabel) groups.push({ label, options: options.sort((a, b) => a.label.localeCompare(b.label)) });
  return groups;
}

/**
 * What each file of an archive can be converted to (the `batch` option): every format the
 * service writes, but archives; a file that cannot become the target fails on its own.
 */
export function batchTargets(formats: Formats['formats'] | undefined): Array<Pick<Targets['targets'][number], 'format' | 'family'>> {
  return (formats ?? []).filter((f) => f.writable && f.family !== 'archive').map((f) => ({ format: f.ext, family: f.family }));
}

/** The target chosen first: the first common one (PDF when offered). */
export function firstTarget(groups: TargetGroup[]): string {
  return groups[0]?.options[0]?.value ?? '';
}
