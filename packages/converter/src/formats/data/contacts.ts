/** Contacts and calendars. */
import type { FormatEntry } from '../catalogue.js';

export const CONTACTS: readonly FormatEntry[] = [
  { ext: 'vcf', aliases: ['vcard'], mime_type: 'text/vcard', family: 'contact', name: 'vCard contacts' },
  { ext: 'ics', aliases: ['ical', 'ifb', 'icalendar'], mime_type: 'text/calendar', family: 'calendar', name: 'iCalendar' },
];
