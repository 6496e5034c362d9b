/**
 * Ghostscript, always with `-dSAFER`: PDF compression (`quality`, presets,
 * `max_output_bytes`), a post-processing step on PDF targets rather than a pair of its own,
 * which re-distils the PDF with images downsampled to a resolution that follows the
 * quality; and PostScript (issue 12): EPS and PS read to PDF, PNG and each other, and PDF
 * written as PS or EPS (EPS holds one page: the first).
 */
import { access, readdir } from 'node:fs/promises';
import { writeJobFile } from '../guards/output-guard.js';
import { failed } from '../errors.js';
import type { PdfCompression } from '../options.js';
import { probeBinaries, runStep, type Engine, type EngineProbe, type Step } from './engine.js';

const GS = '/usr/bin/gs';

/** Image resolution (dpi) and distiller preset for a quality of 1–100. */
export function pdfCompression(quality: number): { dpi: number; settings: string } {
  if (quality >= 90) return { dpi: 300, settings: '/printer' };
  if (quality >= 60) return { dpi: 150, settings: '/ebook' };
  return { dpi: Math.max(36, Math.round(150 * (quality / 60))), settings: '/screen' };
}

/** Image resolution of each named distiller setting (the `compression` option). */
const COMPRESSION_DPI: Readonly<Record<PdfCompression, number>> = { screen: 72, ebook: 150, printer: 300, prepress: 300 };

/**
 * PostScript that stamps `text` diagonally across the middle of every page, grey at 30 %
 * opacity, sized to 60 % of the page's diagonal. The text goes in as a hex string, so no
 * character of it can end the string or inject PostScript.
 */
export function watermarkPostScript(text: string): string {
  const hex = `<${Buffer.from(text, 'latin1').toString('hex')}>`;
  return [
    '<< /EndPage { exch pop 0 eq {',
    '  gsave 8 dict begin',
    '  currentpagedevice /PageSize get aload pop /ph exch def /pw exch def',
    `  /Helvetica-Bold findfont 1 scalefont setfont ${hex} stringwidth pop /tw exch def`,
    '  pw pw mul ph ph mul add sqrt 0.6 mul tw div /fs exch def',
    '  /Helvetica-Bold findfont fs scalefont setfont',
    '  pw 2 div ph 2 div translate ph pw atan rotate',
    '  0.5 setgray 0.3 .setfillconstantalpha',
    `  ${hex} stringwidth pop 2 div neg fs 0.35 mul neg moveto ${hex} show`,
    '  end grestore true } { false } ifelse } bind >> setpagedevice',
  ].join('\n');
}

/** The Ghostscript engine. */
export class GhostscriptEngine implements Engine {
  readonly name = 'ghostscript';
  readonly reads = ['pdf', 'eps', 'ps'] as const;
  readonly writes = ['pdf', 'eps', 'ps', 'png'] as const;

  supports(from: string, to: string): boolean {
    // PDF → PDF is the compression step, never routed as a pair; PDF pages as images are poppler's.
    if (from === 'pdf') return to === 'ps' || to === 'eps';
    return from !== to;
  }

  tradesQualityForSize(to: string): boolean {
    return to === 'pdf';
  }

  probe(): Promise<EngineProbe> {
    return probeBinaries(this.name, [GS], ['--version'], /^(\S+)/);
  }

  /**
   * Re-distils a PDF: images downsampled to the resolution of the `compression` option (or
   * of the quality), every colour to grey for the `grayscale` preset.
   */
  async convert(step: Step): Promise<void> {
    if (step.from !== 'pdf' || step.to !== 'pdf') return this.postscript(step);
    const named = step.options.compression;
    const { dpi, settings } = named ? { dpi: COMPRESSION_DPI[named], settings: `/${named}` } : pdfCompression(step.quality);
    const gray = step.options.preset?.grayscale ? ['-sColorConversionStrategy=Gray', '-dProcessColorModel=/DeviceGray'] : [];
    await runStep(step, GS, [
      '-dSAFER', '-dBATCH', '-dNOPAUSE', '-dQUIET', '-sDEVICE=pdfwrite', '-dCompatibilityLevel=1.6',
      `-dPDFSETTINGS=${settings}`, ...gray,
      '-dDownsampleColorImages=true', '-dDownsampleGrayImages=true', '-dDownsampleMonoImages=true',
      `-dColorImageResolution=${dpi}`, `-dGrayImageResolution=${dpi}`, `-dMonoImageResolution=${Math.max(dpi, 150)}`,
      '-dColorImageDownsampleThreshold=1.0', '-dGrayImageDownsampleThreshold=1.0',
      `-sOutputFile=${step.output}`, '--', step.input,
    ], { maxMemoryBytes: 2 * 1024 ** 3 });
  }

  /** EPS/PS ↔ PDF/PNG/EPS/PS with the matching output device (EPS cropped to its bounding box). */
  private async postscript(step: Step): Promise<void> {
    const device: Readonly<Record<string, readonly string[]>> = {
      pdf: ['-sDEVICE=pdfwrite'],
      ps: ['-sDEVICE=ps2write'],
      eps: ['-sDEVICE=eps2write', '-dFirstPage=1', '-dLastPage=1'],
      png: ['-sDEVICE=png16m', '-r150', '-dTextAlphaBits=4', '-dGraphicsAlphaBits=4', '-dFirstPage=1', '-dLastPage=1'],
    };
    await runStep(step, GS, [
      '-dSAFER', '-dBATCH', '-dNOPAUSE', '-dQUIET', ...(device[step.to] ?? []), ...(step.from === 'eps' ? ['-dEPSCrop'] : []),
      `-sOutputFile=${step.output}`, '--', step.input,
    ], { maxMemoryBytes: 2 * 1024 ** 3 });
  }

  /**
   * `watermark`: re-distils the PDF with the text stamped on every page (an `EndPage`
   * procedure, so each page gets it at its own size); images are kept losslessly.
   */
  async watermark(step: Step, text: string): Promise<void> {
    const ps = `${step.output}.ps`;
    await writeJobFile(ps, watermarkPostScript(text));
    await runStep(step, GS, [
      // Transparency operators (.setfillconstantalpha) are off in PostScript unless allowed.
      '-dSAFER', '-dALLOWPSTRANSPARENCY', '-dBATCH', '-dNOPAUSE', '-dQUIET', '-sDEVICE=pdfwrite', '-dCompatibilityLevel=1.7',
      '-dDownsampleColorImages=false', '-dDownsampleGrayImages=false', '-dDownsampleMonoImages=false',
      '-dAutoFilterColorImages=false', '-dAutoFilterGrayImages=false', '-dEmbedAllFonts=true',
      '-dColorImageFilter=/FlateEncode', '-dGrayImageFilter=/FlateEncode',
      `-sOutputFile=${step.output}`, ps, '-f', step.input,
    ], { maxMemoryBytes: 2 * 1024 ** 3 });
  }

  /**
   * PDF/A of `part` 1, 2 or 3 (level B) for PDFs that LibreOffice did not write (the `pdfa`
   * option, the `archive` preset's 2b): `-dPDFA=part`, colours converted to RGB under an
   * sRGB output intent (Ghostscript's own profile), fonts embedded; PDF 1.4 for part 1.
   * `PDFACompatibilityPolicy=1`: what PDF/A forbids is left out and the file stays PDF/A.
   * Part 1 forbids transparency, which Ghostscript would flatten by rendering the whole page
   * to an image (text lost): pdf-archive.ts refuses such a PDF before this runs.
   */
  async toPdfA(step: Step, part: 1 | 2 | 3 = 2): Promise<void> {
    const icc = await ghostscriptRgbProfile();
    const def = `${step.output}.def.ps`;
    await writeJobFile(def, [
      `/ICCProfile (${icc}) def`,
      '[/_objdef {icc_PDFA} /type /stream /OBJ pdfmark',
      '[{icc_PDFA} << /N 3 >> /PUT pdfmark',
      '[{icc_PDFA} ICCProfile (r) file /PUT pdfmark',
      '[/_objdef {OutputIntent_PDFA} /type /dict /OBJ pdfmark',
      '[{OutputIntent_PDFA} << /Type /OutputIntent /S /GTS_PDFA1 /DestOutputProfile {icc_PDFA} /OutputConditionIdentifier (sRGB) >> /PUT pdfmark',
      '[{Catalog} << /OutputIntents [ {OutputIntent_PDFA} ] >> /PUT pdfmark',
    ].join('\n'));
    await runStep(step, GS, [
      '-dSAFER', `--permit-file-read=${icc}`, '-dBATCH', '-dNOPAUSE', '-dQUIET', '-sDEVICE=pdfwrite',
      `-dPDFA=${part}`, ...(part === 1 ? ['-dCompatibilityLevel=1.4'] : []), '-dPDFACompatibilityPolicy=1', '-sColorConversionStrategy=RGB', '-dEmbedAllFonts=true',
      `-sOutputFile=${step.output}`, def, step.input,
    ], { maxMemoryBytes: 2 * 1024 ** 3, readOnly: await ghostscriptResources() });
  }

  /**
   * `remove_active_content` (issue #13): re-distils the PDF without annotations (links with
   * launch and URI actions, form actions), embedded files and document-level actions;
   * pdfwrite never carries JavaScript over. Images are kept losslessly (no downsampling, no
   * JPEG re-encoding of images that were not JPEG already).
   */
  async removeActiveContent(step: Step): Promise<void> {
    await runStep(step, GS, [
      '-dSAFER', '-dBATCH', '-dNOPAUSE', '-dQUIET', '-sDEVICE=pdfwrite', '-dCompatibilityLevel=1.7',
      '-dPreserveAnnots=false', '-dPreserveEmbeddedFiles=false', '-dPreserveDocView=false', '-dPreserveMarkedContent=true',
      '-dDownsampleColorImages=false', '-dDownsampleGrayImages=false', '-dDownsampleMonoImages=false',
      '-dAutoFilterColorImages=false', '-dAutoFilterGrayImages=false',
      '-dColorImageFilter=/FlateEncode', '-dGrayImageFilter=/FlateEncode',
      `-sOutputFile=${step.output}`, '--', step.input,
    ], { maxMemoryBytes: 2 * 1024 ** 3 });
  }
}

/**
 * Debian's generated Ghostscript resources (CMap links, font maps), shown to the sandbox:
 * without them Ghostscript 10.0 could not keep the embedded CID fonts of Chromium's PDFs
 * (Identity-H), substituted Nimbus Sans for them and wrote text with no Unicode mapping.
 */
async function ghostscriptResources(): Promise<string[]> {
  const dir = '/var/lib/ghostscript';
  return (await access(dir).then(() => true, () => false)) ? [dir] : [];
}

/** Ghostscript's sRGB profile (its folder is named after its version). */
async function ghostscriptRgbProfile(): Promise<string> {
  const root = '/usr/share/ghostscript';
  for (const v of (await readdir(root).catch(() => [] as string[])).sort().reverse()) {
    const path = `${root}/${v}/iccprofiles/default_rgb.icc`;
    if (await access(path).then(() => true, () => false)) return path;
  }
  throw failed('PDF/A is not available (Ghostscript\'s sRGB profile is missing).');
}
