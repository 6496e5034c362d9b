import { useState, type FormEvent } from 'react';
import { api, upload } from '../shared/api.js';
import { Card, ErrorText, ProgressBar, StatusPill, useInterval, useLoad } from '../shared/components.js';
import { DropZone } from '../shared/drop-zone.js';
import { formatDate, formatNumber } from '../shared/format.js';
import type { JobList, JobStatus, JobSubmitted } from './types.js';

const FINAL = new Set(['completed', 'failed', 'cancelled']);

/** The per-filter downloads of a completed job (the service's `status` extension): label, statuses, file name suffix. */
const DOWNLOADS: ReadonlyArray<{ label: string; status: string; suffix: string }> = [
  { label: 'Download valid only (CSV)', status: 'valid', suffix: 'valid' },
  { label: 'Download valid and risky (CSV)', status: 'valid,risky', suffix: 'valid-risky' },
  { label: 'Download invalid and unknown (CSV)', status: 'invalid,unknown', suffix: 'invalid-unknown' },
];

/** The CSV download of a job: every row, or those with `status`; `all` adds the sub-check columns. */
function csvUrl(jobId: string, status: string | null, all: boolean): string {
  const query = new URLSearchParams({ format: 'csv' });
  if (status) query.set('status', status);
  if (all) query.set('columns', 'all');
  return `/api/v1/jobs/${encodeURIComponent(jobId)}/results?${query.toString()}`;
}

export function JobsPage() {
  const jobs = useLoad(() => api<JobList>('/api/v1/jobs'));
  const [file, setFile] = useState<File | null>(null);
  const [smtp, setSmtp] = useState(false);
  const [dedupe, setDedupe] = useState(true);
  const [sent, setSent] = useState<number | null>(null);
  const [active, setActive] = useState<JobStatus | null>(null);
  const [allColumns, setAllColumns] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const poll = async (id: string) => {
    try {
      const s = await api<JobStatus>(`/api/v1/jobs/${encodeURIComponent(id)}`);
      setActive(s);
      if (FINAL.has(s.status)) jobs.reload();
    } catch (err) {
      setError(err);
    }
  };
  useInterval(() => active && void poll(active.job_id), 1000, active !== null && !FINAL.has(active.status));

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!file) return;
    setError(null);
    setSent(0);
    const form = new FormData();
    form.append('use_smtp', String(smtp));
    form.append('dedupe', String(dedupe));
    form.append('file', file, file.name);
    try {
      const job = await upload<JobSubmitted>('/api/v1/jobs', form, setSent);
      setFile(null);
      jobs.reload();
      await poll(job.job_id);
    } catch (err) {
      setError(err);
    } finally {
      setSent(null);
    }
  };

  const cancel = async (id: string) => {
    setError(null);
    try {
      await api(`/api/v1/jobs/${encodeURIComponent(id)}`, { method: 'DELETE' });
      await poll(id);
      jobs.reload();
    } catch (err) {
      setError(err);
    }
  };

  // Deletes a finished job's addresses and results (the service's extension); its counts stay.
  const deleteData = async (id: string) => {
    setError(null);
    try {
      await api(`/api/v1/jobs/${encodeURIComponent(id)}/results`, { method: 'DELETE' });
      await poll(id);
    } catch (err) {
      setError(err);
    }
  };

  return (
    <>
      <Card title="Bulk verification">
        <form onSubmit={submit} className="stack">
          <DropZone label="Choose or drop a list" hint="A CSV file (the first column with addresses, or a column named email; its other columns come back with the results) or a text file with one address per line." accept=".csv,.txt,text/csv,text/plain" file={file} onFile={setFile} disabled={sent !== null} />
          <div className="row">
            <label className="check"><input type="checkbox" checked={dedupe} onChange={(e) => setDedupe(e.target.checked)} /> Remove duplicates first</label>
            <label className="check"><input type="checkbox" checked={smtp} onChange={(e) => setSmtp(e.target.checked)} /> Probe mailboxes over SMTP</label>
            <button type="submit" className="primary" disabled={!file || sent !== null}>Start job</button>
          </div>
          {sent !== null && <ProgressBar label="Uploading" pct={sent * 100} />}
        </form>
        <p className="muted small">The whole list is reserved from your quota when the job starts; cancelling refunds what was not verified.</p>
        <ErrorText error={error} />
      </Card>
      {active && (
        <Card title={`Job ${active.job_id}`} actions={<StatusPill status={active.status} />}>
          <div aria-live="polite">
            <ProgressBar label="Verified" pct={active.progress_pct} />
            <p>{formatNumber(active.processed)} of {formatNumber(active.total)} addresses: {formatNumber(active.valid)} valid, {formatNumber(active.invalid)} invalid, {formatNumber(active.risky)} risky, {formatNumber(active.unknown)} unknown.</p>
            {active.error && <p className="error">{active.error}</p>}
          </div>
          <div className="row">
            {!FINAL.has(active.status) && <button type="button" className="danger" onClick={() => void cancel(active.job_id)}>Cancel job</button>}
            {active.status === 'completed' && !active.results_deleted_at && (
              <>
                <a className="button primary" href={csvUrl(active.job_id, null, allColumns)} download={`${active.job_id}.csv`}>Download results (CSV)</a>
                {DOWNLOADS.map((d) => (
                  <a key={d.suffix} className="button" href={csvUrl(active.job_id, d.status, allColumns)} download={`${active.job_id}-${d.suffix}.csv`}>{d.label}</a>
                ))}
              </>
            )}
          </div>
          {active.status === 'completed' && !active.results_deleted_at && (
            <label className="check"><input type="checkbox" checked={allColumns} onChange={(e) => setAllColumns(e.target.checked)} /> Add every sub-check as a column (syntax, DNS, MX, SMTP, catch-all, disposable, role, free provider)</label>
          )}
          {FINAL.has(active.status) && !active.results_deleted_at && (
            <div className="row">
              <button type="button" className="danger" onClick={() => void deleteData(active.job_id)}>Delete addresses and results</button>
              <span className="muted small">The counts stay; the list and its results cannot be downloaded again.</span>
            </div>
          )}
          {active.results_deleted_at && <p className="muted">Addresses and results deleted {formatDate(active.results_deleted_at)}.</p>}
        </Card>
      )}
      <Card title="Recent jobs">
        <ErrorText error={jobs.error} />
        {jobs.data && jobs.data.jobs.length === 0 && <p className="muted">No jobs yet.</p>}
        {jobs.data && jobs.data.jobs.length > 0 && (
          <div className="table-wrap">
            <table className="cards">
              <thead><tr><th scope="col">Job</th><th scope="col">Status</th><th scope="col">Progress</th><th scope="col">Valid / invalid / risky / unknown</th><th scope="col">Created</th><th scope="col"><span className="sr-only">Actions</span></th></tr></thead>
              <tbody>
                {jobs.data.jobs.map((j) => (
                  <tr key={j.job_id}>
                    <td data-label="Job"><button type="button" className="linkish" onClick={() => void poll(j.job_id)}>{j.job_id}</button></td>
                    <td data-label="Status"><StatusPill status={j.status} /></td>
                    <td data-label="Progress">{formatNumber(j.processed)} / {formatNumber(j.total)}</td>
                    <td data-label="Valid / invalid / risky / unknown">{formatNumber(j.valid_count)} / {formatNumber(j.invalid_count)} / {formatNumber(j.risky_count)} / {formatNumber(j.unknown_count)}</td>
                    <td data-label="Created">{formatDate(j.created_at)}</td>
                    <td className="actions">{j.status === 'completed' && !j.results_deleted_at ? <a href={`/api/v1/jobs/${encodeURIComponent(j.job_id)}/results?format=csv`} download={`${j.job_id}.csv`}>CSV</a> : FINAL.has(j.status) ? (j.results_deleted_at ? <span className="muted small">data deleted</span> : null) : <button type="button" className="danger" onClick={() => void cancel(j.job_id)}>Cancel</button>}</td>
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
