/**
 * A minimal Adobe DNG (camera raw) written from scratch, for the LibRaw engine's tests: an
 * uncompressed 16-bit RGGB Bayer mosaic of a colour gradient with the tags DNG 1.4 requires
 * (no camera's file is needed, so no licence either).
 */

interface Tag {
  readonly tag: number;
  readonly type: number; // 1 BYTE, 2 ASCII, 3 SHORT, 4 LONG, 5 RATIONAL, 10 SRATIONAL
  readonly values: readonly number[] | string;
}

const TYPE_SIZE: Readonly<Record<number, number>> = { 1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 10: 8 };

/** A `width` × `height` DNG (both even). */
export function makeDng(width = 64, height = 48): Buffer {
  const pixels = Buffer.alloc(width * height * 2);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      // RGGB: red rises left to right, blue top to bottom, green stays mid-grey.
      const site = (y % 2) * 2 + (x % 2);
      const v = site === 0 ? (x / width) * 3800 : site === 3 ? (y / height) * 3800 : 1800;
      pixels.writeUInt16LE(Math.round(v) + 100, (y * width + x) * 2);
    }
  }
  const rational = (n: number): number[] => [Math.round(n * 10000), 10000];
  const tags: Tag[] = [
    { tag: 254, type: 4, values: [0] },
    { tag: 256, type: 4, values: [width] },
    { tag: 257, type: 4, values: [height] },
    { tag: 258, type: 3, values: [16] },
    { tag: 259, type: 3, values: [1] },
    { tag: 262, type: 3, values: [32803] },
    { tag: 271, type: 2, values: 'mailconv\0' },
    { tag: 272, type: 2, values: 'test raw\0' },
    { tag: 273, type: 4, values: [0] }, // strip offset, patched below
    { tag: 274, type: 3, values: [1] },
    { tag: 277, type: 3, values: [1] },
    { tag: 278, type: 4, values: [height] },
    { tag: 279, type: 4, values: [pixels.length] },
    { tag: 284, type: 3, values: [1] },
    { tag: 33421, type: 3, values: [2, 2] },
    { tag: 33422, type: 1, values: [0, 1, 1, 2] },
    { tag: 50706, type: 1, values: [1, 4, 0, 0] },
    { tag: 50707, type: 1, values: [1, 1, 0, 0] },
    { tag: 50708, type: 2, values: 'mailconv test raw\0' },
    { tag: 50714, type: 4, values: [100] },
    { tag: 50717, type: 4, values: [4095] },
    { tag: 50721, type: 10, values: [1, 0, 0, 0, 1, 0, 0, 0, 1].flatMap(rational) },
    { tag: 50728, type: 5, values: [1, 1, 1].flatMap(rational) },
    { tag: 50778, type: 3, values: [21] },
  ];
  const ifdSize = 2 + tags.length * 12 + 4;
  let extra = 8 + ifdSize;
  const chunks: Buffer[] = [];
  const entries = Buffer.alloc(ifdSize);
  entries.writeUInt16LE(tags.length, 0);
  const dataAt = (): number => extra + chunks.reduce((n, c) => n + c.length, 0);
  const stripOffsetPos: number[] = [];
  tags.forEach((t, i) => {
    const count = typeof t.values === 'string' ? t.values.length : t.type === 5 || t.type === 10 ? t.values.length / 2 : t.values.length;
    const size = count * (TYPE_SIZE[t.type] ?? 1);
    const buf = Buffer.alloc(Math.max(4, size));
    if (typeof t.values === 'string') buf.write(t.values, 'latin1');
    else t.values.forEach((v, j) => {
      if (t.type === 1) buf.writeUInt8(v, j);
      else if (t.type === 3) buf.writeUInt16LE(v, j * 2);
      else if (t.type === 10) buf.writeInt32LE(v, j * 4);
      else buf.writeUInt32LE(v, j * 4);
    });
    const at = 2 + i * 12;
    entries.writeUInt16LE(t.tag, at);
    entries.writeUInt16LE(t.type, at + 2);
    entries.writeUInt32LE(count, at + 4);
    if (t.tag === 273) stripOffsetPos.push(at + 8);
    if (size <= 4) buf.copy(entries, at + 8, 0, 4);
    else {
      entries.writeUInt32LE(dataAt(), at + 8);
      chunks.push(buf.length % 2 ? Buffer.concat([buf, Buffer.alloc(1)]) : buf);
    }
  });
  extra = dataAt();
  for (const p of stripOffsetPos) entries.writeUInt32LE(extra, p);
  const header = Buffer.from([0x49, 0x49, 0x2a, 0x00, 8, 0, 0, 0]);
  return Buffer.concat([header, entries, ...chunks, pixels]);
}
