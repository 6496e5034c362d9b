/**
 * Independent checks for the targets issue 12's engines write (data, contacts, subtitles,
 * vector, HEIC/JPEG XL, the extra audio formats, archives, 3D models, fonts). Each is judged by
 * a program other than the one that wrote it: Python's standard parsers, libmagic, FFmpeg,
 * librsvg, Ghostscript's bbox device, 7-Zip, FreeType (fc-scan), or a parse written here.
 */
import { readFile } from 'node:fs/promises';
import { runTool as run } from '../tools.js';

const py = async (code: string, path: string): Promise<string> => {
  const r = await run('/usr/bin/python3', ['-c', `import sys,json,csv,tomllib,yaml,configparser\nimport xml.etree.ElementTree as ET\np=sys.argv[1]\n${code}`, path]);
  if (r.code !== 0) throw new Error(`python: ${r.stderr.trim().split('\n').pop() ?? ''}`);
  return r.stdout.toString('utf8').trim();
};
const mime = async (path: string): Promise<string> => (await run('/usr/bin/file', ['-b', '--mime-type', path])).stdout.toString('utf8').trim();
const describe = async (path: string): Promise<string> => (await run('/usr/bin/file', ['-b', path])).stdout.toString('utf8').trim();

/** Python parses the data and counts what it found (a table must have rows). */
const DATA: Readonly<Record<string, string>> = {
  tsv: 'rows=list(csv.reader(open(p,encoding="utf-8",newline=""),delimiter="\\t"))\nassert len(rows)>1, "no rows"\nprint(f"python csv (tab): {len(rows)} rows")',
  json: 'v=json.load(open(p,encoding="utf-8"))\nprint(f"python json: {type(v).__name__}")',
  ndjson: 'n=[json.loads(l) for l in open(p,encoding="utf-8") if l.strip()]\nassert n, "no lines"\nprint(f"python json: {len(n)} lines")',
  yaml: 'v=yaml.safe_load(open(p,encoding="utf-8"))\nassert v is not None, "empty"\nprint(f"python yaml: {type(v).__name__}")',
  toml: 'v=tomllib.load(open(p,"rb"))\nassert v, "empty"\nprint(f"python tomllib: {len(v)} keys")',
  xml: 'r=ET.parse(p).getroot()\nprint(f"python ElementTree: <{r.tag}> {len(list(r.iter()))} elements")',
  ini: 'c=configparser.ConfigParser(interpolation=None)\nc.read(p,encoding="utf-8")\nassert c.sections(), "no sections"\nprint(f"python configparser: {len(c.sections())} sections")',
  // The data engine's npm libraries wrote these; Debian's Python packages read them.
  json5: 'import json5\nv=json5.load(open(p,encoding="utf-8"))\nassert v is not None, "empty"\nprint(f"python json5: {type(v).__name__}")',
  plist: 'import plistlib\nb=open(p,"rb").read()\nassert b.lstrip().startswith(b"<?xml"), "not an XML plist"\nv=plistlib.loads(b,fmt=plistlib.FMT_XML)\nprint(f"python plistlib (XML): {type(v).__name__}")',
  msgpack: 'import msgpack\nv=msgpack.unpackb(open(p,"rb").read(),raw=False,strict_map_key=False,timestamp=3)\nassert isinstance(v,(list,dict)), "not a container"\nprint(f"python msgpack: {type(v).__name__} of {len(v)}")',
  cbor: 'import cbor2,io\nf=io.BytesIO(open(p,"rb").read())\nv=cbor2.CBORDecoder(f).decode()\nassert not f.read(), "trailing bytes"\nassert isinstance(v,(list,dict)), "not a container"\nprint(f"python cbor2: {type(v).__name__} of {len(v)}")',
  bson: 'import bson\nd=bson.decode_all(open(p,"rb").read())\nassert len(d)==1 and d[0], "not one document"\nprint(f"python bson: 1 document, {len(d[0])} keys")',
  properties: 'import javaproperties\nv=javaproperties.load(open(p,encoding="utf-8"))\nassert v, "no properties"\nprint(f"python javaproperties: {len(v)} keys")',
  geojson: 'import geojson\no=geojson.loads(open(p,encoding="utf-8").read())\nassert o.get("type") in ("FeatureCollection","Feature") and o.is_valid, o.errors()\nprint(f"python geojson: valid {o.type}, {len(o.get(\'features\',[o]))} features")',
  // Markup with a checkable shape (pandoc wrote it; pandoc does not referee itself).
  bib: 'import bibtexparser\ndb=bibtexparser.load(open(p,encoding="utf-8"))\nassert db.entries and all("ID" in e and "ENTRYTYPE" in e for e in db.entries), "no entries"\nprint(f"python bibtexparser: {len(db.entries)} entries")',
  zimwiki: 'l=open(p,encoding="utf-8").read().split("\\n")\nassert l[0]=="Content-Type: text/x-zim-wiki" and l[1].startswith("Wiki-Format: zim"), "no Zim page header"\nprint("zim page header: ok")',
  mkiv: 'import re\nt=open(p,encoding="utf-8").read()\na,b=t.find("\\\\starttext"),t.find("\\\\stoptext")\nassert 0<=a<b, "no \\\\starttext … \\\\stoptext"\nassert "\\\\documentclass" not in t, "LaTeX, not ConTeXt"\ns=re.sub(r"\\\\.","",t)\nd=0\nfor c in s:\n  d+={"{":1,"}":-1}.get(c,0)\n  assert d>=0, "unbalanced braces"\nassert d==0, "unbalanced braces"\nprint("ConTeXt: \\\\starttext … \\\\stoptext, braces balanced")',
};
/** FFmpeg's demuxer per subtitle target. */
const SUBTITLE_DEMUXER: Readonly<Record<string, string>> = { srt: 'srt', vtt: 'webvtt', ass: 'ass', ssa: 'ass', sub: 'microdvd', lrc: 'lrc', smi: 'sami' };
/** ffprobe's format name per audio target. */
const AUDIO: Readonly<Record<string, string>> = {
  aiff: 'aiff', au: 'au', caf: 'caf', w64: 'w64', wv: 'wv', voc: 'voc', '8svx': 'iff', avr: 'avr', sph: 'nistsphere', amr: 'amr',
};
/** libmagic's MIME type per target where it knows the format. */
const MAGIC: Readonly<Record<string, readonly string[]>> = {
  vcf: ['text/vcard', 'text/x-vcard'], ics: ['text/calendar'], heic: ['image/heic'], jxl: ['image/jxl'], wmf: ['image/wmf'],
  eps: ['application/postscript'], ps: ['application/postscript'],
  zip: ['application/zip'], '7z': ['application/x-7z-compressed'], tar: ['application/x-tar'], tgz: ['application/gzip'],
  tbz2: ['application/x-bzip2'], txz: ['application/x-xz'], cpio: ['application/x-cpio'], iso: ['application/x-iso9660-image'],
  ttf: ['font/sfnt', 'application/font-sfnt'], otf: ['application/vnd.ms-opentype', 'font/otf', 'font/sfnt'], woff: ['font/woff'], woff2: ['font/woff2'],
  pfb: ['font/x-postscript-pfb', 'application/x-font-type1'], sfd: ['application/vnd.font-fontforge-sfd'],
  glb: ['model/gltf-binary'], dae: ['model/vnd.collada+xml'], qoi: ['image/x-qoi'],
};
const ARCHIVES = new Set(['zip', '7z', 'tar', 'tgz', 'tbz2', 'txz', 'cpio', 'iso']);
const FONTS = new Set(['ttf', 'otf', 'woff', 'woff2', 'pfb']);
const MODELS = new Set(['obj', 'stl', 'ply', 'glb', 'dae', '3ds', 'x', '3mf']);

/** The targets judged here. */
export function canValidateExtra(to: string): boolean {
  return to in DATA || to in SUBTITLE_DEMUXER || to in AUDIO || to in MAGIC || MODELS.has(to) || ['sbv', 'svg', 'svgz', 'emf'].includes(to);
}

async function expectMagic(path: string, to: string): Promise<string> {
  const m = await mime(path);
  if (!(MAGIC[to] ?? []).includes(m)) throw new Error(`file: ${m}`);
  return `file: ${m}`;
}

/** Judges `path` as a `to` file; throws with the reason when it is not one. */
export async function judgeExtra(path: string, to: string): Promise<string> {
  if (to in DATA) return py(DATA[to] as string, path);
  if (to in SUBTITLE_DEMUXER) {
    const r = await run('/usr/bin/ffmpeg', ['-v', 'error', '-f', SUBTITLE_DEMUXER[to] as string, ...(to === 'sub' ? ['-subfps', '25'] : []), '-i', path, '-f', 'srt', '-']);
    const cues = (r.stdout.toString('utf8').match(/-->/g) ?? []).length;
    if (r.code !== 0 || cues === 0) throw new Error(`ffmpeg ${SUBTITLE_DEMUXER[to]}: ${r.stderr.trim().split('\n')[0] ?? 'no cues'}`);
    return `ffmpeg ${SUBTITLE_DEMUXER[to]}: ${cues} cues`;
  }
  if (to === 'sbv') {
    // SubViewer: blocks of "h:mm:ss.mmm,h:mm:ss.mmm" and text; nothing else here reads it, so Python's regex does.
    return py('import re\nb=[x for x in re.split(r"\\n\\s*\\n", open(p,encoding="utf-8").read().strip()) if x]\nassert b and all(re.match(r"^\\d+:\\d{2}:\\d{2}\\.\\d{3},\\d+:\\d{2}:\\d{2}\\.\\d{3}\\n.+", x) for x in b), "not SubViewer"\nprint(f"python re: {len(b)} SubViewer cues")', path);
  }
  if (to in AUDIO) {
    const r = await run('/usr/bin/ffprobe', ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', path]);
    const info = JSON.parse(r.stdout.toString('utf8') || '{}') as { format?: { format_name?: string; duration?: string }; streams?: { codec_type?: string; codec_name?: string }[] };
    const audio = info.streams?.find((s) => s.codec_type === 'audio');
    if (r.code !== 0 || !(info.format?.format_name ?? '').split(',').includes(AUDIO[to] as string) || !audio || !(Number(info.format?.duration) > 0)) {
      throw new Error(`ffprobe: ${info.format?.format_name ?? 'unreadable'}`);
    }
    return `ffprobe: ${info.format?.format_name} ${audio.codec_name}, ${Number(info.format?.duration).toFixed(2)} s`;
  }
  if (to === 'svg' || to === 'svgz') {
    // librsvg renders it (Inkscape or potrace wrote it; rsvg writes no SVG).
    const r = await run('/usr/bin/rsvg-convert', ['-f', 'png', path]);
    if (r.code !== 0 || r.stdout.length < 8) throw new Error(`rsvg-convert: ${r.stderr.trim().split('\n')[0] ?? 'nothing rendered'}`);
    return `rsvg-convert: rendered ${r.stdout.length} bytes of PNG`;
  }
  if (to === 'eps' || to === 'ps') {
    const m = await expectMagic(path, to);
    if (to === 'eps' && !/type EPS/.test(await describe(path))) throw new Error('file: not EPS');
    const r = await run('/usr/bin/gs', ['-dSAFER', '-dBATCH', '-dNOPAUSE', '-q', '-sDEVICE=bbox', path]);
    const box = /%%BoundingBox: (\d+) (\d+) (\d+) (\d+)/.exec(r.stderr);
    if (!box) throw new Error('gs bbox: nothing drawn');
    return `${m}; gs bbox: ${box.slice(1).join(' ')}`;
  }
  if (to === 'emf') {
    const d = await describe(path);
    if (!/Windows Enhanced Metafile/.test(d)) throw new Error(`file: ${d}`);
    return `file: ${d.slice(0, 60)}`;
  }
  if (ARCHIVES.has(to)) {
    const m = await expectMagic(path, to);
    // 7-Zip lists and tests it (bsdtar wrote it).
    const t = await run('/usr/bin/7z', ['t', '-bd', path]);
    const files = /Files: (\d+)/.exec(t.stdout.toString('utf8'))?.[1] ?? (/Everything is Ok/.test(t.stdout.toString('utf8')) ? '1' : undefined);
    if (t.code !== 0 || !files) throw new Error(`7z t: ${t.stdout.toString('utf8').trim().split('\n').pop() ?? ''}`);
    return `${m}; 7z t: ok, ${files} files`;
  }
  if (FONTS.has(to)) {
    const m = await expectMagic(path, to);
    const family = (await run('/usr/bin/fc-scan', ['--format', '%{family}', path])).stdout.toString('utf8').trim();
    if (!family) throw new Error('fc-scan: no font');
    return `${m}; fc-scan: ${family}`;
  }
  if (MODELS.has(to)) return `parsed: ${await meshVertices(path, to)} vertices`;
  if (to in MAGIC) {
    const m = await expectMagic(path, to);
    if (to === 'qoi') return `${m}; ${await qoiReferee(path)}`;
    if (to === 'heic' || to === 'jxl') {
      // ImageMagick decodes HEIC through libheif (libheif-examples wrote it); JPEG XL through jxlinfo's container check.
      const r = to === 'heic' ? await run('/usr/bin/identify', [path]) : await run('/usr/bin/jxlinfo', [path]);
      if (r.code !== 0) throw new Error(`${to === 'heic' ? 'identify' : 'jxlinfo'}: ${r.stderr.trim().split('\n')[0]}`);
    }
    return m;
  }
  throw new Error(`no independent check for ${to}`);
}

/**
 * A QOI output (qoijs wrote it): its header parsed here, its end marker present, and every
 * pixel decoded by FFmpeg's own QOI decoder — as many RGBA pixels as the header declares.
 */
export async function qoiReferee(path: string): Promise<string> {
  const b = await readFile(path);
  if (b.length < 22 || b.toString('latin1', 0, 4) !== 'qoif') throw new Error('qoi header: no "qoif" magic');
  const [width, height, channels, colorspace] = [b.readUInt32BE(4), b.readUInt32BE(8), b[12], b[13]];
  if (!(width > 0 && height > 0) || (channels !== 3 && channels !== 4) || (colorspace !== 0 && colorspace !== 1)) throw new Error(`qoi header: ${width}x${height}, ${channels} channels, colour space ${colorspace}`);
  if (!b.subarray(b.length - 8).equals(Buffer.from([0, 0, 0, 0, 0, 0, 0, 1]))) throw new Error('qoi: no end marker');
  const r = await run('/usr/bin/ffmpeg', ['-v', 'error', '-f', 'qoi_pipe', '-i', path, '-f', 'rawvideo', '-pix_fmt', 'rgba', '-']);
  if (r.code !== 0 || r.stdout.length !== width * height * 4) throw new Error(`ffmpeg qoi: ${r.stdout.length} bytes decoded for ${width}x${height} (${r.stderr.trim().split('\n')[0] ?? ''})`);
  return `qoi header: ${width}x${height}, ${channels} channels; ffmpeg qoi: ${width * height} pixels decoded`;
}

/** Vertices of a 3D file, parsed here (assimp wrote it); throws when there are none. */
export async function meshVertices(path: string, ext: string): Promise<number> {
  const b = await readFile(path);
  const text = b.toString('latin1');
  let n = Number.NaN;
  switch (ext) {
    case 'obj': n = (text.match(/^v\s/gm) ?? []).length; break;
    case 'stl': n = text.startsWith('solid') && /facet/.test(text.slice(0, 400)) ? (text.match(/vertex\s/g) ?? []).length : b.length === 84 + 50 * b.readUInt32LE(80) ? b.readUInt32LE(80) * 3 : Number.NaN; break;
    case 'ply': n = Number(/^ply\r?\n[\s\S]*?element vertex (\d+)/.exec(text)?.[1]); break;
    case 'glb': {
      if (text.slice(0, 4) !== 'glTF' || b.readUInt32LE(8) !== b.length) break;
      const json = JSON.parse(b.subarray(20, 20 + b.readUInt32LE(12)).toString('utf8')) as { accessors?: { count: number }[]; meshes?: { primitives: { attributes: { POSITION?: number } }[] }[] };
      n = (json.meshes ?? []).flatMap((m) => m.primitives).reduce((s, p) => s + (json.accessors?.[p.attributes.POSITION ?? -1]?.count ?? 0), 0);
      break;
    }
    case 'dae': n = Number(/<float_array[^>]*count="(\d+)"/.exec(text)?.[1]) / 3; break;
    case 'x': n = text.startsWith('xof ') ? Number(/Mesh[^{]*\{\s*(\d+);/.exec(text)?.[1]) : Number.NaN; break;
    case '3ds': {
      // Main chunk 0x4D4D whose length is the file's; the first POINT_ARRAY (0x4110) holds the count.
      const at = b.indexOf(Buffer.from([0x10, 0x41]));
      n = b.readUInt16LE(0) === 0x4d4d && b.readUInt32LE(2) === b.length && at > 0 ? b.readUInt16LE(at + 6) : Number.NaN;
      break;
    }
    case '3mf': {
      // The model part is `3D/3dmodel.model` by convention (assimp writes `3D/3DModel.model`).
      const r = await run('/usr/bin/unzip', ['-p', path, '3D/*.model']);
      n = (r.stdout.toString('utf8').match(/<vertex /g) ?? []).length;
      break;
    }
    default: break;
  }
  if (!(n > 0)) throw new Error(`no mesh found in the ${ext} file`);
  return n;
}
