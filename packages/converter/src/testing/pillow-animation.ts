/**
 * Pillow (Debian's python3-pil) as the referee of animations the converter reads or writes
 * (issue 31): an APNG, GIF or WebP as Pillow opens it — its MIME type, the frames of the
 * animation, each composed on the canvas (APNG blend and dispose operations, GIF disposal,
 * WebP's ANMF frames through libwebp's demuxer), each frame's duration and the loop count.
 * An APNG's default image that is not part of the animation (Pillow's `default_image`) is
 * left out, as APNG viewers leave it out. Used by tests only.
 */
import { mkdir } from 'node:fs/promises';
import { tool } from './tools.js';

const PYTHON = '/usr/bin/python3';

const SCRIPT = `
import json, os, sys
from PIL import Image
path, out = sys.argv[1], sys.argv[2]
im = Image.open(path)
skip = 1 if im.info.get('default_image') else 0
n = getattr(im, 'n_frames', 1)
frames, durations = [], []
for i in range(skip, n):
    im.seek(i)
    f = os.path.join(out, 'p-%05d.png' % i)
    im.convert('RGBA').save(f)
    # Read after the frame is loaded (WebP sets it then).
    durations.append(im.info.get('duration'))
    frames.append(f)
im.seek(0)
print(json.dumps({'format': im.format, 'mime': im.get_format_mimetype(), 'loop': im.info.get('loop'), 'durations': durations, 'frames': frames, 'size': list(im.size)}))
`;

/** What Pillow reads of an animation (or a still: one frame). */
export interface PillowAnimation {
  readonly format: string;
  readonly mime: string;
  /** The loop count (0 forever); null when the file says none (a GIF without a NETSCAPE block plays once). */
  readonly loop: number | null;
  /** Each frame's duration in ms (null when the file gives none). */
  readonly delaysMs: readonly (number | null)[];
  /** Each frame of the animation, composed, as an RGBA PNG. */
  readonly frames: readonly string[];
  readonly width: number;
  readonly height: number;
}

/** Reads `path` with Pillow, writing its frames into `dir`. */
export async function pillowAnimation(path: string, dir: string): Promise<PillowAnimation> {
  await mkdir(dir, { recursive: true });
  const r = JSON.parse(tool(PYTHON, ['-c', SCRIPT, path, dir])) as { format: string; mime: string; loop: number | null; durations: (number | null)[]; frames: string[]; size: [number, number] };
  return { format: r.format, mime: r.mime, loop: r.loop ?? null, delaysMs: r.durations, frames: r.frames, width: r.size[0], height: r.size[1] };
}

/** The RGBA value of a pixel of a picture, as Pillow reads it. */
export function pillowPixel(path: string, x: number, y: number): number[] {
  const out = tool(PYTHON, ['-c', 'import sys, json\nfrom PIL import Image\nprint(json.dumps(list(Image.open(sys.argv[1]).convert("RGBA").getpixel((int(sys.argv[2]), int(sys.argv[3]))))))', path, String(x), String(y)]);
  return JSON.parse(out) as number[];
}
