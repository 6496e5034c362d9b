/**
 * A photo's metadata on request (issue 31): by default a picture output carries none of its
 * source's EXIF, XMP or IPTC (the pixels are upright and in the output's colour space, so the
 * orientation and colour travel in the pixels; docs/decisions.md, "Photos are turned once").
 * `photo_metadata: keep` copies the camera data, dates, authorship and descriptions into the
 * output, without the location; `keep_location` copies the location too. exiftool (Debian's
 * libimage-exiftool-perl) copies the tags into a new file in the sandbox: it reads the
 * source's metadata, which is hostile input, under the job's limits, and its file is read
 * through the output guard like any engine's. What would no longer be true of the output is
 * never copied: the orientation (the pixels are turned), the colour profile (the pixels were
 * converted), the image size, thumbnails and previews (of the unturned source).
 */
import { copyFile, rm } from 'node:fs/promises';
import { failed, invalid } from './errors.js';
import { ownForSandbox, runSandboxed } from './exec/exec.js';
import { jobLimits, type JobContext } from './engines/engine.js';
import type { FormatFamily } from './formats/catalogue.js';

const EXIFTOOL = '/usr/bin/exiftool';

/** The option's values: `strip` is the default. */
export const PHOTO_METADATA = ['strip', 'keep', 'keep_location'] as const;
export type PhotoMetadata = (typeof PHOTO_METADATA)[number];

/** Picture targets exiftool writes EXIF and XMP into. */
export const PHOTO_METADATA_TARGETS: ReadonlySet<string> = new Set(['jpg', 'png', 'webp', 'tiff', 'avif', 'heic', 'jxl']);

/**
 * Tags never copied, with their groups: what the conversion changed (orientation, colour
 * profile, the source's compression, size, embedded previews of the unturned source) and, unless `keep_location`, where
 * the photo was taken (GPS in EXIF and XMP, and the place names of XMP and IPTC).
 */
const CHANGED = ['Orientation', 'ICC_Profile:all', 'ComponentsConfiguration', 'CompressedBitsPerPixel', 'ExifImageWidth', 'ExifImageHeight', 'ImageWidth', 'ImageHeight', 'ThumbnailImage', 'PreviewImage', 'JpgFromRaw', 'OtherImage', 'MPF:all'];
const LOCATION = ['GPS:all', 'XMP-exif:GPS*', 'Composite:GPS*', 'XMP-photoshop:City', 'XMP-photoshop:State', 'XMP-photoshop:Country', 'XMP-iptcCore:Location', 'XMP-iptcCore:CountryCode', 'XMP-iptcExt:LocationCreated*', 'XMP-iptcExt:LocationShown*', 'IPTC:City', 'IPTC:Sub-location', 'IPTC:Province-State', 'IPTC:Country-PrimaryLocationName', 'IPTC:Country-PrimaryLocationCode'];

/** The option parsed: undefined when absent or `strip` (the default). A 400 naming it otherwise. */
export function parsePhotoMetadata(raw: unknown, targetFamily: FormatFamily): Exclude<PhotoMetadata, 'strip'> | undefined {
  if (!PHOTO_METADATA.includes(raw as PhotoMetadata)) throw invalid('photo_metadata', `photo_metadata must be one of ${PHOTO_METADATA.join(', ')}.`);
  if (targetFamily !== 'image') throw invalid('photo_metadata', `photo_metadata applies to picture outputs (${[...PHOTO_METADATA_TARGETS].join(', ')}).`);
  return raw === 'keep' || raw === 'keep_location' ? raw : undefined;
}

/**
 * Writes `output`: `converted` with the source's metadata copied in as `mode` says. exiftool
 * edits a copy in place (its `-o` refuses WebP: "Can't write RIFF files"). Answers false, with
 * nothing left behind, when the source holds nothing to copy.
 */
export async function copyPhotoMetadata(source: string, converted: string, output: string, mode: Exclude<PhotoMetadata, 'strip'>, job: JobContext): Promise<boolean> {
  await copyFile(converted, output);
  await ownForSandbox(output);
  const excluded = [...CHANGED, ...(mode === 'keep' ? LOCATION : [])].map((t) => `--${t}`);
  // The EXIF version is left for exiftool to write (the current one: a phone's 2.21 block
  // names 2.3 tags such as LensModel).
  if (!(await exiftool(job, ['-TagsFromFile', source, '-all:all', '--ExifVersion', ...excluded, '--', output]))) {
    await rm(output, { force: true });
    return false;
  }
  // A JPEG's EXIF must state the picture's size: the converted picture's own. exiftool adds
  // ComponentsConfiguration to a new EXIF block, which TIFF does not allow.
  if (/\.jpe?g$/i.test(output)) await exiftool(job, ['-ExifImageWidth<ImageWidth', '-ExifImageHeight<ImageHeight', '--', output]);
  if (/\.tiff?$/i.test(output)) await exiftool(job, ['-ComponentsConfiguration=', '--', output]);
  return true;
}

/** Runs exiftool on a file of the job in place (-m: a hostile block's minor problems are skipped, not fatal); whether it changed the file. */
async function exiftool(job: JobContext, args: readonly string[]): Promise<boolean> {
  const r = await runSandboxed(EXIFTOOL, ['-m', '-charset', 'filename=utf8', '-overwrite_original', ...args], {
    cwd: job.dir,
    timeoutMs: Math.min(job.timeoutMs, 60_000),
    maxFileBytes: job.maxFileBytes,
    ...jobLimits(job, 512 * 1024 * 1024),
    ...(job.signal ? { signal: job.signal } : {}),
  });
  if (r.exitCode !== 0 || r.timedOut || r.aborted) throw failed('The photo metadata could not be copied.', `exiftool exit ${r.exitCode}: ${r.stderr.slice(-300)}`);
  return /\b1 image files updated\b/.test(r.stdout.toString('utf8'));
}
