/**
 * The entry point: `Converter.create(config)` probes the engines and builds the registry;
 * `convert(request)` turns one input file into one output file and answers with the output
 * metadata and SHA-256, or with a {@link ConversionFailure} (errors are data here).
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { constants as fsConstants } from 'node:fs';
import { chmod, copyFile, link, lstat, mkdir, mkdtemp, readdir, rename, rm, stat, statfs, symlink } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import sharp from 'sharp';
import { printableName } from './filenames.js';
import { ConversionError, failed, invalid, OUT_OF_SPACE_MESSAGE, quote, saysOutOfSpace, type ConversionFailure } from './errors.js';
import { ownForSandbox, prepareSandboxRoot, removeSandboxTree, runSandboxed, sandboxCapabilities, useEngineUser, type SandboxCapabilities } from './exec/exec.js';
import type { Engine, EngineProbe, JobContext, RemotePage } from './engines/engine.js';
import { packageFile, sandboxFolder } from './engines/engine.js';
import { CalibreEngine } from './engines/calibre.engine.js';
import { FfmpegEngine } from './engines/ffmpeg.engine.js';
import { GhostscriptEngine } from './engines/ghostscript.engine.js';
import { ImageMagickEngine } from './engines/imagemagick.engine.js';
import { Img2PdfEngine } from './engines/img2pdf.engine.js';
import { ChromiumEngine, SVG_PAGE_OPTIONS } from './engines/chromium.engine.js';
import type { ChromiumPoolOptions } from './engines/chromium-pool.js';
import { LibreOfficeEngine } from './engines/libreoffice.engine.js';
import type { LibreOfficePoolOptions } from './engines/libreoffice-pool.js';
import { PandocEngine } from './engines/pandoc.engine.js';
import { PopplerEngine } from './engines/poppler.engine.js';
import { QpdfEngine } from './engines/qpdf.engine.js';
import { SharpEngine } from './engines/sharp.engine.js';
import { TesseractEngine } from './engines/tesseract.engine.js';
import { ArchiveEngine } from './engines/archive.engine.js';
import { AssimpEngine } from './engines/assimp.engine.js';
import { DataEngine } from './engines/data.engine.js';
import { PodEngine } from './engines/pod.engine.js';
import { FontForgeEngine } from './engines/fontforge.engine.js';
import { HeifEngine } from './engines/heif.engine.js';
import { InkscapeEngine } from './engines/inkscape.engine.js';
import { JxlEngine } from './engines/jxl.engine.js';
import { LibRawEngine } from './engines/libraw.engine.js';
import { PotraceEngine } from './engines/potrace.engine.js';
import { RsvgEngine } from './engines/rsvg.engine.js';
import { SoxEngine } from './engines/sox.engine.js';
import { SubtitleEngine } from './engines/subtitle.engine.js';
import { TypstEngine } from './engines/typst.engine.js';
import { QoiEngine } from './engines/qoi.engine.js';
import { PdfInfoEngine } from './engines/pdf-info.engine.js';
import { PdfImagesEngine } from './engines/pdf-images.engine.js';
import { formatInfo, type FormatInfo } from './formats/catalogue.js';
import { PAGE_OPTION_NAMES } from './page-options.js';
import { checkPdfArchivePlan } from './pdf-archive-options.js';
import { ANIMATED_SOURCES, ANIMATED_TARGETS, FRAME_ENGINES } from './engines/animation.js';
import { copyPhotoMetadata, PHOTO_METADATA_TARGETS } from './photo-metadata.js';
import { ANIMATION_ONLY_OPTIONS, makesAnimation, VIDEO_OPTION_NAMES, VIDEO_PICTURE_TARGETS } from './video-options.js';
import { effectiveQuality, parseOptions, qualityLadder, resolvePageRange, type ConversionOptions } from './options.js';
import { provenPairs, readProof } from './proven-pairs.js';
import { Registry, type Route } from './registry.js';
import { checkMarkupPages } from './pdf-markup-options.js';
import { applyPdfOperations, cutPages, splitPdfPages, unlockPdf, zipFiles } from './pdf-operations.js';
import { checkFormDataAgainst } from './pdf-form-operations.js';
import { listBatchMembers, OutputNames, sha256File, tooMany, writeBatchZip, type BatchManifest, type ManifestEntry } from './batch.js';
import { unpackArchive } from './engines/archive.engine.js';
import { detectFormat } from './formats/detect.js';
import { refuseSignWith, signsSourceAsIs } from './sign-options.js';
import type { SigningCredential } from './signing-credential.js';
import { DEFAULT_INPUT_LIMITS, inspectInput, type InputFacts, type InputLimits } from './guards/input-guard.js';
import { checkMediaContent } from './guards/output-content.js';
import { acceptEngineOutput, moveEngineOutput, openEngineOutput, UnsafeOutputError, type SecurityEvent } from './guards/output-guard.js';

/** Converter settings (the service maps its `CONVERT_*` settings onto these). */
export interface ConverterConfig {
  /** Scratch folder: one sub-folder per job, LibreOffice profiles. */
  readonly workDir: string;
  /** Per engine step; default 120 s. */
  readonly timeoutMs?: number;
  /** Largest file an engine may write; default 4 GiB. */
  readonly maxFileBytes?: number;
  /** Largest decoded image, in pixels; default 100 million. */
  readonly maxInputPixels?: number;
  /** Memory cap of every engine process (RLIMIT_DATA); default 2 GiB. */
  readonly maxMemoryBytes?: number;
  /** CPU-time cap of every engine process, in seconds; default the time-out's. */
  readonly maxCpuSeconds?: number;
  /** Bomb limits checked before the engines run (pages, duration, archive expansion). */
  readonly inputLimits?: Partial<Omit<InputLimits, 'maxInputPixels'>>;
  readonly libreoffice?: Omit<LibreOfficePoolOptions, 'workDir'>;
  /** The browser pool of HTML rendering (issue 22). */
  readonly chromium?: Omit<ChromiumPoolOptions, 'workDir'>;
  /** Start the LibreOffice pool now instead of on the first office job. */
  readonly prestart?: boolean;
  /**
   * Route every pair the engines could do, proven or not: for the matrix runner only. By
   * default only the pairs in the committed proof (`proven-pairs.json`) are listed and routed.
   */
  readonly candidatePairs?: boolean;
  /** Another proof file (tests); default the package's own. */
  readonly proofFile?: string;
  /** Pages of one PDF that OCR reads at the same time; default the cores, at most 4. */
  readonly ocrConcurrency?: number;
  /**
   * The user engines run as (a name): required for a separate engine user when the service
   * is not root (then reached through a sudo rule); default `nobody` when it is root.
   */
  readonly engineUser?: string;
  /**
   * Tests only: engines that stand in for the built-in engine of the same name (the exploit
   * suite's compromised engine, which leaves links and device nodes as its output).
   */
  readonly replaceEngines?: readonly Engine[];
  /** Engines left off by the operator (by name): not probed, not routed, not in `probes()`. */
  readonly disabledEngines?: readonly string[];
  /** How often {@link Converter.refreshProbes} looks again for missing engines; default a minute. */
  readonly reprobeIntervalMs?: number;
}

/** How often {@link Converter.refreshProbes} looks again for engines that were missing. */
const REPROBE_INTERVAL_MS = 60_000;

/** One conversion. */
export interface ConvertRequest {
  readonly inputPath: string;
  /** The detected source format (an extension from the catalogue). */
  readonly sourceFormat: string;
  readonly targetFormat: string;
  /** Raw options with the API's names (`preset`, `quality`, `page_range`, `ocr_language`, `max_output_bytes`). */
  readonly options?: Readonly<Record<string, unknown>>;
  /** Where the output goes (its folder is created). */
  readonly outputPath: string;
  /** Cancels the conversion (shred of a running job). */
  readonly signal?: AbortSignal;
  /**
   * Names the job folder (`job-<tag>-…`, e.g. the conversion id), so that a shred or a
   * reconciliation pass finds what a killed process left behind ({@link Converter.removeJobFolders}).
   */
  readonly jobTag?: string;
  /** An HTML source fetched from a URL: rendered at its address, its sub-resources fetched through this (issue 22). */
  readonly remotePage?: RemotePage;
  /** The credential that signs the output when the options ask for `sign` (the service resolves it; issue 25). */
  readonly signing?: SigningCredential;
}

/** The output's metadata, as the conversion record's `output` (less the filename). */
export interface OutputMetadata {
  readonly path: string;
  readonly format: string;
  readonly mime_type: string;
  readonly size_bytes: number;
  readonly sha256: string;
  readonly pages?: number;
  readonly width?: number;
  readonly height?: number;
  readonly duration_s?: number;
  /** Pages rendered by the browser: the requests the page made that were refused (issue 22). */
  readonly blocked_requests?: number;
  /** `redact` (issue 25): the boxes redacted (areas given and text or regex matches). */
  readonly redacted_areas?: number;
  /** A batch (option `batch`): the archive's files, those converted and those that failed (see its `manifest.json`). */
  readonly files?: { readonly total: number; readonly converted: number; readonly failed: number };
}

/** A conversion's answer. */
export type ConvertResult =
  | { readonly ok: true; readonly output: OutputMetadata; readonly engines: readonly string[]; readonly options: ConversionOptions }
  | { readonly ok: false; readonly error: ConversionFailure };

const DEFAULT_QUALITY: Readonly<Record<string, number>> = { pdf: 90, jpg: 85, webp: 80, avif: 60, png: 100 };

/** The conversion engine. */
export class Converter {
  private constructor(
    private readonly config: Required<Omit<ConverterConfig, 'libreoffice' | 'chromium' | 'prestart' | 'inputLimits' | 'maxCpuSeconds' | 'candidatePairs' | 'proofFile' | 'ocrConcurrency' | 'replaceEngines' | 'engineUser' | 'disabledEngines'>> & { maxCpuSeconds?: number; limits: InputLimits },
    /** Every engine not disabled, available or not (a missing one may be installed later). */
    private readonly all: readonly Engine[],
    private probeResults: readonly EngineProbe[],
    private readonly proven: ReturnType<typeof provenPairs> | undefined,
  ) {
    this.engines = new Map();
    this.routing = this.route();
  }

  /** The available engines, by name. */
  private readonly engines: Map<string, Engine>;
  private routing: Registry;
  private probedAt = Date.now();
  private reprobing: Promise<boolean> | null = null;

  /** The routing data (formats and targets listings) of the engines available now. */
  get registry(): Registry {
    return this.routing;
  }

  /** Rebuilds the engine map and the registry from the last probes. */
  private route(): Registry {
    const available = this.all.filter((_, i) => this.probeResults[i]?.available);
    this.engines.clear();
    for (const e of available) this.engines.set(e.name, e);
    return new Registry(available, this.proven ? { proven: this.proven } : {});
  }

  /**
   * Probes again the engines that were missing, at most once every `reprobeIntervalMs` (default
   * a minute; concurrent callers share one round), so that an engine installed after start-up
   * is found without a restart (issue 44). Answers whether an engine became available.
   */
  refreshProbes(): Promise<boolean> {
    const minIntervalMs = this.config.reprobeIntervalMs;
    if (this.reprobing) return this.reprobing;
    if (Date.now() - this.probedAt < minIntervalMs || this.probeResults.every((p) => p.available)) return Promise.resolve(false);
    this.reprobing = (async () => {
      try {
        const again = await Promise.all(this.all.map((e, i) => (this.probeResults[i]?.available ? (this.probeResults[i] as EngineProbe) : e.probe())));
        const found = again.some((p, i) => p.available && !this.probeResults[i]?.available);
        this.probeResults = again;
        if (found) this.routing = this.route();
        return found;
      } finally {
        this.probedAt = Date.now();
        this.reprobing = null;
      }
    })();
    return this.reprobing;
  }

  /** Probes every engine (missing ones are disabled with a warning) and builds the registry. */
  static async create(config: ConverterConfig): Promise<Converter> {
    useEngineUser(config.engineUser);
    await prepareSandboxRoot(config.workDir);
    const builtIn: Engine[] = [
      new ChromiumEngine({ ...config.chromium, workDir: join(config.workDir, 'chromium') }),
      new LibreOfficeEngine({ ...config.libreoffice, workDir: join(config.workDir, 'libreoffice') }),
      new PandocEngine(),
      new CalibreEngine(),
      new SharpEngine(),
      new ImageMagickEngine(),
      new Img2PdfEngine(),
      new TesseractEngine(config.ocrConcurrency ? { concurrency: config.ocrConcurrency } : {}),
      new FfmpegEngine(),
      new PopplerEngine(),
      new QpdfEngine(),
      new GhostscriptEngine(),
      new DataEngine(),
      new SubtitleEngine(),
      new RsvgEngine(),
      new InkscapeEngine(),
      new PotraceEngine(),
      new HeifEngine(),
      new JxlEngine(),
      new LibRawEngine(),
      new SoxEngine(),
      new ArchiveEngine(),
      new AssimpEngine(),
      new FontForgeEngine(),
      new PodEngine(),
      new TypstEngine(),
      new QoiEngine(),
      new PdfInfoEngine(),
      new PdfImagesEngine(),
    ];
    const disabled = new Set(config.disabledEngines ?? []);
    const unknown = [...disabled].filter((name) => !builtIn.some((e) => e.name === name));
    if (unknown.length) throw new Error(`unknown engine ${unknown.join(', ')} among the disabled ones; the engines are ${builtIn.map((e) => e.name).join(', ')}`);
    const all = builtIn.filter((e) => !disabled.has(e.name)).map((e) => config.replaceEngines?.find((r) => r.name === e.name) ?? e);
    const probes = await Promise.all(all.map((e) => e.probe()));
    const proven = config.candidatePairs ? undefined : provenPairs(await readProof(config.proofFile));
    const converter = new Converter(
      {
        workDir: config.workDir,
        timeoutMs: config.timeoutMs ?? 120_000,
        maxFileBytes: config.maxFileBytes ?? 4 * 1024 ** 3,
        maxInputPixels: config.maxInputPixels ?? 100_000_000,
        maxMemoryBytes: config.maxMemoryBytes ?? 2 * 1024 ** 3,
        ...(config.maxCpuSeconds ? { maxCpuSeconds: config.maxCpuSeconds } : {}),
        reprobeIntervalMs: config.reprobeIntervalMs ?? REPROBE_INTERVAL_MS,
        limits: { ...DEFAULT_INPUT_LIMITS, ...config.inputLimits, maxInputPixels: config.maxInputPixels ?? 100_000_000 },
      },
      all,
      probes,
      proven,
    );
    if (config.prestart) await converter.libreoffice?.start();
    return converter;
  }

  private readonly securityListeners = new Set<(event: SecurityEvent) => void>();

  /**
   * Tells `listener` of every engine file the service refused to read (a symlink, hard link,
   * FIFO, device node or a path out of the job folder: guards/output-guard.ts), for the
   * service's log and metrics. Answers the function that stops telling it.
   */
  onSecurityEvent(listener: (event: SecurityEvent) => void): () => void {
    this.securityListeners.add(listener);
    return () => this.securityListeners.delete(listener);
  }

  /** Probe results of every engine, for `/readyz`. */
  probes(): readonly EngineProbe[] {
    return this.probeResults;
  }

  /** What the exec sandbox enforces on this machine. */
  sandbox(): SandboxCapabilities {
    return sandboxCapabilities();
  }

  /** The Chromium engine (its pool), when available. */
  get chromium(): ChromiumEngine | undefined {
    const e = this.engines.get('chromium');
    return e instanceof ChromiumEngine ? e : undefined;
  }

  /** The LibreOffice engine (its pool), when available. */
  get libreoffice(): LibreOfficeEngine | undefined {
    const e = this.engines.get('libreoffice');
    return e instanceof LibreOfficeEngine ? e : undefined;
  }

  /**
   * Validates a request without running it (the API answers 400/422 before queueing):
   * returns the parsed options and the route, or the failure.
   */
  plan(sourceFormat: string, targetFormat: string, rawOptions: Readonly<Record<string, unknown>> = {}):
    | { ok: true; source: FormatInfo; target: FormatInfo; options: ConversionOptions; routes: Route[] }
    | { ok: false; error: ConversionFailure } {
    try {
      return { ok: true, ...this.planOrThrow(sourceFormat, targetFormat, rawOptions) };
    } catch (e) {
      return { ok: false, error: toFailure(e) };
    }
  }

  private planOrThrow(sourceFormat: string, targetFormat: string, rawOptions: Readonly<Record<string, unknown>>) {
    const source = formatInfo(sourceFormat);
    if (!source) throw new ConversionError('unsupported_format', `The source format ${quote(sourceFormat)} is not supported.`);
    const target = formatInfo(targetFormat);
    if (!target) throw invalid('target_format', `target_format ${quote(targetFormat)} is not a known format; see GET /api/v1/formats.`);
    const options = parseOptions(rawOptions, target.family);
    if (options.batch) {
      // Each file is planned when its format is known; options wrong for one fail that file.
      if (source.family !== 'archive') throw invalid('batch', `batch converts the files inside an archive (zip, tar, 7z, …); this upload is ${source.ext}.`);
      return { source, target, options, routes: [] as Route[] };
    }
    const routes = this.registry.routes(source.ext, target.ext, { ocr: options.ocrLanguages !== undefined });
    if (!routes.length) {
      throw new ConversionError('unsupported_conversion', `Converting ${source.ext} to ${target.ext} is not supported; see GET /api/v1/formats/${source.ext}/targets.`);
    }
    const first = routes[0] as Route;
    // A browser's PDF is paged too (issue 22): its pages are selected once it is printed.
    const printed = first.steps[0]?.engine === 'chromium' && target.ext === 'pdf';
    if (options.pageRange && !printed && !(source.paged && (source.ext === 'pdf' || first.steps.some((s) => s.to === 'pdf')))) {
      throw invalid('page_range', `page_range applies to paged sources converted through PDF; ${source.ext} to ${target.ext} is not.`);
    }
    if (options.ocrLanguages && !first.steps.some((s) => s.engine === 'tesseract')) {
      throw invalid('ocr_language', `ocr_language applies to OCR conversions (images to txt or pdf); ${source.ext} to ${target.ext} is not one.`);
    }
    if (options.frame !== undefined && (!ANIMATED_SOURCES.has(source.ext) || ANIMATED_TARGETS.has(target.ext) || options.split || !FRAME_ENGINES.has(first.steps[0]?.engine ?? ''))) {
      throw invalid('frame', `frame picks the still picture of an animation (${[...ANIMATED_SOURCES].join(', ')} sources); ${source.ext} to ${target.ext}${ANIMATED_TARGETS.has(target.ext) ? ' keeps the animation' : ''}${options.split ? ' split into pages' : ''} is not.`);
    }
    if (options.photoMetadata && (source.family !== 'image' || !PHOTO_METADATA_TARGETS.has(target.ext) || options.split)) {
      throw invalid('photo_metadata', `photo_metadata applies to pictures converted to ${[...PHOTO_METADATA_TARGETS].join(', ')}; ${source.ext} to ${target.ext}${options.split ? ' split into pages' : ''} is not.`);
    }
    if (options.password !== undefined && source.ext !== 'pdf') {
      throw invalid('password', 'password opens encrypted PDF sources only.');
    }
    if (options.split && target.family === 'image' && !(source.paged && this.registry.routes('pdf', target.ext).length && (source.ext === 'pdf' || this.registry.routes(source.ext, 'pdf').length))) {
      throw invalid('split', `split into images applies to paged sources (PDF, documents, sheets, slides); ${source.ext} to ${target.ext} is not one.`);
    }
    if (options.split && options.maxOutputBytes !== undefined) {
      // The pages share fonts and pictures: their sizes do not add up to the PDF's.
      throw invalid('split', 'split cannot be combined with max_output_bytes.');
    }
    if (options.page && !first.steps.some((s) => s.engine === 'chromium')) {
      const field = PAGE_OPTION_NAMES.find((n) => rawOptions[n] !== undefined && rawOptions[n] !== null && rawOptions[n] !== '') ?? 'paper';
      throw invalid(field, `${field} applies to pages rendered by the browser (html, md, zipped sites and svg → pdf, png, jpg, webp); ${source.ext} to ${target.ext} is not.`);
    }
    if (options.page && source.ext === 'svg') {
      const field = PAGE_OPTION_NAMES.find((n) => rawOptions[n] !== undefined && rawOptions[n] !== null && rawOptions[n] !== '' && !(SVG_PAGE_OPTIONS as readonly string[]).includes(n));
      if (field) throw invalid(field, `${field} does not apply to an SVG: it is drawn at its own size (${SVG_PAGE_OPTIONS.join(', ')} do).`);
    }
    if (options.video) {
      const field = VIDEO_OPTION_NAMES.find((n) => options.video?.[n] !== undefined) ?? 'start';
      if (source.family !== 'video' || !(VIDEO_PICTURE_TARGETS as readonly string[]).includes(target.ext) || first.steps[0]?.engine !== 'ffmpeg') {
        throw invalid(field, `${field} applies to video sources (mp4, mov, webm, …) converted to gif, webp, apng, jpg or png; ${source.ext} to ${target.ext} is not.`);
      }
      const still = ANIMATION_ONLY_OPTIONS.find((n) => options.video?.[n] !== undefined);
      if (still && !makesAnimation(target.ext, options.video)) {
        throw invalid(still, `${still} applies to animations (gif, webp, apng); a ${target.ext}${options.video.animated === false ? ' with animated false' : ''} is one still frame.`);
      }
      if (options.video.animated === true && !makesAnimation(target.ext, options.video)) throw invalid('animated', `animated applies to gif, webp and apng targets; a ${target.ext} is one still frame.`);
    }
    if (options.markup?.redact && source.ext !== 'pdf') throw invalid('redact', `redact applies to PDF sources converted to PDF; ${source.ext} to ${target.ext} is not.`);
    if (options.pdfForm?.formData && source.ext !== 'pdf') throw invalid('form_data', `form_data fills the form of a PDF source; this upload is ${source.ext}.`);
    // Compression re-distils the PDF (Ghostscript) before the PDF operations run, and its copy has no form left to fill.
    if (options.pdfForm?.formData && target.ext === 'pdf' && (options.quality !== undefined || options.compression !== undefined || options.maxOutputBytes !== undefined || (options.preset && !options.preset.pdfa && !options.preset.linearize))) {
      throw invalid('form_data', 'form_data cannot be combined with compression (quality, compression, max_output_bytes or a compressing preset): the compressed copy has no form left to fill.');
    }
    if (options.pageRange && source.ext === 'pdf' && target.ext === 'json') throw invalid('page_range', 'pdf → json describes the whole PDF; page_range does not apply to it.');
    if (options.sign) refuseSignWith(options);
    checkPdfArchivePlan(options, rawOptions, source.ext, target.ext, first.steps.length === 1 && first.steps[0]?.engine === 'libreoffice');
    return { source, target, options, routes };
  }

  /** Converts one file. Never throws for a conversion problem: failures come back as data. */
  async convert(req: ConvertRequest): Promise<ConvertResult> {
    let dir: string | undefined;
    try {
      const { source, target, options, routes } = this.planOrThrow(req.sourceFormat, req.targetFormat, req.options ?? {});
      if (options.batch) return await this.convertEach(req, source, target, options);
      const prepared = await this.prepare(req.inputPath, source.ext, req.signal, req.jobTag, req.remotePage);
      dir = prepared.job.dir;
      const { job } = prepared;
      const unlocked = options.password !== undefined ? await unlockPdf(prepared.input, options.password, job, this.engines) : prepared.input;
      // The engines read what the checks answer: an XML source's entity-free copy (issue 21).
      const { input } = await inspectInput(unlocked, source.ext, this.config.limits, job);
      if (options.split && target.family === 'image') {
        const split = await this.pagesToImages(input, source, target, options, job);
        const output = await this.finish(split.file, formatInfo('zip') as FormatInfo, req.outputPath, job);
        return { ok: true, output: { ...output, pages: split.pages }, engines: split.engines, options };
      }
      const ran = signsSourceAsIs(source.ext, target.ext, options) ? { file: input, engines: [] } : await this.runWithSizeLadder(input, source, target, options, routes, job);
      let file = ran.file;
      const engines = [...ran.engines];
      // Sound or pictures out only when sound or pictures went in (guards/output-content.ts).
      await checkMediaContent(input, source, file, target, job);
      if (target.ext === 'pdf') file = await applyPdfOperations(file, options, job, this.engines, engines, req.signing);
      if (options.split) {
        // One PDF per page in a zip: the output is the zip, its page count the PDF's.
        const split = await splitPdfPages(file, options, job, this.engines, engines);
        const output = await this.finish(split.file, formatInfo('zip') as FormatInfo, req.outputPath, job);
        return { ok: true, output: { ...output, pages: split.pages }, engines, options };
      }
      const output = await this.finish(file, target, req.outputPath, job);
      // A page the browser rendered says how many of its requests were refused.
      const redacted = options.markup?.redact ? { redacted_areas: job.counts?.redactedAreas ?? 0 } : {};
      return { ok: true, output: { ...output, ...(engines.includes('chromium') ? { blocked_requests: job.counts?.blockedRequests ?? 0 } : {}), ...redacted }, engines, options };
    } catch (e) {
      return { ok: false, error: await blameStorage(toFailure(e), dir ?? this.config.workDir) };
    } finally {
      if (dir) await removeSandboxTree(dir);
    }
  }

  /**
   * Checks an input before any work is charged or queued (the service's preflight): the
   * plan, the bomb limits, an encrypted PDF, and a `page_range` against the PDF's pages.
   */
  async preflight(inputPath: string, sourceFormat: string, targetFormat: string, rawOptions: Readonly<Record<string, unknown>> = {}, jobTag?: string):
    Promise<{ ok: true; facts: InputFacts } | { ok: false; error: ConversionFailure }> {
    let dir: string | undefined;
    try {
      const { source, options } = this.planOrThrow(sourceFormat, targetFormat, rawOptions);
      const prepared = await this.prepare(inputPath, source.ext, undefined, jobTag);
      dir = prepared.job.dir;
      const input = options.password !== undefined ? await unlockPdf(prepared.input, options.password, prepared.job, this.engines) : prepared.input;
      const { facts } = await inspectInput(input, source.ext, this.config.limits, prepared.job);
      if (options.batch) checkBatchListing(facts, source.ext, this.config.limits.maxBatchFiles);
      else if (options.pageRange && facts.pages !== undefined) resolvePageRange(options.pageRange, facts.pages);
      // The field names and what each takes are known once the PDF is read (issue 25): a 400 now, not a failed job.
      if (options.pdfForm?.formData) await checkFormDataAgainst(input, options.pdfForm.formData, prepared.job);
      if (options.markup && source.ext === 'pdf' && facts.pages !== undefined) checkMarkupPages(options.markup, options.pageRange ? resolvePageRange(options.pageRange, facts.pages).length : facts.pages);
      return { ok: true, facts };
    } catch (e) {
      return { ok: false, error: toFailure(e) };
    } finally {
      if (dir) await removeSandboxTree(dir);
    }
  }

  /**
   * `batch`: every file of an archive converted to the target, each as a conversion of its
   * own with the other options; the output is a zip of the converted files and a
   * `manifest.json` (see `batch.ts`). A file that fails is listed with its error and the batch
   * goes on; the batch fails when none converts. The archive is checked by the archive guard
   * (bombs, escapes, links, special files, the file cap) before it is unpacked in the sandbox.
   */
  private async convertEach(req: ConvertRequest, source: FormatInfo, target: FormatInfo, options: ConversionOptions): Promise<ConvertResult> {
    let dir: string | undefined;
    try {
      const prepared = await this.prepare(req.inputPath, source.ext, req.signal, req.jobTag);
      dir = prepared.job.dir;
      const { job } = prepared;
      checkBatchListing((await inspectInput(prepared.input, source.ext, this.config.limits, job)).facts, source.ext, this.config.limits.maxBatchFiles);
      if (!this.engines.has('bsdtar')) throw failed('Batches are not available (bsdtar is missing).');
      const tree = await unpackArchive({ input: prepared.input, output: join(job.dir, 'unused'), from: source.ext, to: source.ext, options, quality: 100, qualityRequested: false, job }, 'members');
      const members = await listBatchMembers(tree, source.ext, this.config.limits.maxBatchFiles);
      const converted = join(job.dir, 'converted');
      await mkdir(converted, { mode: 0o700 });
      const { batch: _batch, ...memberOptions } = req.options ?? {};
      const names = new OutputNames();
      const entries: ManifestEntry[] = [];
      const files: { path: string; name: string; format: string }[] = [];
      const engines = new Set<string>(['bsdtar']);
      for (const [i, member] of members.entries()) {
        if (req.signal?.aborted) throw failed('The batch was stopped.');
        const detected = await detectFormat(member.path, member.name.split('/').pop());
        const base = { source: member.name, source_format: detected?.ext ?? null, source_size_bytes: member.size_bytes, source_sha256: await sha256File(member.path) };
        const fail = (error: { code: string; message: string }): ManifestEntry => ({ ...base, status: 'failed', output: null, format: null, size_bytes: null, sha256: null, error: { code: error.code, message: error.message } });
        if (!detected) {
          entries.push(fail({ code: 'unsupported_format', message: 'The file’s format is not one this service reads; see GET /api/v1/formats.' }));
          continue;
        }
        const path = join(converted, String(i + 1));
        const r = await this.convert({ inputPath: member.path, sourceFormat: detected.ext, targetFormat: target.ext, options: memberOptions, outputPath: path, ...(req.signal ? { signal: req.signal } : {}), ...(req.jobTag ? { jobTag: req.jobTag } : {}) });
        if (!r.ok) {
          entries.push(fail(r.error));
          continue;
        }
        const name = names.name(member.name, r.output.format);
        files.push({ path, name, format: r.output.format });
        for (const engine of r.engines) engines.add(engine);
        entries.push({ ...base, status: 'completed', output: name, format: r.output.format, size_bytes: r.output.size_bytes, sha256: r.output.sha256, error: null });
      }
      const failures = entries.filter((e) => e.status === 'failed');
      if (failures.length === entries.length) {
        throw failed(`None of the ${entries.length} files could be converted to ${target.ext}; the first: ${printableName(entries[0]?.source ?? '')} (${entries[0]?.error?.message ?? ''})`);
      }
      const manifest: BatchManifest = { target_format: target.ext, files: entries.length, converted: entries.length - failures.length, failed: failures.length, entries };
      const zip = join(job.dir, 'batch.zip');
      await writeBatchZip(zip, files, manifest);
      const output = await this.finish(zip, formatInfo('zip') as FormatInfo, req.outputPath, job);
      return { ok: true, output: { ...output, files: { total: manifest.files, converted: manifest.converted, failed: manifest.failed } }, engines: [...engines], options };
    } catch (e) {
      return { ok: false, error: await blameStorage(toFailure(e), dir ?? this.config.workDir) };
    } finally {
      if (dir) await removeSandboxTree(dir);
    }
  }

  /**
   * Merges PDFs, in the order given, into one PDF at `outputPath` (the merge extension
   * endpoint, issue 12): each input passes the bomb checks (an encrypted one is
   * `password_required`), the merged page count must stay within the page limit, and qpdf
   * joins them losslessly. Answers the output's size and SHA-256 (hashed while copied).
   */
  /**
   * Merges documents of any format that converts to PDF (documents, slides, sheets, images,
   * HTML, Markdown, e-books, …) into one PDF, in order: each non-PDF input is first converted
   * to PDF as a conversion of its own (its own sandboxed job, bomb checks and limits), then
   * the PDFs are joined losslessly (qpdf). Every input's pair is checked before any engine
   * runs; an input that cannot be converted fails the merge, naming its place (1-based).
   */
  async mergeDocuments(inputs: ReadonlyArray<{ path: string; format: string }>, outputPath: string, signal?: AbortSignal, jobTag?: string):
    Promise<{ ok: true; output: OutputMetadata } | { ok: false; error: ConversionFailure }> {
    const place = (i: number, format: string) => `Document ${i + 1} of the merge (${format})`;
    for (const [i, input] of inputs.entries()) {
      if (input.format === 'pdf') continue;
      const plan = this.plan(input.format, 'pdf');
      if (!plan.ok) return { ok: false, error: { ...plan.error, message: `${place(i, input.format)} cannot be converted to PDF: ${plan.error.message}`, field: 'upload_ids' } };
    }
    if (inputs.every((i) => i.format === 'pdf')) return this.mergePdfs(inputs.map((i) => i.path), outputPath, signal, jobTag);
    // Named like a job folder: a shred or the reconciliation finds it if this process dies mid-merge.
    const dir = await mkdtemp(join(this.config.workDir, `job-${jobTag ? `${safeTag(jobTag)}-` : ''}`));
    try {
      const pdfs: string[] = [];
      for (const [i, input] of inputs.entries()) {
        if (input.format === 'pdf') {
          pdfs.push(input.path);
          continue;
        }
        const member = join(dir, `member-${i + 1}.pdf`);
        const converted = await this.convert({ inputPath: input.path, sourceFormat: input.format, targetFormat: 'pdf', outputPath: member, ...(signal ? { signal } : {}), ...(jobTag ? { jobTag } : {}) });
        if (!converted.ok) return { ok: false, error: { ...converted.error, message: `${place(i, input.format)} could not be converted to PDF: ${converted.error.message}` } };
        pdfs.push(member);
      }
      return await this.mergePdfs(pdfs, outputPath, signal, jobTag);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  async mergePdfs(inputPaths: readonly string[], outputPath: string, signal?: AbortSignal, jobTag?: string):
    Promise<{ ok: true; output: OutputMetadata } | { ok: false; error: ConversionFailure }> {
    let dir: string | undefined;
    try {
      if (inputPaths.length < 2) throw invalid('upload_ids', 'Merging needs at least two PDFs.');
      const qpdf = this.engines.get('qpdf') as QpdfEngine | undefined;
      if (!qpdf) throw failed('Merging PDFs is not available (qpdf is missing).');
      const prepared = await this.prepare(inputPaths[0] as string, 'pdf', signal, jobTag);
      dir = prepared.job.dir;
      const { job } = prepared;
      const inputs = [prepared.input];
      for (const [i, path] of inputPaths.slice(1).entries()) {
        const input = join(job.dir, `source-${i + 1}.pdf`);
        await this.placeInput(path, input);
        inputs.push(input);
      }
      let pages = 0;
      for (const input of inputs) pages += (await inspectInput(input, 'pdf', this.config.limits, job)).facts.pages ?? 0;
      if (pages > this.config.limits.maxPages) throw failed(`The merged PDF would have ${pages} pages, over the ${this.config.limits.maxPages} pages a conversion accepts.`);
      const merged = join(job.dir, 'merged.pdf');
      await qpdf.merge(inputs, merged, job);
      await acceptEngineOutput(merged, job, 'qpdf');
      // A new upload: hard-linked into later job folders, so it must be the service's own file.
      return { ok: true, output: await this.finish(merged, formatInfo('pdf') as FormatInfo, outputPath, job, { ownCopy: true }) };
    } catch (e) {
      return { ok: false, error: await blameStorage(toFailure(e), dir ?? this.config.workDir) };
    } finally {
      if (dir) await removeSandboxTree(dir);
    }
  }

  /**
   * A job folder owned by the sandbox user, holding the input under its detected extension
   * (LibreOffice and friends look at it). Engines cannot see the caller's folder, so the
   * input is hard-linked in when the sandbox user may read it (the service stores uploads
   * group-readable by it), else copied (reflinked where the filesystem can).
   */
  private async prepare(inputPath: string, ext: string, signal?: AbortSignal, tag?: string, remotePage?: RemotePage): Promise<{ job: JobContext; input: string }> {
    const dir = await mkdtemp(join(this.config.workDir, `job-${tag ? `${safeTag(tag)}-` : ''}`));
    await ownForSandbox(dir);
    const job: JobContext = {
      dir,
      timeoutMs: this.config.timeoutMs,
      maxFileBytes: this.config.maxFileBytes,
      maxInputPixels: this.config.maxInputPixels,
      maxMemoryBytes: this.config.maxMemoryBytes,
      ...(this.config.maxCpuSeconds ? { maxCpuSeconds: this.config.maxCpuSeconds } : {}),
      ...(signal ? { signal } : {}),
      ...(remotePage ? { remotePage } : {}),
      counts: { blockedRequests: 0 },
      onSecurityEvent: (event) => {
        for (const listener of this.securityListeners) listener(event);
      },
    };
    const input = join(dir, `source.${ext}`);
    try {
      await this.placeInput(inputPath, input);
    } catch (e) {
      // The caller's file is gone (shredded meanwhile) or unreadable: leave no folder behind.
      await removeSandboxTree(dir);
      throw e;
    }
    return { job, input };
  }

  private async placeInput(inputPath: string, input: string): Promise<void> {
    const caps = sandboxCapabilities();
    if (!caps.filesystem_isolated) {
      await stat(inputPath);
      await symlink(resolve(inputPath), input);
      return;
    }
    const st = await stat(inputPath);
    const readable = caps.sandbox_uid === null || (st.mode & 0o004) !== 0 || (st.gid === caps.sandbox_gid && (st.mode & 0o040) !== 0);
    try {
      if (!readable) throw new Error('not readable by the sandbox user');
      await link(inputPath, input);
    } catch {
      await copyFile(inputPath, input, fsConstants.COPYFILE_FICLONE);
      await chmod(input, 0o444);
    }
  }

  /**
   * `split` to images: the source as a PDF (its `page_range` applied), cut into pages by
   * qpdf, each page through the pdf → target route, all packed into a zip (`page-1.png` …).
   * The engine chain is the first page's (every page takes the same route).
   */
  private async pagesToImages(input: string, source: FormatInfo, target: FormatInfo, options: ConversionOptions, job: JobContext):
    Promise<{ file: string; pages: number; engines: string[] }> {
    const pdfInfo = formatInfo('pdf') as FormatInfo;
    // The PDF on the way is made at full quality: the options are for the images.
    const asPdf: ConversionOptions = options.pageRange ? { pageRange: options.pageRange, ...(options.pageRangeText ? { pageRangeText: options.pageRangeText } : {}) } : {};
    const whole = await this.runRoutes(input, source, pdfInfo, asPdf, this.registry.routes(source.ext, 'pdf'), job, DEFAULT_QUALITY.pdf as number, 0);
    const engines = [...whole.engines];
    const { dir: pagesDir, names: pages } = await cutPages(whole.file, job, this.engines);
    engines.push('qpdf');
    const imagesDir = await sandboxFolder(job, 'images');
    const pageOptions: ConversionOptions = { ...options, pageRange: undefined, pageRangeText: undefined };
    const routes = this.registry.routes('pdf', target.ext);
    const names: string[] = [];
    for (const [i, page] of pages.entries()) {
      if (job.signal?.aborted) throw failed('The conversion was cancelled.');
      const ran = await this.runRoutes(join(pagesDir, page), pdfInfo, target, pageOptions, routes, job, effectiveQuality(options, DEFAULT_QUALITY[target.ext] ?? 75), i + 1);
      const name = page.replace(/\.pdf$/, `.${target.ext}`);
      await rename(ran.file, join(imagesDir, name));
      names.push(name);
      if (i === 0) engines.push(...ran.engines);
    }
    const zip = await zipFiles(imagesDir, names, options, job, this.engines);
    engines.push('bsdtar');
    return { file: zip, pages: names.length, engines };
  }

  private async runWithSizeLadder(
    input: string,
    source: FormatInfo,
    target: FormatInfo,
    options: ConversionOptions,
    routes: Route[],
    job: JobContext,
  ): Promise<{ file: string; engines: string[] }> {
    const ladder = qualityLadder(options, DEFAULT_QUALITY[target.ext] ?? 75);
    let last: { file: string; engines: string[]; size: number } | undefined;
    for (let i = 0; i < ladder.length; i++) {
      const quality = ladder[i] as number;
      const attempt = await this.runRoutes(input, source, target, options, routes, job, quality, i);
      const size = (await stat(attempt.file)).size;
      last = { ...attempt, size };
      if (!options.maxOutputBytes || size <= options.maxOutputBytes) return attempt;
      const lastEngine = this.engines.get(attempt.engines[attempt.engines.length - 1] ?? '');
      const canTrade = lastEngine?.tradesQualityForSize(target.ext) || (target.ext === 'pdf' && this.engines.has('ghostscript'));
      if (!canTrade) break;
    }
    throw new ConversionError(
      'output_too_large',
      `The ${target.ext} output is ${last?.size ?? '?'} bytes, over max_output_bytes (${options.maxOutputBytes}), even at the lowest quality tried.`,
    );
  }

  /** Tries each route in order; a `conversion_failed` moves on to the next (fallback). */
  private async runRoutes(
    input: string,
    source: FormatInfo,
    target: FormatInfo,
    options: ConversionOptions,
    routes: Route[],
    job: JobContext,
    quality: number,
    attempt: number,
  ): Promise<{ file: string; engines: string[] }> {
    let lastError: unknown;
    for (const [r, route] of routes.entries()) {
      // The browser's page options (paper, header, wait_for…) mean nothing to a fallback without it.
      if (r > 0 && options.page && !route.steps.some((s) => s.engine === 'chromium')) continue;
      try {
        return await this.runRoute(input, source, target, options, route, job, quality, `a${attempt}r${r}`);
      } catch (e) {
        lastError = e;
        // A refused engine file ends the job: no other route gets to run on what may be a compromise.
        // Nor after a failure that is the input's own (a page that never finishes rendering).
        if (!(e instanceof ConversionError) || e.code !== 'conversion_failed' || e instanceof UnsafeOutputError || e.extra.final || job.signal?.aborted) throw e;
      }
    }
    throw lastError;
  }

  private async runRoute(
    input: string,
    source: FormatInfo,
    target: FormatInfo,
    options: ConversionOptions,
    route: Route,
    job: JobContext,
    quality: number,
    tag: string,
  ): Promise<{ file: string; engines: string[] }> {
    const engines: string[] = [];
    const qualityRequested = options.quality !== undefined || options.preset !== undefined || options.maxOutputBytes !== undefined;
    let current = input;
    let pagesApplied = false;
    const qpdf = this.engines.get('qpdf') as QpdfEngine | undefined;
    const selectPages = async (pdf: string): Promise<string> => {
      if (!options.pageRange || pagesApplied) return pdf;
      if (!qpdf) throw failed('Page selection is not available (qpdf is missing).');
      const count = await qpdf.pageCount(pdf, job);
      const pages = resolvePageRange(options.pageRange, count);
      const out = join(job.dir, `${tag}-pages.pdf`);
      await qpdf.selectPages(pdf, pages, out, job);
      pagesApplied = true;
      engines.push('qpdf');
      return out;
    };
    if (source.ext === 'pdf') current = await selectPages(current);
    for (const [i, s] of route.steps.entries()) {
      const engine = this.engines.get(s.engine);
      if (!engine) throw failed(`The ${s.engine} engine is not available.`);
      const out = join(job.dir, `${tag}-step${i}.${s.to}`);
      // Nothing an earlier engine planted under this name (a link to a host file) may be
      // written through by an in-process engine (sharp, the QOI and data workers).
      await rm(out, { force: true });
      const variant = await engine.convert({ input: current, from: s.from, to: s.to, output: out, options, quality, qualityRequested, job });
      // Hostile until checked (guards/output-guard.ts). Text may legitimately be empty (OCR
      // of a photo, a PDF of scans); nothing else may.
      await acceptEngineOutput(out, job, s.engine, { allowEmpty: s.to === 'txt' });
      engines.push(variant || s.engine);
      current = out;
      if (s.to === 'pdf') current = await selectPages(current);
    }
    // PDF compression: asked for by quality/preset, or needed to meet max_output_bytes.
    const gs = this.engines.get('ghostscript');
    // (linearize only restructures: it never re-distils.)
    const grayscale = options.preset?.grayscale === true;
    const presetCompresses = options.preset !== undefined && !options.preset.pdfa && !options.preset.linearize;
    const wantsCompression = options.quality !== undefined || presetCompresses || options.compression !== undefined || quality < (DEFAULT_QUALITY.pdf as number);
    if (target.ext === 'pdf' && gs && wantsCompression && !options.preset?.pdfa) {
      const out = join(job.dir, `${tag}-compressed.pdf`);
      await gs.convert({ input: current, from: 'pdf', to: 'pdf', output: out, options, quality, qualityRequested, job });
      await acceptEngineOutput(out, job, 'ghostscript');
      // Re-distilling an already lean PDF can make it bigger: keep the smaller one (grey was asked for: keep it).
      if (grayscale || (await stat(out)).size < (await stat(current)).size) {
        current = out;
        engines.push('ghostscript');
      }
    }
    // The source's photo metadata, when asked for (issue 31): copied last, onto the finished picture.
    if (options.photoMetadata) {
      const out = join(job.dir, `${tag}-metadata.${target.ext}`);
      if (await copyPhotoMetadata(input, current, out, options.photoMetadata, job)) {
        await acceptEngineOutput(out, job, 'exiftool');
        current = out;
        engines.push('exiftool');
      }
    }
    return { file: current, engines };
  }

  /**
   * Puts the result at its destination, hashing its bytes (one read of the checked
   * descriptor). It is moved, not copied (issue 28: a copy needed twice the output's size
   * free on the volume): renamed out of the job folder, then the destination checked to be
   * the very file that was read and hashed. A destination on another file system, or an
   * engine's file that must become the service's own (`ownCopy`: a merged upload that later
   * jobs hard-link), is copied from the descriptor instead.
   */
  private async finish(file: string, target: FormatInfo, outputPath: string, job: JobContext, opts: { ownCopy?: boolean } = {}): Promise<OutputMetadata> {
    // Described first, in the job folder: the sandboxed probes cannot see the destination folder.
    const described = await this.describe(file, target, job);
    const opened = await openEngineOutput(file, job, 'output');
    if (!opened) throw failed('The conversion produced no output.', 'the final output is missing');
    try {
      await mkdir(dirname(outputPath), { recursive: true });
      const hash = createHash('sha256');
      let size = 0;
      for await (const chunk of opened.handle.createReadStream({ start: 0, autoClose: false }) as AsyncIterable<Buffer>) {
        hash.update(chunk);
        size += chunk.length;
      }
      if (!(opts.ownCopy && opened.uid !== process.getuid?.()) && (await moveEngineOutput(file, outputPath, opened, job))) {
        // The service's own file becomes private to it; an engine's stays as it is, behind the 0700 folder.
        if (opened.uid === process.getuid?.()) await opened.handle.chmod(0o600);
      } else {
        await pipeline(opened.handle.createReadStream({ start: 0, autoClose: false }), createWriteStream(outputPath, { mode: 0o600 }));
      }
      return { path: outputPath, format: target.ext, mime_type: target.mime_type, size_bytes: size, sha256: hash.digest('hex'), ...described };
    } finally {
      await opened.handle.close();
    }
  }

  /** Pages, dimensions, duration: whichever apply. */
  private async describe(path: string, target: FormatInfo, job: JobContext): Promise<Partial<OutputMetadata>> {
    try {
      if (target.ext === 'pdf') {
        const qpdf = this.engines.get('qpdf') as QpdfEngine | undefined;
        return qpdf ? { pages: await qpdf.pageCount(path, job) } : {};
      }
      if (target.family === 'image') {
        try {
          const m = await sharp(path, { limitInputPixels: this.config.maxInputPixels }).metadata();
          if (m.width && m.height) return { width: m.width, height: m.height };
        } catch {
          // not a libvips format (ico, bmp, ppm): ask ImageMagick
        }
        const r = await runSandboxed('/usr/bin/identify', ['-format', '%w %h\n', `${path}[0]`], {
          cwd: job.dir, timeoutMs: 15_000, env: { MAGICK_CONFIGURE_PATH: dirname(packageFile('imagemagick/policy.xml')) }, readOnly: [dirname(packageFile('imagemagick/policy.xml'))],
        });
        const [w, h] = r.stdout.toString('utf8').trim().split(/\s+/).map(Number);
        return w && h ? { width: w, height: h } : {};
      }
      if (target.family === 'audio' || target.family === 'video') {
        const r = await runSandboxed('/usr/bin/ffprobe', ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', path], { cwd: job.dir, timeoutMs: 15_000 });
        const info = JSON.parse(r.stdout.toString('utf8') || '{}') as { format?: { duration?: string }; streams?: { codec_type?: string; width?: number; height?: number }[] };
        const out: { duration_s?: number; width?: number; height?: number } = {};
        const d = Number(info.format?.duration);
        if (Number.isFinite(d)) out.duration_s = Math.round(d * 1000) / 1000;
        const v = info.streams?.find((s) => s.codec_type === 'video');
        if (target.family === 'video' && v?.width && v.height) Object.assign(out, { width: v.width, height: v.height });
        return out;
      }
    } catch {
      // metadata is best effort; the file itself is good
    }
    return {};
  }

  /**
   * The job folders in the work folder: each with its tag (null when the job had none) and
   * when it was last changed. A process killed mid-conversion leaves its folder (with a link
   * to, or a copy of, the customer's file) behind: the service's shred and reconciliation
   * remove them with {@link removeJobFolders} / {@link removeJobFolder}.
   */
  async jobFolders(): Promise<{ name: string; tag: string | null; changedMs: number }[]> {
    const out: { name: string; tag: string | null; changedMs: number }[] = [];
    for (const name of await readdir(this.config.workDir).catch(() => [] as string[])) {
      const m = /^job-(?:([a-z0-9_]+)-)?[A-Za-z0-9]{6}$/.exec(name);
      if (!m) continue;
      const st = await lstat(join(this.config.workDir, name)).catch(() => null);
      if (st?.isDirectory()) out.push({ name, tag: m[1] ?? null, changedMs: st.mtimeMs });
    }
    return out;
  }

  /** Removes every job folder tagged `tag` (a shredded or expired conversion's, left by a killed process). */
  async removeJobFolders(tag: string): Promise<number> {
    const prefix = `job-${safeTag(tag)}-`;
    const mine = (await readdir(this.config.workDir).catch(() => [] as string[])).filter((n) => n.startsWith(prefix) && n.length === prefix.length + 6);
    for (const name of mine) await this.removeJobFolder(name);
    return mine.length;
  }

  /** Removes one job folder by name (from {@link jobFolders}). */
  async removeJobFolder(name: string): Promise<void> {
    if (!/^job-[A-Za-z0-9_-]+$/.test(name)) throw new Error(`not a job folder: ${name}`);
    await removeSandboxTree(join(this.config.workDir, name));
  }

  /** Stops the LibreOffice pool and any other long-lived process. */
  async close(): Promise<void> {
    await this.reprobing;
    await Promise.all([...this.engines.values()].map((e) => e.close?.()));
  }
}


/** A batch's archive as its listing shows it: files only (no links), at least one, at most `maxFiles`. */
function checkBatchListing(facts: InputFacts, ext: string, maxFiles: number): void {
  if (facts.links) throw failed(`The ${ext} file holds links; a batch converts files only.`);
  if (facts.files === 0) throw failed(`The ${ext} file holds no file to convert.`);
  if ((facts.files ?? 0) > maxFiles) throw tooMany(ext, maxFiles);
}

/** A tag as it appears in a job folder's name: lower-case letters, digits and `_`, at most 64. */
function safeTag(tag: string): string {
  return tag.toLowerCase().replace(/[^a-z0-9_]/g, '_').slice(0, 64);
}

function toFailure(e: unknown): ConversionFailure {
  if (e instanceof ConversionError) return e.toFailure();
  const detail = e instanceof Error ? e.message : String(e);
  if (saysOutOfSpace(e)) return { code: 'insufficient_storage', message: OUT_OF_SPACE_MESSAGE, detail };
  return { code: 'conversion_failed', message: 'The conversion failed.', detail };
}

/** Free bytes under which a failed engine is taken to have run out of space rather than to have met a bad file. */
const NEARLY_FULL_BYTES = 4 * 1024 * 1024;

/**
 * A failure as the client should see it: an engine that failed while the disk under its
 * job folder was (nearly) full, or that said so, ran out of space — `insufficient_storage`,
 * not the file's `conversion_failed` (issue 28). Checked before the job folder is removed,
 * while whatever the engine wrote still takes its space.
 */
async function blameStorage(failure: ConversionFailure, dir: string): Promise<ConversionFailure> {
  if (failure.code !== 'conversion_failed' || failure.detail?.startsWith('security:')) return failure;
  const full = saysOutOfSpace(failure.detail ?? '') || (await statfs(dir).then((s) => s.bavail * s.bsize < NEARLY_FULL_BYTES, () => false));
  return full ? { code: 'insufficient_storage', message: OUT_OF_SPACE_MESSAGE, ...(failure.detail ? { detail: failure.detail } : {}) } : failure;
}
