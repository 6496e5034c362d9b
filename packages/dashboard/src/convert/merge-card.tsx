import { useState } from 'react';
import { api, upload } from '../shared/api.js';
import { Card, ErrorText, ProgressBar } from '../shared/components.js';
import { DropZone } from '../shared/drop-zone.js';
import { formatBytes } from '../shared/format.js';
import type { Conversion, Uploaded } from './types.js';

/** Most files one merge takes (the API's limit). */
const MAX_FILES = 50;

/**
 * Many files into one PDF (`POST /api/v1/merge`, extension): PDFs, documents, slides,
 * sheets, pictures, HTML — dropped or picked together, put in order, uploaded one by one,
 * then merged; the conversion it starts is shown by the page like any other.
 */
export function MergeCard({ onStarted }: { onStarted: (c: Conversion) => void }) {
  const [files, setFiles] = useState<File[]>([]);
  const [progress, setProgress] = useState<{ index: number; fraction: number } | null>(null);
  const [error, setError] = useState<unknown>(null);

  const add = (list: File[]) => {
    setError(null);
    setFiles((f) => [...f, ...list].slice(0, MAX_FILES));
  };
  const move = (i: number, by: -1 | 1) =>
    setFiles((f) => {
      const next = [...f];
      const [item] = next.splice(i, 1);
      next.splice(i + by, 0, item!);
      return next;
    });

  const merge = async () => {
    setError(null);
    try {
      const ids: string[] = [];
      for (const [index, f] of files.entries()) {
        setProgress({ index, fraction: 0 });
        const form = new FormData();
        form.append('file', f, f.name);
        const up = await upload<Uploaded>('/api/v1/upload', form, (fraction) => setProgress({ index, fraction }));
        ids.push(up.upload_id);
      }
      const c = await api<Conversion>('/api/v1/merge?wait=0', { method: 'POST', json: { upload_ids: ids } });
      setFiles([]);
      onStarted(c);
    } catch (err) {
      setError(err);
    } finally {
      setProgress(null);
    }
  };

  return (
    <Card title="Merge files into one PDF">
      <DropZone
        label="Choose or drop several files"
        hint={`PDFs, documents, slides, sheets, pictures, HTML — each is turned into PDF pages, in the order below (up to ${MAX_FILES}).`}
        multiple
        onFiles={add}
        disabled={progress !== null}
        testId="merge-dropzone"
      />
      {files.length > 0 && (
        <ol className="merge-list" aria-label="Files to merge, in order">
          {files.map((f, i) => (
            <li key={`${f.name}-${i}`} className="row">
              <span className="grow">{f.name} <span className="muted small">{formatBytes(f.size)}</span></span>
              <button type="button" onClick={() => move(i, -1)} disabled={i === 0 || progress !== null} aria-label={`Move ${f.name} up`}>↑</button>
              <button type="button" onClick={() => move(i, 1)} disabled={i === files.length - 1 || progress !== null} aria-label={`Move ${f.name} down`}>↓</button>
              <button type="button" className="danger" onClick={() => setFiles(files.filter((_, j) => j !== i))} disabled={progress !== null} aria-label={`Remove ${f.name}`}>Remove</button>
            </li>
          ))}
        </ol>
      )}
      {progress && <ProgressBar label={`Uploading ${progress.index + 1} of ${files.length}`} pct={((progress.index + progress.fraction) / files.length) * 100} />}
      <div className="row merge-actions">
        <button type="button" className="primary" disabled={files.length < 2 || progress !== null} onClick={() => void merge()}>Merge to PDF</button>
      </div>
      <ErrorText error={error} />
    </Card>
  );
}
