/**
 * Ghostscript, always with `-dSAFER`: PDF compression (`quality`, presets,
 * `max_output_bytes`), a post-processing step on PDF targets rather than a pair of its own,
 * which re-distils the PDF with images downsampled to a resolution that follows the
 * quality; and PostScript (issue 12): EPS and PS read to PDF, PNG and each other, and PDF
 * written as PS or EPS (EPS holds one page: the first).
 */
import { probeBinaries, runStep, type Engine, type EngineProbe, type Step } from './engine.js';

const GS = '/usr/bin/gs';

/** Image resolution (dpi) and distiller preset for a quality of 1–100. */
export function pdfCompression(quality: number): { dpi: number; settings: string } {
  if (quality >= 90) return { dpi: 300, settings: '/printer' };
  if (quality >= 60) return { dpi: 150, settings: '/ebook' };
  return { dpi: Math.max(36, Math.round(150 * (quality / 60))), settings: '/screen' };
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

  async convert(step: Step): Promise<void> {
    if (step.from !== 'pdf' || step.to !== 'pdf') return this.postscript(step);
    const { dpi, settings } = pdfCompression(step.quality);
    await runStep(step, GS, [
      '-dSAFER', '-dBATCH', '-dNOPAUSE', '-dQUIET', '-sDEVICE=pdfwrite', '-dCompatibilityLevel=1.6',
      `-dPDFSETTINGS=${settings}`,
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
