/**
 * The registry of conversion pairs: which engine (or short chain of engines) turns a source
 * format into a target, in fallback order. The formats listing and the per-source target
 * lists are built from the same data that routes conversions, so nothing is listed that
 * cannot be routed (field notes §a, ConvertX/Gotenberg pattern).
 */
import type { Engine } from './engines/engine.js';
import { FORMATS, formatInfo, type FormatFamily, type FormatInfo } from './formats/catalogue.js';
import { PRESETS } from './options.js';

/** One hop of a route. */
export interface RouteStep {
  readonly engine: string;
  readonly from: string;
  readonly to: string;
}

/** A way to do a pair: one step, or a chain through an intermediate format. */
export interface Route {
  readonly steps: readonly RouteStep[];
}

/** A target of a source format, for `GET /formats/{ext}/targets`. */
export interface TargetListing {
  readonly format: string;
  readonly mime_type: string;
  readonly family: FormatFamily;
  /** Engines of the preferred route, in order (more than one = a chain). */
  readonly engines: readonly string[];
  /** The intermediate format of a chained route. */
  readonly via?: string;
  /** Presets that apply to this target. */
  readonly presets: readonly string[];
}

/** A format, for `GET /formats`. */
export interface FormatListing extends FormatInfo {
  readonly readable: boolean;
  readonly writable: boolean;
}

/**
 * Engine priority: the first engine that does a pair is tried first, the next ones are
 * its fallbacks (e.g. sharp, then ImageMagick).
 */
export const ENGINE_ORDER = [
  // Issue 22: HTML as a browser renders it comes before any document engine's reading of it.
  'chromium',
  'libreoffice', 'pandoc', 'calibre', 'sharp', 'imagemagick', 'img2pdf', 'tesseract', 'ffmpeg', 'poppler', 'qpdf', 'ghostscript',
  // Issue 12's engines: each brings formats of its own; where two overlap the first is the quicker or more faithful (rsvg before Inkscape).
  'data', 'subtitles', 'rsvg', 'inkscape', 'potrace', 'libheif', 'libjxl', 'libraw', 'sox', 'bsdtar', 'assimp', 'fontforge',
  // Perl's POD formatters (markup → HTML/man/text; the rest through HTML).
  'pod',
  // Issue 21: Typst (→ PDF/SVG) and QOI (↔ the common rasters).
  'typst', 'qoi',
  // Issue 25: a PDF's facts (pdf → json) and its images (pdf → zip), never a hop of a chain.
  'pikepdf', 'pdfimages',
] as const;

/**
 * Intermediate formats the registry may chain through, per source family, in preference
 * order: used only when no engine converts a pair directly, and only one intermediate
 * (pptx → pdf → png, doc → odt → epub, dbk → html → mobi, xcf → png → pdf). Families not
 * listed get no chains.
 */
export const INTERMEDIATES: Readonly<Partial<Record<FormatFamily, readonly string[]>>> = {
  document: ['pdf', 'odt', 'html'],
  // CSV: a sheet to the data formats (xlsx → csv → json).
  spreadsheet: ['pdf', 'html', 'csv'],
  presentation: ['pdf'],
  markup: ['odt', 'html'],
  ebook: ['epub', 'docx'],
  text: ['odt', 'pdf'],
  // TIFF: camera raw is developed to it; BMP: potrace traces it (png → bmp → svg); PDF: a picture to EPS/PS.
  image: ['png', 'tiff', 'bmp', 'pdf'],
  pdf: ['png', 'html'],
  // Issue 12: vector pictures to rasters through PNG, EPS/PS to SVG/EMF/WMF through PDF.
  vector: ['png', 'pdf'],
  // The formats SoX writes, from anything FFmpeg reads.
  audio: ['wav'],
  video: ['wav'],
  // Tables to spreadsheets (json → csv → xlsx).
  data: ['csv'],
  contact: ['csv'],
  calendar: ['csv'],
};

/**
 * Intermediates of single formats, in place of their family's: Typst is markup, but its
 * compiler writes PDF and SVG only, so its other targets (PNG and the rest) come from the PDF.
 */
export const FORMAT_INTERMEDIATES: ReadonlyMap<string, readonly string[]> = new Map([['typ', ['pdf']]]);

/** The pairs the matrix runner proved (proven-pairs.json): pair key `from>to` → engine chain. */
export type ProvenPairs = ReadonlyMap<string, readonly string[]>;

/** Registry options. */
export interface RegistryOptions {
  /**
   * Only these pairs are listed and routed (the committed proof). Without it every pair the
   * engines could do is a candidate: that is what the matrix runner proves.
   */
  readonly proven?: ProvenPairs;
}

const pairKey = (from: string, to: string): string => `${from}>${to}`;

/** Routing data over a set of available engines. */
export class Registry {
  private readonly engines: ReadonlyMap<string, Engine>;
  private readonly proven: ProvenPairs | undefined;
  private readonly cache = new Map<string, Route[]>();

  /** `engines`: the available ones (probed); order does not matter. */
  constructor(engines: readonly Engine[], opts: RegistryOptions = {}) {
    this.engines = new Map(engines.map((e) => [e.name, e]));
    this.proven = opts.proven;
  }

  /** Engines that do the pair, in priority order; `hop`: as one step of a chain (no {@link Engine.directOnly} engine). */
  private direct(from: string, to: string, hop = false): string[] {
    const names: string[] = [];
    for (const name of ENGINE_ORDER) {
      const e = this.engines.get(name);
      if (!e || !e.reads.includes(from) || !e.writes.includes(to) || (hop && e.directOnly)) continue;
      const ok = e.supports ? e.supports(from, to) : from !== to;
      if (ok) names.push(name);
    }
    return names;
  }

  /**
   * Routes for a pair, best first; none when the registry holds a proof and the pair is not
   * in it. `ocr` (the caller asked for `ocr_language`) keeps only the routes that run
   * tesseract for image → PDF and PDF → PDF/text: a conversion asked for OCR that cannot do
   * it fails rather than return a copy without text (issue 12).
   */
  routes(from: string, to: string, opts: { ocr?: boolean } = {}): Route[] {
    const key = `${pairKey(from, to)}${opts.ocr ? '+ocr' : ''}`;
    let routes = this.cache.get(key);
    if (!routes) {
      routes = this.proven && !this.proven.has(pairKey(from, to)) ? [] : this.candidates(from, to, opts.ocr === true);
      const chain = this.proven?.get(pairKey(from, to));
      // The proven route first: the listing shows, and a conversion runs, what was proved.
      if (chain && !opts.ocr) {
        const same = (r: Route): boolean => r.steps.map((s) => s.engine).join('>') === chain.join('>');
        routes = [...routes.filter(same), ...routes.filter((r) => !same(r))];
      }
      this.cache.set(key, routes);
    }
    return routes;
  }

  /** Every route the engines could take, proven or not. */
  private candidates(from: string, to: string, ocr: boolean): Route[] {
    // Pairs another engine does too, where OCR runs only when asked for (ocr_language).
    const ocrPair = (formatInfo(from)?.family === 'image' && to === 'pdf') || (from === 'pdf' && (to === 'pdf' || to === 'txt'));
    const usesOcr = (r: Route): boolean => r.steps.some((s) => s.engine === 'tesseract');
    // OCR is slow and changes the output: only when asked to; when asked, nothing else.
    const keep = (rs: Route[]): Route[] => (ocrPair ? rs.filter((r) => usesOcr(r) === ocr) : rs);
    const direct = keep(this.direct(from, to).map((engine) => ({ steps: [{ engine, from, to }] })));
    if (!direct.length) return keep(this.chains(from, to));
    // The browser's pairs keep the document engines' chain behind it (issue 22): a page the
    // browser cannot render (it crashed twice over) is still converted, plainly.
    if (direct.every((r) => r.steps[0]!.engine === 'chromium')) {
      return [...direct, ...keep(this.chains(from, to)).filter((r) => !r.steps.some((s) => s.engine === 'chromium'))];
    }
    return direct;
  }

  private chains(from: string, to: string): Route[] {
    const family = formatInfo(from)?.family;
    const out: Route[] = [];
    // Never a round trip to the same format.
    if (from === to) return out;
    for (const via of FORMAT_INTERMEDIATES.get(from) ?? (family && INTERMEDIATES[family]) ?? []) {
      if (via === from || via === to) continue;
      for (const first of this.direct(from, via, true)) {
        // A first hop through OCR would turn a document into its recognised text: never.
        if (first === 'tesseract') continue;
        for (const second of this.direct(via, to, true)) {
          // OCR reads pictures: a document rendered to PDF has its text already (poppler).
          if (second === 'tesseract' && family !== 'image') continue;
          // Writer's PDF import frames every line as on the page: for a PDF someone has, not
          // for a document of ours rendered to PDF on the way (its structure would be lost).
          if (second === 'libreoffice' && via === 'pdf') continue;
          // A browser's screenshot or print of the HTML a document engine made of a document,
          // sheet or slide show is not that document's picture (its PDF route is): the browser
          // renders markup's HTML only (md → html → png), as it renders an HTML upload.
          if (second === 'chromium' && family !== 'markup') continue;
          out.push({ steps: [{ engine: first, from, to: via }, { engine: second, from: via, to }] });
        }
      }
      if (out.length) break;
    }
    return out;
  }
  /** Targets of a source format, in catalogue order. */
  targets(from: string): TargetListing[] {
    const out: TargetListing[] = [];
    for (const f of FORMATS) {
      const [route] = this.routes(from, f.ext);
      if (!route) continue;
      const steps = route.steps;
      out.push({
        format: f.ext,
        mime_type: f.mime_type,
        family: f.family,
        engines: steps.map((s) => s.engine),
        ...(steps.length > 1 ? { via: steps[0]?.to } : {}),
        presets: PRESETS.filter((p) => p.families.includes(f.family)).map((p) => p.name),
      });
    }
    return out;
  }

  /** Every catalogue format some available engine reads or writes. */
  formats(): FormatListing[] {
    const all = [...this.engines.values()];
    const readable = new Set<string>();
    const writable = new Set<string>();
    for (const f of FORMATS) {
      if (all.some((e) => e.reads.includes(f.ext)) && this.targets(f.ext).length) readable.add(f.ext);
    }
    for (const src of readable) for (const t of this.targets(src)) writable.add(t.format);
    return FORMATS.filter((f) => readable.has(f.ext) || writable.has(f.ext)).map((f) => ({
      ...f,
      readable: readable.has(f.ext),
      writable: writable.has(f.ext),
    }));
  }

  /** Every pair the engines could do, proven or not, with its preferred route (for the matrix runner). */
  candidatePairs(): { from: string; to: string; route: Route }[] {
    const out: { from: string; to: string; route: Route }[] = [];
    for (const f of FORMATS) {
      if (![...this.engines.values()].some((e) => e.reads.includes(f.ext))) continue;
      for (const t of FORMATS) {
        const [route] = this.candidates(f.ext, t.ext, false);
        if (route) out.push({ from: f.ext, to: t.ext, route });
      }
    }
    return out;
  }

  /** Every routable (source, target) pair. */
  pairs(): { from: string; to: string }[] {
    return FORMATS.flatMap((f) => this.targets(f.ext).map((t) => ({ from: f.ext, to: t.format })));
  }
}
