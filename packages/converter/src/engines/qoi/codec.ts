/**
 * QOI (the "Quite OK Image" format) with `qoijs`, bounded: the 14-byte header is read and
 * checked — magic, channels, colour space, sides, pixel count against the job's budget, the
 * file's size against the most a QOI of those sides can take — before anything is allocated
 * for pixels; a file without QOI's end marker (truncated) or with fewer chunks than its sides
 * need is refused. Pure functions; the engine runs them in a worker thread (`worker.ts`).
 */
import { createRequire } from 'node:module';

/** The QOI header. */
export interface QoiHeader {
  readonly width: number;
  readonly height: number;
  /** 3 (RGB) or 4 (RGBA). */
  readonly channels: 3 | 4;
  /** 0: sRGB with linear alpha; 1: all channels linear. */
  readonly colorspace: 0 | 1;
}

/** A refusal whose message is safe to show (no path, no library internals). */
export class QoiError extends Error {}

export const QOI_HEADER_BYTES = 14;
const END_MARKER = Buffer.from([0, 0, 0, 0, 0, 0, 0, 1]);

interface QoiJs {
  decode(buffer: ArrayBufferLike, byteOffset?: number, byteLength?: number, outputChannels?: number): { width: number; height: number; channels: number; colorspace: number; data: Uint8Array };
  encode(colorData: Uint8Array, description: { width: number; height: number; channels: number; colorspace: number }): ArrayBuffer;
}
const qoijs = createRequire(import.meta.url)('qoijs') as QoiJs;

/** Reads a QOI header; throws {@link QoiError} when `head` is not one. */
export function qoiHeader(head: Uint8Array): QoiHeader {
  const b = Buffer.from(head.buffer, head.byteOffset, head.byteLength);
  if (b.length < QOI_HEADER_BYTES || b.toString('latin1', 0, 4) !== 'qoif') throw new QoiError('The file is not a QOI image (no "qoif" header).');
  const width = b.readUInt32BE(4);
  const height = b.readUInt32BE(8);
  const channels = b[12];
  const colorspace = b[13];
  if (channels !== 3 && channels !== 4) throw new QoiError(`The QOI header declares ${channels} channels; QOI has 3 or 4.`);
  if (colorspace !== 0 && colorspace !== 1) throw new QoiError(`The QOI header declares colour space ${colorspace}; QOI has 0 or 1.`);
  if (width === 0 || height === 0) throw new QoiError(`The QOI image is ${width}×${height} pixels: empty.`);
  return { width, height, channels, colorspace };
}

/**
 * Checks a header against the pixel budget and the file's size (a QOI of w × h pixels takes
 * at most w·h·(channels + 1) + 22 bytes; at least its header and end marker).
 */
export function checkQoiBounds(h: QoiHeader, fileBytes: number, maxPixels: number): void {
  const pixels = h.width * h.height;
  if (pixels > maxPixels) throw new QoiError(`The image is ${h.width}×${h.height} pixels, over the ${maxPixels / 1e6} megapixels a conversion accepts.`);
  if (fileBytes < QOI_HEADER_BYTES + END_MARKER.length) throw new QoiError('The QOI file is truncated.');
  if (fileBytes > pixels * (h.channels + 1) + QOI_HEADER_BYTES + END_MARKER.length) throw new QoiError('The QOI file is larger than its sides allow: it is not a valid QOI image.');
}

/** Decodes a whole QOI file (already bounded by {@link checkQoiBounds}) to its pixels, `channels` a pixel. */
export function decodeQoi(file: Uint8Array, maxPixels: number): QoiHeader & { readonly pixels: Uint8Array } {
  const h = qoiHeader(file);
  checkQoiBounds(h, file.byteLength, maxPixels);
  if (!Buffer.from(file.buffer, file.byteOffset + file.byteLength - END_MARKER.length, END_MARKER.length).equals(END_MARKER)) {
    throw new QoiError('The QOI file is truncated (no end marker).');
  }
  // The chunks must hold exactly the declared pixels: qoijs (like the reference decoder) would
  // repeat the last pixel past a cut stream and return a picture the file does not hold.
  const held = chunkPixels(file);
  if (held !== h.width * h.height) {
    throw new QoiError(`The QOI file holds ${held} pixels where its header declares ${h.width * h.height} (truncated or damaged).`);
  }
  let data: Uint8Array;
  try {
    ({ data } = qoijs.decode(file.buffer, file.byteOffset, file.byteLength, h.channels));
  } catch (e) {
    throw new QoiError(/incomplete/i.test((e as Error).message) ? 'The QOI file holds fewer pixels than its header declares (truncated or damaged).' : 'The QOI file is damaged.');
  }
  return { ...h, pixels: data };
}

/**
 * The pixels QOI's chunks encode, from the header to the end marker (no pixel decoded); -1
 * when a chunk runs into the end marker.
 */
export function chunkPixels(file: Uint8Array): number {
  const end = file.byteLength - END_MARKER.length;
  let pixels = 0;
  let p = QOI_HEADER_BYTES;
  while (p < end) {
    const op = file[p] as number;
    if (op === 0xfe) p += 4; // QOI_OP_RGB
    else if (op === 0xff) p += 5; // QOI_OP_RGBA
    else if (op >> 6 === 2) p += 2; // QOI_OP_LUMA
    else p += 1; // QOI_OP_INDEX, QOI_OP_DIFF, QOI_OP_RUN
    pixels += op >> 6 === 3 && op < 0xfe ? (op & 0x3f) + 1 : 1;
  }
  return p === end ? pixels : -1;
}

/** Encodes `pixels` (`channels` bytes a pixel, sRGB) as a QOI file. */
export function encodeQoi(pixels: Uint8Array, width: number, height: number, channels: 3 | 4): Uint8Array {
  if (pixels.byteLength !== width * height * channels) throw new QoiError('The picture could not be encoded as QOI (pixel data of the wrong size).');
  // qoijs checks the class by name: a Buffer must be passed as a plain Uint8Array view.
  const view = new Uint8Array(pixels.buffer, pixels.byteOffset, pixels.byteLength);
  return new Uint8Array(qoijs.encode(view, { width, height, channels, colorspace: 0 }));
}
