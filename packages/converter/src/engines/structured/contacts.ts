/**
 * vCard and iCalendar ↔ records (ical.js parses both; we write them ourselves, folded and
 * escaped per RFC 6350 / RFC 5545). Reading gives one record per contact or event with
 * lower-case property names as columns (a repeated property gets `email 2`, `email 3`, …);
 * writing finds the columns by common names (`name`/`full name`/`fn`, `e-mail`, `phone`,
 * `start`/`dtstart`, `title`/`summary`, …), so a table exported from a mail client works too.
 */
import ICAL from 'ical.js';
import { DataError, flatten, toRecords } from './records.js';

type Rec = Record<string, string>;

/** The records of a vCard file (one per card). */
export function readVcards(text: string): Rec[] {
  const cards = components(text, 'vcard');
  return cards.map((c) => propsToRecord(c, new Set(['version', 'prodid'])));
}

/** The records of an iCalendar file (one per event). */
export function readEvents(text: string): Rec[] {
  const out: Rec[] = [];
  for (const cal of components(text, 'vcalendar')) {
    for (const ev of cal.getAllSubcomponents('vevent')) out.push(propsToRecord(ev, new Set(['dtstamp'])));
  }
  return out;
}

function components(text: string, name: string): ICAL.Component[] {
  let parsed: unknown;
  try {
    parsed = ICAL.parse(text);
  } catch (e) {
    throw new DataError(`Not a valid ${name === 'vcard' ? 'vCard' : 'iCalendar'} file: ${(e as Error).message}`);
  }
  // One component parses to ['vcard', props, subs]; several to a list of them.
  const list = (Array.isArray(parsed) && typeof parsed[0] === 'string' ? [parsed] : parsed) as unknown[];
  const comps = list.map((j) => new ICAL.Component(j as never)).filter((c) => c.name === name);
  if (!comps.length) throw new DataError(`No ${name.toUpperCase()} found.`);
  return comps;
}

function propsToRecord(c: ICAL.Component, skip: Set<string>): Rec {
  const rec: Rec = {};
  for (const p of c.getAllProperties()) {
    if (skip.has(p.name)) continue;
    const text = p.getValues().map((v: unknown) => (Array.isArray(v) ? v.join(';') : String(v))).join(',');
    let key = p.name;
    for (let n = 2; key in rec; n++) key = `${p.name} ${n}`;
    rec[key] = text;
  }
  return rec;
}

const norm = (k: string): string => k.toLowerCase().replace(/[\s_-]+/g, '');

function pick(rec: Rec, names: readonly string[]): string | undefined {
  const wanted = names.map(norm);
  for (const [k, v] of Object.entries(rec)) if (v !== '' && wanted.includes(norm(k))) return v;
  return undefined;
}

/** Every value whose column is one of `names` or a numbered repeat (`email 2`). */
function pickAll(rec: Rec, names: readonly string[]): string[] {
  const wanted = names.map(norm);
  return Object.entries(rec).filter(([k, v]) => v !== '' && wanted.includes(norm(k).replace(/\d+$/, ''))).map(([, v]) => v);
}

const escapeText = (s: string): string => s.replace(/\\/g, '\\\\').replace(/\r?\n/g, '\\n').replace(/([,;])/g, '\\$1');
/** Structured values (N, ADR) keep their `;` separators. */
const escapeStructured = (s: string): string => s.replace(/\\/g, '\\\\').replace(/\r?\n/g, '\\n').replace(/,/g, '\\,');

/** Folds a content line at 75 octets without splitting a UTF-8 sequence. */
export function fold(line: string): string {
  const out: string[] = [];
  let cur = '';
  let bytes = 0;
  for (const ch of line) {
    const b = Buffer.byteLength(ch);
    if (bytes + b > (out.length ? 74 : 75)) {
      out.push(cur);
      cur = '';
      bytes = 0;
    }
    cur += ch;
    bytes += b;
  }
  out.push(cur);
  return out.join('\r\n ');
}

const FIELDS: readonly { prop: string; names: readonly string[]; structured?: boolean; many?: boolean }[] = [
  { prop: 'N', names: ['n'], structured: true },
  { prop: 'EMAIL', names: ['email', 'e-mail', 'mail', 'email address', 'e-mail address'], many: true },
  { prop: 'TEL', names: ['tel', 'phone', 'telephone', 'mobile', 'phone number'], many: true },
  { prop: 'ORG', names: ['org', 'organization', 'organisation', 'company'] },
  { prop: 'TITLE', names: ['title', 'job title'] },
  { prop: 'ADR', names: ['adr', 'address'], structured: true },
  { prop: 'URL', names: ['url', 'website', 'web page'] },
  { prop: 'BDAY', names: ['bday', 'birthday'] },
  { prop: 'NOTE', names: ['note', 'notes'] },
];

/** vCard 4.0 text from records (a value read from any data format). */
export function writeVcards(value: unknown): string {
  const cards: string[] = [];
  for (const raw of toRecords(value)) {
    const rec = flatten(raw);
    const email = pickAll(rec, ['email', 'e-mail', 'mail', 'email address', 'e-mail address'])[0];
    const fn = pick(rec, ['fn', 'name', 'full name', 'display name', 'formatted name']) ?? email;
    if (!fn) continue;
    const lines = ['BEGIN:VCARD', 'VERSION:4.0', `FN:${escapeText(fn)}`];
    for (const f of FIELDS) {
      const values = f.many ? pickAll(rec, f.names) : [pick(rec, f.names)].filter((v): v is string => v !== undefined);
      for (const v of values) lines.push(`${f.prop}:${f.structured ? escapeStructured(v) : escapeText(v)}`);
    }
    lines.push('END:VCARD');
    cards.push(lines.map(fold).join('\r\n'));
  }
  if (!cards.length) throw new DataError('No contact found: the records need a name (name, full name, fn) or an e-mail column.');
  return `${cards.join('\r\n')}\r\n`;
}

/** An iCalendar DATE or DATE-TIME from common spellings (ISO 8601, with or without `Z`). */
function icalTime(s: string): { value: string; date: boolean } | undefined {
  const t = s.trim();
  let m = /^(\d{4})-?(\d{2})-?(\d{2})$/.exec(t);
  if (m) return { value: `${m[1]}${m[2]}${m[3]}`, date: true };
  m = /^(\d{4})-?(\d{2})-?(\d{2})[T ](\d{2}):?(\d{2})(?::?(\d{2}))?(?:\.\d+)?(Z)?$/.exec(t);
  if (m) return { value: `${m[1]}${m[2]}${m[3]}T${m[4]}${m[5]}${m[6] ?? '00'}${m[7] ?? ''}`, date: false };
  return undefined;
}

const stamp = (d: Date): string => d.toISOString().replace(/[-:]/g, '').replace(/\.\d+/, '');

/** iCalendar text (VEVENTs) from records; `now` is the DTSTAMP. */
export function writeEvents(value: unknown, now = new Date()): string {
  const lines = ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//mailconv//converter//EN', 'CALSCALE:GREGORIAN'];
  let n = 0;
  for (const [i, raw] of toRecords(value).entries()) {
    const rec = flatten(raw);
    const summary = pick(rec, ['summary', 'title', 'subject', 'event', 'name']);
    const start = icalTime(pick(rec, ['dtstart', 'start', 'start date', 'start time', 'begin', 'date']) ?? '');
    if (!summary || !start) continue;
    const endText = pick(rec, ['dtend', 'end', 'end date', 'end time']);
    const end = endText ? icalTime(endText) : undefined;
    const uid = pick(rec, ['uid', 'id']) ?? `${stamp(now)}-${i}@mailconv`;
    lines.push('BEGIN:VEVENT', `UID:${escapeText(uid)}`, `DTSTAMP:${stamp(now)}`, `SUMMARY:${escapeText(summary)}`);
    lines.push(start.date ? `DTSTART;VALUE=DATE:${start.value}` : `DTSTART:${start.value}`);
    if (end) lines.push(end.date ? `DTEND;VALUE=DATE:${end.value}` : `DTEND:${end.value}`);
    for (const [prop, names] of [['LOCATION', ['location', 'place', 'where']], ['DESCRIPTION', ['description', 'notes', 'note', 'details']], ['STATUS', ['status']], ['URL', ['url']]] as const) {
      const v = pick(rec, names);
      if (v) lines.push(`${prop}:${prop === 'STATUS' || prop === 'URL' ? v.replace(/[\r\n]/g, ' ') : escapeText(v)}`);
    }
    lines.push('END:VEVENT');
    n += 1;
  }
  if (!n) throw new DataError('No event found: the records need a title (summary, title, subject) and a start (dtstart, start, date) in ISO 8601.');
  lines.push('END:VCALENDAR');
  return `${lines.map(fold).join('\r\n')}\r\n`;
}
