import { useState } from 'react';
import { api } from '../shared/api.js';
import { ErrorText } from '../shared/components.js';
import type { Conversion } from './types.js';

/** One AcroForm field, as the PDF's facts (pdf → json) list it. */
export interface FormField {
  readonly name: string;
  readonly type: 'text' | 'checkbox' | 'radio' | 'choice' | 'list' | 'signature' | 'button';
  readonly value: unknown;
  readonly options?: readonly string[];
  readonly page?: number;
  readonly read_only?: boolean;
  readonly multiline?: boolean;
  readonly max_length?: number | null;
}

/** Where page numbers and Bates numbers go. */
const POSITIONS = ['bottom-center', 'bottom-right', 'bottom-left', 'top-center', 'top-right', 'top-left'] as const;

/** What the PDF tools hold; empty strings and false mean "not asked for". */
export interface PdfToolsState {
  /** The fields read from the PDF (null: not read yet) and the values typed in. */
  fields: FormField[] | null;
  values: Record<string, string | boolean | string[]>;
  flatten: boolean;
  redactText: string;
  matchCase: boolean;
  pageNumbers: boolean;
  numberFormat: string;
  numberPosition: string;
  batesPrefix: string;
  batesStart: string;
  batesDigits: string;
  pdfa: string;
  sign: boolean;
  signVisible: boolean;
  signReason: string;
  signLocation: string;
}

export const EMPTY_PDF_TOOLS: PdfToolsState = {
  fields: null, values: {}, flatten: false, redactText: '', matchCase: false,
  pageNumbers: false, numberFormat: '', numberPosition: 'bottom-center', batesPrefix: '', batesStart: '', batesDigits: '',
  pdfa: '', sign: false, signVisible: false, signReason: '', signLocation: '',
};

/** The fields a person fills in (signatures and push buttons are not). */
function fillable(f: FormField): boolean {
  return f.type !== 'signature' && f.type !== 'button' && !f.read_only;
}

/**
 * The API options the PDF tools ask for: `form_data` (only the fields changed from the
 * PDF's own values), `flatten`, `redact` by text, `page_numbers`, `bates`, `pdfa`, `sign`.
 * `fromPdf`: the source is a PDF (forms and redaction apply to PDF sources only).
 */
export function pdfToolsOptions(s: PdfToolsState, fromPdf: boolean): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  if (fromPdf && s.fields) {
    const data: Record<string, unknown> = {};
    for (const f of s.fields.filter(fillable)) {
      // Only what was changed: a radio group or list left as the PDF had it (none chosen) is not sent.
      const v = s.values[f.name];
      if (v !== undefined && JSON.stringify(v) !== JSON.stringify(initialValue(f))) data[f.name] = v;
    }
    if (Object.keys(data).length) o.form_data = data;
  }
  if (fromPdf && s.flatten) o.flatten = true;
  const words = s.redactText.split('\n').map((w) => w.trim()).filter(Boolean);
  if (fromPdf && words.length) o.redact = { text: words, ...(s.matchCase ? { match_case: true } : {}) };
  if (s.pageNumbers) o.page_numbers = { position: s.numberPosition, ...(s.numberFormat.trim() ? { format: s.numberFormat.trim() } : {}) };
  if (s.batesPrefix.trim() || s.batesStart || s.batesDigits) {
    o.bates = {
      ...(s.batesPrefix.trim() ? { prefix: s.batesPrefix.trim() } : {}),
      ...(s.batesStart ? { start: Number(s.batesStart) } : {}),
      ...(s.batesDigits ? { digits: Number(s.batesDigits) } : {}),
    };
  }
  if (s.pdfa) o.pdfa = s.pdfa;
  if (s.sign) {
    o.sign = {
      visible: s.signVisible,
      ...(s.signReason.trim() ? { reason: s.signReason.trim() } : {}),
      ...(s.signLocation.trim() ? { location: s.signLocation.trim() } : {}),
    };
  }
  return o;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Reads a PDF's form fields: a pdf → json conversion of the upload (charged like any
 * conversion), waited for, its JSON downloaded.
 */
async function readFields(uploadId: string): Promise<FormField[]> {
  let c = await api<Conversion>('/api/v1/convert?wait=60', { method: 'POST', json: { upload_id: uploadId, target_format: 'json' } });
  for (let i = 0; (c.status === 'queued' || c.status === 'processing') && i < 120; i++) {
    await sleep(1000);
    c = await api<Conversion>(`/api/v1/jobs/${encodeURIComponent(c.id)}`);
  }
  if (c.status !== 'completed' || !c.download_token) throw new Error(c.error?.message ?? 'The PDF could not be read.');
  const res = await fetch(`/api/v1/jobs/${encodeURIComponent(c.id)}/download/${encodeURIComponent(c.download_token)}`);
  if (!res.ok) throw new Error(`The PDF's facts could not be downloaded (HTTP ${res.status}).`);
  const facts = (await res.json()) as { form?: { fields?: FormField[] } };
  return facts.form?.fields ?? [];
}

/** One input per fillable field, of the field's kind. */
function FieldInput({ field, value, onChange }: { field: FormField; value: string | boolean | string[] | undefined; onChange: (v: string | boolean | string[]) => void }) {
  const label = field.name;
  if (field.type === 'checkbox') {
    return <label className="check"><input type="checkbox" checked={value === true} onChange={(e) => onChange(e.target.checked)} /> {label}</label>;
  }
  if (field.type === 'radio' || field.type === 'choice') {
    return (
      <label>
        {label}
        <select value={typeof value === 'string' ? value : ''} onChange={(e) => onChange(e.target.value)}>
          <option value="">—</option>
          {(field.options ?? []).map((o) => <option key={o} value={o}>{o}</option>)}
        </select>
      </label>
    );
  }
  if (field.type === 'list') {
    const chosen = Array.isArray(value) ? value : typeof value === 'string' && value ? [value] : [];
    return (
      <label>
        {label}
        <select multiple value={chosen} onChange={(e) => onChange([...e.target.selectedOptions].map((o) => o.value))}>
          {(field.options ?? []).map((o) => <option key={o} value={o}>{o}</option>)}
        </select>
      </label>
    );
  }
  const text = typeof value === 'string' ? value : '';
  return (
    <label>
      {label}
      {field.multiline
        ? <textarea rows={3} value={text} maxLength={field.max_length ?? undefined} onChange={(e) => onChange(e.target.value)} />
        : <input value={text} maxLength={field.max_length ?? undefined} onChange={(e) => onChange(e.target.value)} />}
    </label>
  );
}

/** The value a field shows before anyone types: the PDF's own. */
function initialValue(f: FormField): string | boolean | string[] {
  if (f.type === 'checkbox') return f.value === true;
  if (f.type === 'list') return Array.isArray(f.value) ? f.value.map(String) : typeof f.value === 'string' && f.value ? [f.value] : [];
  return typeof f.value === 'string' ? f.value : '';
}

/**
 * PDF work on a PDF target (issue 25): a PDF's form read and filled, flattened; words
 * redacted; page and Bates numbers; a PDF/A level; a signature with the service's
 * certificate. Forms and redaction apply to PDF sources only.
 */
export function PdfTools({ uploadId, fromPdf, state, onChange }: { uploadId: string; fromPdf: boolean; state: PdfToolsState; onChange: (s: PdfToolsState) => void }) {
  const [reading, setReading] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const set = (patch: Partial<PdfToolsState>) => onChange({ ...state, ...patch });

  const read = async () => {
    setError(null);
    setReading(true);
    try {
      const fields = await readFields(uploadId);
      set({ fields, values: Object.fromEntries(fields.filter(fillable).map((f) => [f.name, initialValue(f)])) });
    } catch (err) {
      setError(err);
    } finally {
      setReading(false);
    }
  };

  const fillableFields = state.fields?.filter(fillable) ?? [];
  return (
    <div className="stack" data-testid="pdf-tools">
      {fromPdf && (
        <details className="more-options" data-testid="pdf-form" open={state.fields !== null}>
          <summary>Fill in the PDF’s form</summary>
          <div className="row">
            <button type="button" onClick={() => void read()} disabled={reading}>{reading ? 'Reading the form…' : state.fields ? 'Read the fields again' : 'Read the form’s fields'}</button>
            <span className="muted small">Reading the fields is a PDF → JSON conversion (counted like any other).</span>
          </div>
          <ErrorText error={error} />
          {state.fields && fillableFields.length === 0 && <p className="muted" data-testid="no-fields">This PDF has no fields to fill in.</p>}
          {fillableFields.length > 0 && (
            <div className="options-grid" data-testid="form-fields">
              {fillableFields.map((f) => (
                <FieldInput key={f.name} field={f} value={state.values[f.name]} onChange={(v) => set({ values: { ...state.values, [f.name]: v } })} />
              ))}
            </div>
          )}
          <label className="check"><input type="checkbox" checked={state.flatten} onChange={(e) => set({ flatten: e.target.checked })} /> Flatten: the fields and annotations become part of the page (no longer editable)</label>
        </details>
      )}
      {fromPdf && (
        <details className="more-options" data-testid="pdf-redact">
          <summary>Redact words</summary>
          <label>
            Words or phrases to remove, one per line
            <textarea rows={3} maxLength={20000} value={state.redactText} onChange={(e) => set({ redactText: e.target.value })} placeholder={'Jane Doe\n555-0100'} />
          </label>
          <label className="check"><input type="checkbox" checked={state.matchCase} onChange={(e) => set({ matchCase: e.target.checked })} /> Match case</label>
          <p className="muted small">The text, pictures and drawings under every match are removed from the file, not just covered, and the document’s metadata is cleared.</p>
        </details>
      )}
      <details className="more-options" data-testid="pdf-numbering">
        <summary>Page numbers and Bates numbers</summary>
        <div className="options-grid">
          <label className="check"><input type="checkbox" checked={state.pageNumbers} onChange={(e) => set({ pageNumbers: e.target.checked })} /> Number the pages</label>
          <label>
            Number format
            <input value={state.numberFormat} onChange={(e) => set({ numberFormat: e.target.value })} placeholder="{page} of {pages}" maxLength={200} />
          </label>
          <label>
            Position
            <select value={state.numberPosition} onChange={(e) => set({ numberPosition: e.target.value })}>
              {POSITIONS.map((p) => <option key={p} value={p}>{p.replace('-', ' ')}</option>)}
            </select>
          </label>
          <label>
            Bates prefix
            <input value={state.batesPrefix} onChange={(e) => set({ batesPrefix: e.target.value })} placeholder="ACME-" maxLength={50} />
          </label>
          <label>
            Bates start
            <input type="number" min={0} value={state.batesStart} onChange={(e) => set({ batesStart: e.target.value })} placeholder="1" />
          </label>
          <label>
            Bates digits
            <input type="number" min={1} max={12} value={state.batesDigits} onChange={(e) => set({ batesDigits: e.target.value })} placeholder="6" />
          </label>
        </div>
      </details>
      <details className="more-options" data-testid="pdf-archive-sign">
        <summary>PDF/A and signature</summary>
        <div className="options-grid">
          <label>
            PDF/A level
            <select value={state.pdfa} onChange={(e) => set({ pdfa: e.target.value })}>
              <option value="">None</option>
              <option value="1b">PDF/A-1b</option>
              <option value="2b">PDF/A-2b</option>
              <option value="3b">PDF/A-3b</option>
            </select>
          </label>
          <label className="check"><input type="checkbox" checked={state.sign} onChange={(e) => set({ sign: e.target.checked })} /> Sign with the service’s certificate</label>
          {state.sign && (
            <>
              <label className="check"><input type="checkbox" checked={state.signVisible} onChange={(e) => set({ signVisible: e.target.checked })} /> Visible signature</label>
              <label>
                Reason
                <input value={state.signReason} onChange={(e) => set({ signReason: e.target.value })} placeholder="Approved" maxLength={200} />
              </label>
              <label>
                Location
                <input value={state.signLocation} onChange={(e) => set({ signLocation: e.target.value })} placeholder="Berlin" maxLength={200} />
              </label>
            </>
          )}
        </div>
      </details>
    </div>
  );
}
