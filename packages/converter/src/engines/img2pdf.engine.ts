/**
 * img2pdf for raster images to PDF: it embeds JPEG and PNG data as is (lossless, no
 * re-encoding) and runs outside ImageMagick, whose PDF coder stays denied by policy.
 */
import { join } from 'node:path';
import sharp from 'sharp';
import { failed } from '../errors.js';
import { probeBinaries, runStep, type Engine, type EngineProbe, type Step } from './engine.js';

const IMG2PDF = '/usr/bin/img2pdf';

/** The img2pdf engine. */
export class Img2PdfEngine implements Engine {
  readonly name = 'img2pdf';
  readonly reads = ['png', 'jpg', 'tiff', 'gif'] as const;
  readonly writes = ['pdf'] as const;

  tradesQualityForSize(): boolean {
    return false;
  }

  probe(): Promise<EngineProbe> {
    return probeBinaries(this.name, [IMG2PDF, '/usr/bin/python3'], ['--version'], /img2pdf (\S+)/);
  }

  async convert(step: Step): Promise<void> {
    // img2pdf refuses alpha channels (PDF images have none): lay them over white first.
    let input = step.input;
    try {
      const meta = await sharp(step.input, { limitInputPixels: step.job.maxInputPixels }).metadata();
      if (meta.hasAlpha) {
        input = join(step.job.dir, 'flattened.png');
        await sharp(step.input, { limitInputPixels: step.job.maxInputPixels }).flatten({ background: '#ffffff' }).png().toFile(input);
      }
    } catch (e) {
      throw failed(`The ${step.from} image could not be read.`, `sharp: ${(e as Error).message}`);
    }
    await runStep(step, IMG2PDF, ['--output', step.output, '--', input]);
  }
}
