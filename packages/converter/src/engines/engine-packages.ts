/**
 * Which package brings each thing an engine's probe looks for (issue 44): a binary or file
 * by its absolute path, an npm module as `npm:<name>`. The probes name what is missing from
 * this table ("apt-get install chromium"), and engine-packages.test.ts holds it against the
 * probes and against the lists `npm start` installs (scripts/system-packages/*.txt without
 * the `test-` ones; npm: this package's dependencies), so that no engine can again be
 * probed for something a fresh machine never gets.
 */

/** Where a probed requirement comes from. */
export interface PackageSource {
  readonly manager: 'debian' | 'npm';
  /** The package as listed for `npm start` (a Debian list's line, or a dependency of @mailconv/converter). */
  readonly name: string;
}

const debian = (name: string): PackageSource => ({ manager: 'debian', name });
const npm = (name: string): PackageSource => ({ manager: 'npm', name });

/** Every requirement any engine probes, and its package. */
export const ENGINE_PACKAGES: Readonly<Record<string, PackageSource>> = {
  '/usr/lib/chromium/chromium': debian('chromium'),
  '/usr/lib/libreoffice/program/soffice.bin': debian('libreoffice-writer-nogui'),
  '/usr/lib/python3/dist-packages/uno.py': debian('python3-uno'),
  '/usr/bin/python3': debian('python3'),
  '/usr/lib/python3/dist-packages/pikepdf/__init__.py': debian('python3-pikepdf'),
  '/usr/bin/pandoc': debian('pandoc'),
  '/usr/bin/ebook-convert': debian('calibre'),
  '/usr/bin/convert': debian('imagemagick'),
  '/usr/bin/img2pdf': debian('img2pdf'),
  '/usr/bin/jpegtran': debian('libjpeg-turbo-progs'),
  '/usr/bin/tesseract': debian('tesseract-ocr'),
  '/usr/bin/pdftoppm': debian('poppler-utils'),
  '/usr/bin/pdfinfo': debian('poppler-utils'),
  '/usr/bin/pdfimages': debian('poppler-utils'),
  '/usr/bin/pdftotext': debian('poppler-utils'),
  '/usr/bin/pdftohtml': debian('poppler-utils'),
  '/usr/bin/qpdf': debian('qpdf'),
  '/usr/bin/ffmpeg': debian('ffmpeg'),
  '/usr/bin/ffprobe': debian('ffmpeg'),
  '/usr/bin/gs': debian('ghostscript'),
  '/usr/bin/rsvg-convert': debian('librsvg2-bin'),
  '/usr/bin/inkscape': debian('inkscape'),
  '/usr/bin/potrace': debian('potrace'),
  '/usr/bin/heif-enc': debian('libheif-examples'),
  '/usr/bin/heif-convert': debian('libheif-examples'),
  '/usr/bin/heif-info': debian('libheif-examples'),
  '/usr/bin/cjxl': debian('libjxl-tools'),
  '/usr/bin/djxl': debian('libjxl-tools'),
  '/usr/bin/dcraw_emu': debian('libraw-bin'),
  '/usr/bin/raw-identify': debian('libraw-bin'),
  '/usr/bin/avifdec': debian('libavif-bin'),
  '/usr/bin/avifenc': debian('libavif-bin'),
  '/usr/bin/apngasm': debian('apngasm'),
  '/usr/bin/sox': debian('sox'),
  '/usr/bin/bsdtar': debian('libarchive-tools'),
  '/usr/bin/assimp': debian('assimp-utils'),
  '/usr/bin/fontforge': debian('fontforge'),
  '/usr/bin/perl': debian('perl'),
  '/usr/bin/pod2text': debian('perl'),
  '/usr/bin/pod2html': debian('perl'),
  '/usr/bin/pod2man': debian('perl'),
  'npm:sharp': npm('sharp'),
  'npm:qoijs': npm('qoijs'),
  'npm:subsrt-ts': npm('subsrt-ts'),
  'npm:@myriaddreamin/typst-ts-node-compiler': npm('@myriaddreamin/typst-ts-node-compiler'),
  'npm:csv-parse': npm('csv-parse'),
  'npm:yaml': npm('yaml'),
  'npm:smol-toml': npm('smol-toml'),
  'npm:fast-xml-parser': npm('fast-xml-parser'),
  'npm:ini': npm('ini'),
  'npm:ical.js': npm('ical.js'),
  'npm:json5': npm('json5'),
  'npm:plist': npm('plist'),
  'npm:@msgpack/msgpack': npm('@msgpack/msgpack'),
  'npm:cbor2': npm('cbor2'),
  'npm:bson': npm('bson'),
  'npm:properties-file': npm('properties-file'),
  'npm:@tmcw/togeojson': npm('@tmcw/togeojson'),
};

/**
 * What to do about missing requirements, in words for an operator: the Debian packages to
 * install (`npm start` installs them all), or the npm install that brings the modules back.
 */
export function installHint(missing: readonly string[]): string {
  const sources = missing.map((m) => ENGINE_PACKAGES[m]).filter((s): s is PackageSource => s !== undefined);
  const debs = [...new Set(sources.filter((s) => s.manager === 'debian').map((s) => s.name))];
  const mods = [...new Set(sources.filter((s) => s.manager === 'npm').map((s) => s.name))];
  const hints: string[] = [];
  if (debs.length) hints.push(`install it with \`apt-get install ${debs.join(' ')}\` (npm start installs every engine)`);
  if (mods.length) hints.push(`reinstall the npm dependencies (\`npm ci\`; missing ${mods.join(', ')})`);
  return hints.join('; ');
}
