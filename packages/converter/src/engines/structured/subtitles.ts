/**
 * Subtitles through subsrt-ts: parsed into captions (start, end, text) and built in the
 * target format. Three of its readers are worked around here (subsrt-ts 2.1): MicroDVD
 * (`sub`) frames are converted with milliseconds as seconds, so frames are set and read
 * here (25 fps assumed both ways, as most tools do); ASS/SSA dialogue text loses its first
 * character, so `Dialogue:` lines are read here; SAMI needs `<P>` right after `<SYNC>`.
 */
import subsrt from 'subsrt-ts';
import { DataError } from './records.js';

/** The subtitle formats read and written. */
export const SUBTITLE_FORMATS = ['srt', 'vtt', 'ass', 'ssa', 'sub', 'sbv', 'lrc', 'smi'] as const;
const FPS = 25;

interface Cue {
  start: number;
  end: number;
  text: string;
}

/** ASS/SSA events: the `Format:` line of `[Events]` names the columns; Text is the last one and may hold commas. */
function readAss(text: string): Cue[] {
  const cues: Cue[] = [];
  let columns: string[] = [];
  let inEvents = false;
  const time = (t: string): number => {
    const m = /^(\d+):(\d{1,2}):(\d{1,2})(?:[.,](\d{1,3}))?$/.exec(t.trim());
    if (!m) return Number.NaN;
    return ((Number(m[1]) * 60 + Number(m[2])) * 60 + Number(m[3])) * 1000 + Number((m[4] ?? '0').padEnd(3, '0').slice(0, 3));
  };
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line.startsWith('[')) inEvents = /^\[events\]$/i.test(line);
    else if (inEvents && /^format:/i.test(line)) columns = line.slice(7).split(',').map((c) => c.trim().toLowerCase());
    else if (inEvents && /^dialogue:/i.test(line) && columns.length) {
      const values = line.slice(9).split(',');
      const head = values.slice(0, columns.length - 1).map((v) => v.trim());
      const body = values.slice(columns.length - 1).join(',');
      const start = time(head[columns.indexOf('start')] ?? '');
      const end = time(head[columns.indexOf('end')] ?? '');
      const txt = body.replace(/\{[^}]*\}/g, '').replace(/\\[Nn]/g, '\n').trim();
      if (Number.isFinite(start) && Number.isFinite(end) && txt) cues.push({ start, end, text: txt });
    }
  }
  return cues;
}

function parse(body: string, from: string): Cue[] {
  if (from === 'ass' || from === 'ssa') return readAss(body);
  const text = from === 'smi' ? body.replace(/(<SYNC[^>]*>)\s+/gi, '$1') : body;
  const captions = subsrt.parse(text, { format: from });
  const cues: Cue[] = [];
  for (const c of captions) {
    if (c.type !== 'caption') continue;
    if (from === 'sub' && c.frame) cues.push({ start: Math.round((c.frame.start * 1000) / FPS), end: Math.round((c.frame.end * 1000) / FPS), text: c.text });
    else cues.push({ start: c.start, end: c.end, text: c.text });
  }
  return cues;
}

/** Converts subtitle text from one format to another. */
export function convertSubtitles(text: string, from: string, to: string): string {
  const body = (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).replace(/\r\n?/g, '\n');
  const cues = parse(body, from).map((c) => ({ ...c, text: c.text.replace(/\r\n?/g, '\n').trim() })).filter((c) => c.text !== '');
  if (!cues.length) throw new DataError(`No subtitle found in the ${from} file.`);
  const captions = cues.map((c, i) => ({
    type: 'caption' as const, index: i + 1, start: c.start, end: c.end, duration: c.end - c.start, content: c.text, text: c.text,
    ...(to === 'sub' ? { frame: { start: Math.round((c.start * FPS) / 1000), end: Math.round((c.end * FPS) / 1000), count: Math.round(((c.end - c.start) * FPS) / 1000) } } : {}),
  }));
  return subsrt.build(captions, { format: to, eol: '\n' });
}
