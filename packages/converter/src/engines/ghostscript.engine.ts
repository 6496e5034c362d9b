/**
 * Ghostscript for PDF compression (`quality`, presets, `max_output_bytes`), always with
 * `-dSAFER`. It re-distils the PDF with images downsampled to a resolution that follows the
 * quality; it is a post-processing step on PDF targets rather than a pair of its own.
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
  readonly reads = ['pdf'] as const;
  readonly writes = ['pdf'] as const;

  supports(): boolean {
    return false; // used as the compression step of PDF targets, never routed as a pair
  }

  tradesQualityForSize(): boolean {
    return true;
  }

  probe(): Promise<EngineProbe> {
    return probeBinaries(this.name, [GS], ['--version'], /^(\S+)/);
  }

  async convert(step: Step): Promise<void> {
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
