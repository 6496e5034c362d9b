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
  'libreoffice', 'pandoc', 'sharp', 'imagemagick', 'img2pdf', 'tesseract', 'ffmpeg', 'poppler', 'qpdf', 'ghostscript',
] as const;

/** Chains through an intermediate format, used only when no direct route exists. */
const CHAINS: readonly { from: readonly string[]; via: string; to: readonly string[] }[] = [
  // pandoc cannot write DOCX or PDF in its sandbox here; LibreOffice finishes from ODT.
  { from: ['md', 'rst', 'org', 'html', 'tex', 'epub'], via: 'odt', to: ['pdf', 'docx', 'doc', 'rtf'] },
  // Office pages and slides as images go through PDF (page_range then applies).
  { from: ['docx', 'doc', 'odt', 'rtf', 'xlsx', 'xls', 'ods', 'pptx', 'ppt', 'odp'], via: 'pdf', to: ['png', 'jpg'] },
  // Images img2pdf cannot read become PNG first.
  { from: ['webp', 'avif', 'bmp', 'ico', 'ppm', 'psd'], via: 'png', to: ['pdf'] },
  { from: ['avif', 'ico', 'psd', 'bmp'], via: 'png', to: ['txt', 'hocr'] },
];

/** Routing data over a set of available engines. */
export class Registry {
  private readonly engines: ReadonlyMap<string, Engine>;

  /** `engines`: the available ones (probed); order does not matter. */
  constructor(engines: readonly Engine[]) {
    this.engines = new Map(engines.map((e) => [e.name, e]));
  }

  private direct(from: string, to: string): string[] {
    const names: string[] = [];
    for (const name of ENGINE_ORDER) {
      const e = this.engines.get(name);
      if (!e || !e.reads.includes(from) || !e.writes.includes(to)) continue;
      const ok = e.supports ? e.supports(from, to) : from !== to;
      if (ok) names.push(name);
    }
    return names;
  }

  /**
   * Routes for a pair, best first. `ocr` (the caller asked for `ocr_language`) keeps only
   * the routes that run tesseract for image → PDF and PDF → PDF/text: a conversion asked
   * for OCR that cannot do it fails rather than return a copy without text (issue 12).
   */
  routes(from: string, to: string, opts: { ocr?: boolean } = {}): Route[] {
    // Pairs another engine does too, where OCR runs only when asked for (ocr_language).
    const ocrPair = (formatInfo(from)?.family === 'image' && to === 'pdf') || (from === 'pdf' && (to === 'pdf' || to === 'txt'));
    const usesOcr = (r: Route): boolean => r.steps.some((s) => s.engine === 'tesseract');
    let direct: Route[] = this.direct(from, to).map((engine) => ({ steps: [{ engine, from, to }] }));
    // OCR is slow and changes the output: only when asked to.
    if (ocrPair && !opts.ocr) direct = direct.filter((r) => !usesOcr(r));
    const chained = direct.length && !(ocrPair && opts.ocr && !direct.some(usesOcr)) ? [] : this.chains(from, to, opts);
    const all = [...direct, ...chained];
    return ocrPair && opts.ocr ? all.filter(usesOcr) : all;
  }

  private chains(from: string, to: string, opts: { ocr?: boolean }): Route[] {
    const out: Route[] = [];
    for (const c of CHAINS) {
      if (!c.from.includes(from) || !c.to.includes(to)) continue;
      for (const first of this.direct(from, c.via)) {
        for (const second of this.routes(c.via, to, opts)) {
          if (second.steps.length !== 1) continue;
          out.push({ steps: [{ engine: first, from, to: c.via }, ...second.steps] });
        }
      }
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

  /** Every routable (source, target) pair. */
  pairs(): { from: string; to: string }[] {
    return FORMATS.flatMap((f) => this.targets(f.ext).map((t) => ({ from: f.ext, to: t.format })));
  }
}
