/**
 * Second referees for the older raster tail (PICT, OTB, MTV, SIXEL, PGX, HRZ, Cineon, DCX,
 * CALS, AVS, G3, JBIG, VIPS, EV3): a program that is not ImageMagick decodes the output, or,
 * where no such program is packaged (PICT, OTB, EV3, HRZ, CALS), its header is parsed here;
 * either way the picture's sides must be the ones `identify` reported. Netpbm (mtvtoppm,
 * avstopam, g3topbm), jbigkit (jbgtopbm), libsixel (sixel2png), libvips
 * (vipsheader, and `vips avg` over every pixel), FFmpeg's PGX decoder and libmagic (Cineon, DCX)
 * are the programs.
 */
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTool as run } from '../tools.js';

/** Sides of a picture. */
interface Sides {
  readonly width: number;
  readonly height: number;
}

/** Netpbm converters to PNM/PAM, per target. */
const TO_PNM: Readonly<Record<string, string>> = {
  mtv: '/usr/bin/mtvtoppm', avs: '/usr/bin/avstopam', g3: '/usr/bin/g3topbm', jbig: '/usr/bin/jbgtopbm',
};
const PARSED = new Set(['pict', 'otb', 'rgf', 'hrz', 'cals']);

/** Whether `to` has a second referee here. */
export function hasRasterReferee(to: string): boolean {
  return to in TO_PNM || PARSED.has(to) || ['v', 'sixel', 'pgx', 'cin', 'dcx'].includes(to);
}

/** The sides in a PNM (P1–P6) or PAM (P7) header. */
export function pnmSides(b: Buffer): Sides {
  const text = b.subarray(0, 512).toString('latin1');
  if (text.startsWith('P7')) {
    const width = Number(/^WIDTH (\d+)$/m.exec(text)?.[1]);
    const height = Number(/^HEIGHT (\d+)$/m.exec(text)?.[1]);
    return { width, height };
  }
  const m = /^P[1-6]\s+(?:#[^\n]*\s+)*(\d+)\s+(?:#[^\n]*\s+)*(\d+)/.exec(text);
  if (!m) throw new Error('not a Netpbm image');
  return { width: Number(m[1]), height: Number(m[2]) };
}

/**
 * The sides of `path` as a `to` file according to the second referee; throws when the
 * referee rejects it.
 */
export async function rasterSides(path: string, to: string): Promise<{ sides: Sides; by: string }> {
  const tool = TO_PNM[to];
  if (tool) {
    const r = await run(tool, [path]);
    const name = tool.split('/').pop() as string;
    if (r.code !== 0 || r.stdout.length === 0) throw new Error(`${name}: ${r.stderr.trim().split('\n').pop() ?? 'no picture'}`);
    return { sides: pnmSides(r.stdout), by: name };
  }
  if (to === 'v') {
    const field = async (f: string): Promise<number> => {
      const r = await run('/usr/bin/vipsheader', ['-f', f, path]);
      if (r.code !== 0) throw new Error(`vipsheader: ${r.stderr.trim().split('\n')[0]}`);
      return Number(r.stdout.toString('utf8').trim());
    };
    // The header alone says nothing of the pixels: `vips avg` reads every one (a cut file fails).
    const avg = await run('/usr/bin/vips', ['avg', path]);
    if (avg.code !== 0) throw new Error(`vips avg: ${avg.stderr.trim().split('\n').pop() ?? ''}`);
    return { sides: { width: await field('width'), height: await field('height') }, by: 'vipsheader' };
  }
  if (to === 'sixel') {
    const dir = await mkdtemp(join(tmpdir(), 'matrix-sixel-'));
    try {
      const png = join(dir, 'decoded.png');
      const r = await run('/usr/bin/sixel2png', ['-i', path, '-o', png]);
      if (r.code !== 0) throw new Error(`sixel2png: ${r.stderr.trim().split('\n')[0]}`);
      const d = await describe(png);
      const m = /^PNG image data, (\d+) x (\d+)/.exec(d);
      if (!m) throw new Error(`sixel2png wrote ${d}`);
      return { sides: { width: Number(m[1]), height: Number(m[2]) }, by: 'sixel2png' };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  if (to === 'pgx') {
    const r = await run('/usr/bin/ffprobe', ['-v', 'error', '-f', 'pgx_pipe', '-show_entries', 'stream=codec_name,width,height', '-of', 'csv=p=0', path]);
    const [codec, width, height] = r.stdout.toString('utf8').trim().split(',');
    if (r.code !== 0 || codec !== 'pgx') throw new Error(`ffprobe: ${codec || r.stderr.trim().split('\n')[0]}`);
    return { sides: { width: Number(width), height: Number(height) }, by: 'ffprobe pgx' };
  }
  if (to === 'cin' || to === 'dcx') {
    const d = await describe(path);
    const m = to === 'cin' ? /^Cineon image data, (\d+) x (\d+)/.exec(d) : /^DCX multi-page.*bounding box \[(\d+), (\d+)\] - \[(\d+), (\d+)\]/.exec(d);
    if (!m) throw new Error(`file: ${d.slice(0, 80)}`);
    const sides = to === 'cin' ? { width: Number(m[1]), height: Number(m[2]) } : { width: Number(m[3]) - Number(m[1]) + 1, height: Number(m[4]) - Number(m[2]) + 1 };
    return { sides, by: 'file' };
  }
  if (PARSED.has(to)) return { sides: await parsedSides(path, to), by: 'header parsed' };
  throw new Error(`no second referee for ${to}`);
}

/** Sides from headers parsed here, for formats no packaged program other than ImageMagick reads. */
async function parsedSides(path: string, to: string): Promise<Sides> {
  const b = await readFile(path);
  const fail = (why: string): never => {
    throw new Error(`${to} header: ${why}`);
  };
  switch (to) {
    case 'pict': {
      // 512-byte application header, picture size, frame (top, left, bottom, right), version 2 opcode.
      if (b.length < 540 || b.readUInt32BE(522) !== 0x001102ff) fail('no version 2 opcode after the 512-byte header');
      return { width: b.readInt16BE(520) - b.readInt16BE(516), height: b.readInt16BE(518) - b.readInt16BE(514) };
    }
    case 'otb': {
      const [info, width = 0, height = 0, depth] = b;
      if (info !== 0 || depth !== 1 || b.length < 4 + Math.ceil((width * height) / 8)) fail('not a one-byte-sides, depth-1 bitmap of its size');
      return { width, height };
    }
    case 'rgf': {
      const [width = 0, height = 0] = b;
      if (b.length !== 2 + Math.ceil(width / 8) * height) fail(`${b.length} bytes for ${width}×${height}`);
      return { width, height };
    }
    case 'hrz': {
      const { size } = await stat(path);
      if (size !== 256 * 240 * 3) fail(`${size} bytes, not 256×240×3`);
      return { width: 256, height: 240 };
    }
    case 'cals': {
      // Type 1 (one CCITT group 4 picture) with 128-byte header records; rpelcnt is "width,height".
      const head = b.subarray(0, 2048).toString('latin1');
      const m = /^rpelcnt: *(\d+) *, *(\d+)/m.exec(head.replace(/(.{128})/g, '$1\n'));
      if (!/^srcdocid:/.test(head) || !/rtype: *1\b/.test(head) || !m) fail('no srcdocid/rtype 1/rpelcnt records');
      return { width: Number(m?.[1]), height: Number(m?.[2]) };
    }
    default:
      return fail('no parser');
  }
}

const describe = async (path: string): Promise<string> => (await run('/usr/bin/file', ['-b', path])).stdout.toString('utf8').trim();
