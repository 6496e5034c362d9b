import { useMemo, useState, type FormEvent } from 'react';
import { api, ApiError, upload } from '../shared/api.js';
import { Card, ErrorText, ProgressBar, ShownOnce, StatusPill, useLoad, usePolling } from '../shared/components.js';
import { DropZone } from '../shared/drop-zone.js';
import { formatBytes, formatDate } from '../shared/format.js';
import { MergeCard } from './merge-card.js';
import { EMPTY_PDF_TOOLS, PdfTools, pdfToolsOptions } from './pdf-tools.js';
import { batchTargets, firstTarget, groupTargets, targetLabel } from './target-groups.js';
import type { Conversion, ConversionList, Formats, Targets, Uploaded } from './types.js';

/** Paper sizes the browser prints on (the API also takes a width x height). */
const PAPERS = ['A4', 'Letter', 'A3', 'A5', 'Legal', 'Tabloid'];
/** "Page 2 of 5", centred at the bottom of every page. */
const PAGE_NUMBER_FOOTER = '<div style="font-size:9px;width:100%;text-align:center;color:#57606a">Page <span class="pageNumber"></span> of <span class="totalPages"></span></div>';

const RUNNING = new Set(['queued', 'processing']);

function downloadHref(c: Conversion): string | null {
  return c.status === 'completed' && c.download_token ? `/api/v1/jobs/${encodeURIComponent(c.id)}/download/${encodeURIComponent(c.download_token)}` : null;
}

export function ConvertPage() {
  const formats = useLoad(() => api<Formats>('/api/v1/formats'));
  const recent = useLoad(() => api<ConversionList>('/api/dashboard/conversions'));
  const [file, setFile] = useState<File | null>(null);
  const [sent, setSent] = useState<number | null>(null);
  const [uploaded, setUploaded] = useState<Uploaded | null>(null);
  const [targets, setTargets] = useState<Targets['targets']>([]);
  const [target, setTarget] = useState('');
  const [preset, setPreset] = useState('');
  const [quality, setQuality] = useState('');
  const [pageRange, setPageRange] = useState('');
  const [ocr, setOcr] = useState('');
  const [stripActive, setStripActive] = useState(false);
  const [split, setSplit] = useState(false);
  // Page options of HTML and Markdown printed by the browser (issue 22).
  const [paper, setPaper] = useState('');
  const [landscape, setLandscape] = useState(false);
  const [margin, setMargin] = useState('');
  const [pageNumbers, setPageNumbers] = useState(false);
  const [viewportWidth, setViewportWidth] = useState('');
  const [docTitle, setDocTitle] = useState('');
  const [author, setAuthor] = useState('');
  const [scale, setScale] = useState('');
  const [headerHtml, setHeaderHtml] = useState('');
  const [footerHtml, setFooterHtml] = useState('');
  const [waitFor, setWaitFor] = useState('');
  const [css, setCss] = useState('');
  // A video to an animation or a still (issue 31): where, how long, how fast, how wide, how often.
  const [clip, setClip] = useState({ start: '', duration: '', fps: '', width: '', loop: '', still: false });
  // A web page fetched by the service (extension, issues 22 and 24).
  const [pageUrl, setPageUrl] = useState('');
  const [pageTarget, setPageTarget] = useState('pdf');
  // Each file of an archive converted (the batch option) and the result sent to a bucket (issue 24).
  const [batch, setBatch] = useState(false);
  // A PDF's form, redaction, numbering, PDF/A level and signature (issue 25).
  const [pdfTools, setPdfTools] = useState(EMPTY_PDF_TOOLS);
  const [exportTo, setExportTo] = useState({ endpoint: '', bucket: '', key: '', region: '', access_key_id: '', secret_access_key: '' });
  const [current, setCurrent] = useState<Conversion | null>(null);
  const [error, setError] = useState<unknown>(null);

  const pick = async (f: File | null) => {
    setFile(f);
    setUploaded(null);
    setTargets([]);
    setTarget('');
    setBatch(false);
    setPdfTools(EMPTY_PDF_TOOLS);
    setError(null);
    if (!f) return;
    // Upload at once: the service detects the format from the bytes, and only then are its targets known.
    setSent(0);
    const form = new FormData();
    form.append('file', f, f.name);
    try {
      const up = await upload<Uploaded>('/api/v1/upload', form, setSent);
      setUploaded(up);
      const t = await api<Targets>(`/api/v1/formats/${encodeURIComponent(up.format)}/targets`);
      setTargets(t.targets);
      const archive = formats.data?.formats.find((x) => x.ext === up.format)?.family === 'archive';
      // An archive with nothing to become as a whole is converted file by file.
      if (archive && t.targets.length === 0) setBatch(true);
      setTarget(firstTarget(groupTargets(archive && t.targets.length === 0 ? batchTargets(formats.data?.formats) : t.targets, formats.data?.formats)));
    } catch (err) {
      setError(err);
    } finally {
      setSent(null);
    }
  };

  const refresh = async (id: string) => {
    try {
      const c = await api<Conversion>(`/api/v1/jobs/${encodeURIComponent(id)}`);
      setCurrent(c);
      if (!RUNNING.has(c.status)) recent.reload();
    } catch (err) {
      // Too many requests while polling: the next poll (later each time) asks again.
      if (!(err instanceof ApiError && err.status === 429)) setError(err);
    }
  };
  usePolling(async () => {
    if (current) await refresh(current.id);
  }, current !== null && RUNNING.has(current.status), current?.id);

  const convert = async (e: FormEvent) => {
    e.preventDefault();
    if (!uploaded || !target) return;
    setError(null);
    const body: Record<string, unknown> = { upload_id: uploaded.upload_id, target_format: target };
    if (preset) body.preset = preset;
    if (quality) body.quality = Number(quality);
    if (pageRange.trim()) body.page_range = pageRange.trim();
    if (ocr) body.ocr_language = ocr;
    if (stripActive) body.remove_active_content = true;
    if (split && canSplit) body.split = true;
    if (batch && sourceIsArchive) body.batch = true;
    if (videoPicture) {
      for (const k of ['start', 'duration', 'fps', 'width', 'loop'] as const) {
        if (clip[k].trim() && (k === 'start' || k === 'width' || animation)) body[k] = Number(clip[k]);
      }
      if (target === 'webp' && clip.still) body.animated = false;
    }
    if (target === 'pdf' && !batch) Object.assign(body, pdfToolsOptions(pdfTools, uploaded.format === 'pdf'));
    if (exportTo.bucket.trim()) {
      const x: Record<string, string> = { bucket: exportTo.bucket.trim(), access_key_id: exportTo.access_key_id.trim(), secret_access_key: exportTo.secret_access_key };
      for (const k of ['endpoint', 'key', 'region'] as const) if (exportTo[k].trim()) x[k] = exportTo[k].trim();
      body.export = x;
    }
    if (browserPdf) {
      if (paper) body.paper = paper;
      if (landscape) body.landscape = true;
      if (margin.trim()) body.margin = margin.trim();
      if (pageNumbers) body.footer_html = PAGE_NUMBER_FOOTER;
      // A footer of one's own wins over the page-number one.
      if (footerHtml.trim()) body.footer_html = footerHtml;
      if (headerHtml.trim()) body.header_html = headerHtml;
      if (scale) body.scale = Number(scale);
      if (docTitle.trim()) body.title = docTitle.trim();
      if (author.trim()) body.author = author.trim();
    }
    if (browserImage && viewportWidth) body.viewport_width = Number(viewportWidth);
    if (browserPdf || browserImage) {
      if (waitFor.trim()) body.wait_for = waitFor.trim();
      if (css.trim()) body.css = css;
    }
    try {
      const c = await api<Conversion>('/api/v1/convert?wait=0', { method: 'POST', json: body });
      setCurrent(c);
      recent.reload();
    } catch (err) {
      setError(err);
    }
  };

  const convertPage = async (e: FormEvent) => {
    e.preventDefault();
    if (!pageUrl.trim()) return;
    setError(null);
    try {
      const c = await api<Conversion>('/api/v1/convert?wait=0', { method: 'POST', json: { url: pageUrl.trim(), target_format: pageTarget } });
      setCurrent(c);
      recent.reload();
    } catch (err) {
      setError(err);
    }
  };

  const [shared, setShared] = useState<{ id: string; url: string; expires_at: string } | null>(null);
  const share = async (id: string) => {
    setError(null);
    try {
      const made = await api<{ link: { url: string; expires_at: string } }>(`/api/v1/jobs/${encodeURIComponent(id)}/links`, { method: 'POST', json: {} });
      setShared({ id, url: made.link.url, expires_at: made.link.expires_at });
    } catch (err) {
      setError(err);
    }
  };

  const shred = async (id: string) => {
    if (!window.confirm('Shred this conversion? The uploaded file and the result are deleted from the server now; download links stop working.')) return;
    setError(null);
    try {
      const c = await api<Conversion>(`/api/v1/jobs/${encodeURIComponent(id)}`, { method: 'DELETE' });
      if (current?.id === id) setCurrent(c);
      recent.reload();
    } catch (err) {
      setError(err);
    }
  };

  const sourceIsArchive = formats.data?.formats.find((f) => f.ext === uploaded?.format)?.family === 'archive';
  const everyFormat = useMemo(() => batchTargets(formats.data?.formats), [formats.data]);
  const offered = batch && sourceIsArchive ? everyFormat : targets;
  const chooseBatch = (on: boolean) => {
    setBatch(on);
    setTarget(firstTarget(groupTargets(on ? everyFormat : targets, formats.data?.formats)));
  };
  const chosen = batch ? undefined : targets.find((t) => t.format === target);
  const sourceIsVideo = formats.data?.formats.find((f) => f.ext === uploaded?.format)?.family === 'video';
  // What the service makes of a video as pictures: gif and webp animate (webp can be a still), jpg and png are stills.
  const videoPicture = !batch && sourceIsVideo && ['gif', 'webp', 'jpg', 'png'].includes(target);
  const animation = videoPicture && (target === 'gif' || (target === 'webp' && !clip.still));
  // split: PDFs cut into pages, or every page of a paged source (PDF, documents, sheets, slides) as a picture.
  const sourcePaged = formats.data?.formats.find((f) => f.ext === uploaded?.format)?.paged === true;
  const canSplit = !batch && (target === 'pdf' || (chosen?.family === 'image' && sourcePaged));
  const presets = formats.data?.presets.filter((p) => chosen?.presets.includes(p.name)) ?? [];
  // The browser renders this pair: its page options apply (PDF layout, or the picture's width).
  const byBrowser = chosen?.engines.at(-1) === 'chromium' && chosen.engines.length === 1;
  const browserPdf = byBrowser && target === 'pdf';
  const browserImage = byBrowser && chosen?.family === 'image';

  return (
    <>
      <Card title="Convert a file">
        <div className="stack">
          <DropZone label="Choose or drop a file" hint="Documents, spreadsheets, presentations, images, audio, video, e-books. The format is detected from the file itself." file={file} onFile={(f) => void pick(f)} disabled={sent !== null} />
          {sent !== null && <ProgressBar label="Uploading" pct={sent * 100} />}
          <form onSubmit={(e) => void convertPage(e)} className="row" data-testid="page-url">
            <label className="grow">
              Or a web page (URL)
              <input name="url" type="url" value={pageUrl} onChange={(e) => setPageUrl(e.target.value)} placeholder="https://example.com/invoice/42" maxLength={2048} />
            </label>
            <label>
              As
              <select name="page_target" value={pageTarget} onChange={(e) => setPageTarget(e.target.value)}>
                {['pdf', 'png', 'jpg', 'webp'].map((t) => <option key={t} value={t}>{t.toUpperCase()}</option>)}
              </select>
            </label>
            <button type="submit" disabled={!pageUrl.trim()}>Convert page</button>
          </form>
          {uploaded && (
            <p data-testid="detected">Detected <strong>{targetLabel(uploaded.format, formats.data?.formats)}</strong>, {formatBytes(uploaded.size_bytes)}. {targets.length === 0 && !sourceIsArchive && 'No conversion is available for this format.'}</p>
          )}
          {uploaded && (targets.length > 0 || sourceIsArchive) && (
            <form onSubmit={convert} className="stack">
              {sourceIsArchive && (
                <label className="check">
                  <input type="checkbox" name="batch" checked={batch} disabled={targets.length === 0} onChange={(e) => chooseBatch(e.target.checked)} /> Convert each file inside the archive: a zip of the results with a manifest.json (one conversion per file; files that fail are not charged)
                </label>
              )}
              <div className="options-grid">
                <label>
                  {batch ? 'Convert each file to' : 'Convert to'}
                  <select name="target" value={target} onChange={(e) => setTarget(e.target.value)}>
                    {groupTargets(offered, formats.data?.formats).map((g) => (
                      <optgroup key={g.label} label={g.label}>
                        {g.options.map((o) => <option key={o.value} value={o.value}>{o.label}</option>)}
                      </optgroup>
                    ))}
                  </select>
                </label>
                {presets.length > 0 && (
                  <label>
                    Preset
                    <select name="preset" value={preset} onChange={(e) => setPreset(e.target.value)}>
                      <option value="">None</option>
                      {presets.map((p) => <option key={p.name} value={p.name}>{p.name}</option>)}
                    </select>
                  </label>
                )}
                <label>
                  Quality (1–100)
                  <input name="quality" type="number" min={1} max={100} value={quality} onChange={(e) => setQuality(e.target.value)} placeholder="default" />
                </label>
                <label>
                  Pages
                  <input name="page_range" value={pageRange} onChange={(e) => setPageRange(e.target.value)} placeholder="e.g. 1-3,5" />
                </label>
                {formats.data && (
                  <label>
                    OCR language
                    <select name="ocr" value={ocr} onChange={(e) => setOcr(e.target.value)}>
                      <option value="">No OCR</option>
                      {formats.data.ocr_languages.map((o) => <option key={o.code} value={o.code}>{o.code} ({o.alias})</option>)}
                    </select>
                  </label>
                )}
              </div>
              {preset && <p className="muted small">Preset {preset}: {presets.find((p) => p.name === preset)?.description}</p>}
              {target === 'pdf' && (
                <label className="check"><input type="checkbox" checked={stripActive} onChange={(e) => setStripActive(e.target.checked)} /> Remove active content (JavaScript, actions, embedded files) from the PDF</label>
              )}
              {canSplit && (
                <label className="check"><input type="checkbox" name="split" checked={split} onChange={(e) => setSplit(e.target.checked)} /> One {target.toUpperCase()} per page, delivered as a zip</label>
              )}
              {browserPdf && (
                <div className="options-grid" data-testid="page-options">
                  <label>
                    Paper
                    <select name="paper" value={paper} onChange={(e) => setPaper(e.target.value)}>
                      <option value="">The page's own (A4)</option>
                      {PAPERS.map((p) => <option key={p} value={p}>{p}</option>)}
                    </select>
                  </label>
                  <label>
                    Margins
                    <input name="margin" value={margin} onChange={(e) => setMargin(e.target.value)} placeholder="e.g. 15mm or 20mm 15mm" />
                  </label>
                  <label className="check"><input type="checkbox" name="landscape" checked={landscape} onChange={(e) => setLandscape(e.target.checked)} /> Landscape</label>
                  <label className="check"><input type="checkbox" name="page_numbers" checked={pageNumbers} onChange={(e) => setPageNumbers(e.target.checked)} /> Page numbers in the footer</label>
                  <label>
                    Title
                    <input name="title" value={docTitle} onChange={(e) => setDocTitle(e.target.value)} maxLength={300} placeholder="The page's own" />
                  </label>
                  <label>
                    Author
                    <input name="author" value={author} onChange={(e) => setAuthor(e.target.value)} maxLength={300} />
                  </label>
                </div>
              )}
              {(browserPdf || browserImage) && (
                <details className="more-options" data-testid="more-page-options">
                  <summary>More page options</summary>
                  <div className="options-grid">
                    {browserPdf && (
                      <>
                        <label>
                          Scale
                          <input name="scale" type="number" min={0.1} max={2} step={0.05} value={scale} onChange={(e) => setScale(e.target.value)} placeholder="1" />
                        </label>
                        <label>
                          Header (HTML)
                          <textarea name="header_html" rows={2} maxLength={8192} value={headerHtml} onChange={(e) => setHeaderHtml(e.target.value)} placeholder={'<div style="font-size:9px"><span class="title"></span></div>'} />
                        </label>
                        <label>
                          Footer (HTML)
                          <textarea name="footer_html" rows={2} maxLength={8192} value={footerHtml} onChange={(e) => setFooterHtml(e.target.value)} placeholder={'<div style="font-size:9px"><span class="pageNumber"></span> / <span class="totalPages"></span></div>'} />
                        </label>
                      </>
                    )}
                    <label>
                      Wait for (CSS selector)
                      <input name="wait_for" value={waitFor} onChange={(e) => setWaitFor(e.target.value)} placeholder="#chart svg" />
                    </label>
                    <label>
                      Extra CSS
                      <textarea name="css" rows={2} maxLength={65536} value={css} onChange={(e) => setCss(e.target.value)} placeholder="body { font-size: 11pt }" />
                    </label>
                  </div>
                  <p className="muted small">Header and footer templates fill in <code>pageNumber</code>, <code>totalPages</code>, <code>date</code> and <code>title</code> spans; they load nothing.</p>
                </details>
              )}
              {videoPicture && (
                <div className="options-grid" data-testid="video-options">
                  <label>
                    {animation ? 'Start at (seconds)' : 'Frame at (seconds)'}
                    <input name="start" type="number" min={0} max={86400} step="any" value={clip.start} onChange={(e) => setClip({ ...clip, start: e.target.value })} placeholder={animation ? '0' : 'a representative frame'} />
                  </label>
                  {animation && (
                    <>
                      <label>
                        Length (seconds)
                        <input name="duration" type="number" min={0.01} max={60} step="any" value={clip.duration} onChange={(e) => setClip({ ...clip, duration: e.target.value })} placeholder="10" />
                      </label>
                      <label>
                        Frames per second
                        <input name="fps" type="number" min={1} max={30} value={clip.fps} onChange={(e) => setClip({ ...clip, fps: e.target.value })} placeholder="12" />
                      </label>
                      <label>
                        Plays
                        <input name="loop" type="number" min={0} max={65535} value={clip.loop} onChange={(e) => setClip({ ...clip, loop: e.target.value })} placeholder="0: for ever" />
                      </label>
                    </>
                  )}
                  <label>
                    Width (pixels)
                    <input name="width" type="number" min={16} max={1920} value={clip.width} onChange={(e) => setClip({ ...clip, width: e.target.value })} placeholder={animation ? '480 at most' : 'the clip’s'} />
                  </label>
                  {target === 'webp' && <label className="check"><input type="checkbox" name="still" checked={clip.still} onChange={(e) => setClip({ ...clip, still: e.target.checked })} /> One still picture instead of an animation</label>}
                </div>
              )}
              {browserImage && (
                <label>
                  Window width (CSS pixels)
                  <input name="viewport_width" type="number" min={320} max={3840} value={viewportWidth} onChange={(e) => setViewportWidth(e.target.value)} placeholder="1280" />
                </label>
              )}
              {target === 'pdf' && !batch && <PdfTools uploadId={uploaded.upload_id} fromPdf={uploaded.format === 'pdf'} state={pdfTools} onChange={setPdfTools} />}
              <details className="more-options" data-testid="export-options">
                <summary>Send the result to S3-compatible storage</summary>
                <div className="options-grid">
                  <label>
                    Endpoint
                    <input name="export_endpoint" type="url" value={exportTo.endpoint} onChange={(e) => setExportTo({ ...exportTo, endpoint: e.target.value })} placeholder="AWS S3; or https://minio.example.com:9000" maxLength={2048} />
                  </label>
                  <label>
                    Bucket
                    <input name="export_bucket" value={exportTo.bucket} onChange={(e) => setExportTo({ ...exportTo, bucket: e.target.value })} placeholder="reports" maxLength={63} />
                  </label>
                  <label>
                    Object key
                    <input name="export_key" value={exportTo.key} onChange={(e) => setExportTo({ ...exportTo, key: e.target.value })} placeholder="{id}/{filename}" maxLength={1024} />
                  </label>
                  <label>
                    Region
                    <input name="export_region" value={exportTo.region} onChange={(e) => setExportTo({ ...exportTo, region: e.target.value })} placeholder="us-east-1" maxLength={40} />
                  </label>
                  <label>
                    Access key ID
                    <input name="export_access_key_id" value={exportTo.access_key_id} onChange={(e) => setExportTo({ ...exportTo, access_key_id: e.target.value })} autoComplete="off" maxLength={256} required={exportTo.bucket.trim() !== ''} />
                  </label>
                  <label>
                    Secret access key
                    <input name="export_secret_access_key" type="password" value={exportTo.secret_access_key} onChange={(e) => setExportTo({ ...exportTo, secret_access_key: e.target.value })} autoComplete="off" maxLength={256} required={exportTo.bucket.trim() !== ''} />
                  </label>
                </div>
                <p className="muted small">With a bucket named, the output is uploaded there once it is made. Key placeholders: <code>{'{id}'}</code>, <code>{'{filename}'}</code>, <code>{'{stem}'}</code>, <code>{'{ext}'}</code>, <code>{'{date}'}</code>. The keys go with this one conversion: the service keeps them sealed until the upload ran, then deletes them, and never shows them again.</p>
              </details>
              {chosen && <p className="muted small">Runs with {chosen.engines.join(' then ')}{chosen.via ? ` via ${chosen.via.toUpperCase()}` : ''}.</p>}
              <div><button type="submit" className="primary">Convert</button></div>
            </form>
          )}
          <ErrorText error={error} />
        </div>
      </Card>
      <MergeCard
        onStarted={(c) => {
          setCurrent(c);
          recent.reload();
        }}
      />
      {current && (
        <Card title={`Conversion ${current.id}`} actions={<StatusPill status={current.status} />}>
          <div aria-live="polite">
            <p data-testid="conversion-status">{current.source.format.toUpperCase()} → {current.target_format.toUpperCase()}{current.status === 'queued' ? ' — waiting for a free converter…' : current.status === 'processing' ? ' — converting…' : ''}</p>
            {/* Queued: nothing moves yet, so no moving bar (issue 30); it starts when a conversion ahead of it finishes. */}
            {current.status === 'queued' && <p className="muted small">Queued behind other conversions: every converter is busy, or your plan&apos;s conversions at once (see Overview) are running. It starts as soon as one finishes.</p>}
            {current.status === 'processing' && <div className="spinner-bar" role="progressbar" aria-label="Converting" />}
            {current.status === 'completed' && current.output && (
              <p>{current.output.filename}, {formatBytes(current.output.size_bytes)}{current.output.pages ? `, ${current.output.pages} page${current.output.pages === 1 ? '' : 's'}` : ''}. SHA-256 <code className="hash">{current.output.sha256}</code>. Available until {formatDate(current.expires_at)}.</p>
            )}
            {current.status === 'failed' && current.error && <p className="error">{current.error.message} ({current.error.code})</p>}
            {current.status === 'completed' && current.output?.files && (
              <p data-testid="batch-files">{current.output.files.converted} of {current.output.files.total} files converted{current.output.files.failed ? `, ${current.output.files.failed} failed (see manifest.json in the zip; not charged)` : ''}.</p>
            )}
            {current.export && (
              <p data-testid="export-status" className={current.export.status === 'failed' ? 'error' : undefined}>
                {current.export.status === 'completed'
                  ? `Exported to s3://${current.export.bucket}/${current.export.key ?? ''} (ETag ${current.export.etag ?? '?'}).`
                  : current.export.status === 'failed'
                    ? `Export to s3://${current.export.bucket} failed: ${current.export.error?.message ?? 'unknown error'}`
                    : `Export to s3://${current.export.bucket} waits for the output.`}
              </p>
            )}
          </div>
          <div className="row actions">
            {downloadHref(current) && <a className="button primary" href={downloadHref(current)!} download={current.output?.filename}>Download</a>}
            {downloadHref(current) && <button type="button" onClick={() => void share(current.id)}>Share link</button>}
            {current.status !== 'shredded' && <button type="button" className="danger" onClick={() => void shred(current.id)}>Shred</button>}
          </div>
          {shared?.id === current.id && current.status === 'completed' && (
            <ShownOnce label={`Share link — anyone holding it can download this file without a key until ${formatDate(shared.expires_at)}, or until you shred it`} value={shared.url} onDismiss={() => setShared(null)} />
          )}
        </Card>
      )}
      <Card title="Recent conversions">
        <ErrorText error={recent.error} />
        {recent.data && recent.data.conversions.length === 0 && <p className="muted">No conversions yet.</p>}
        {recent.data && recent.data.conversions.length > 0 && (
          <div className="table-wrap">
            <table className="cards">
              <thead><tr><th scope="col">Conversion</th><th scope="col">Status</th><th scope="col">From → to</th><th scope="col">Result</th><th scope="col">Created</th><th scope="col"><span className="sr-only">Actions</span></th></tr></thead>
              <tbody>
                {recent.data.conversions.map((c) => (
                  <tr key={c.id}>
                    <td data-label="Conversion"><button type="button" className="linkish" onClick={() => void refresh(c.id)}>{c.id}</button></td>
                    <td data-label="Status"><StatusPill status={c.status} /></td>
                    <td data-label="From → to">{c.source.format.toUpperCase()} → {c.target_format.toUpperCase()}</td>
                    <td data-label="Result">{c.output ? `${c.output.filename} (${formatBytes(c.output.size_bytes)})` : '—'}</td>
                    <td data-label="Created">{formatDate(c.created_at)}</td>
                    <td className="actions">
                      <div className="row actions">
                        {downloadHref(c) && <a href={downloadHref(c)!} download={c.output?.filename}>Download</a>}
                        {c.status !== 'shredded' && c.status !== 'expired' && <button type="button" className="danger" onClick={() => void shred(c.id)} aria-label={`Shred conversion ${c.id}`}>Shred</button>}
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>
    </>
  );
}
