import { useId, useRef, useState, type DragEvent } from 'react';
import { formatBytes } from './format.js';

/**
 * A file picker that also takes a dropped file: a real `<input type=file>` under a label,
 * so it works with the keyboard and screen readers; dragging is an addition.
 */
export function DropZone({ label, hint, accept, file, onFile, disabled }: { label: string; hint: string; accept?: string; file: File | null; onFile: (f: File | null) => void; disabled?: boolean }) {
  const id = useId();
  const input = useRef<HTMLInputElement>(null);
  const [over, setOver] = useState(false);
  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setOver(false);
    const f = e.dataTransfer.files[0];
    if (!f || disabled) return;
    // The picker shows the dropped file too (one source of truth for what will be sent).
    if (input.current) input.current.files = e.dataTransfer.files;
    onFile(f);
  };
  return (
    <div
      className={`dropzone${over ? ' over' : ''}`}
      onDragOver={(e) => {
        e.preventDefault();
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={onDrop}
      data-testid="dropzone"
    >
      <label htmlFor={id}>
        <span className="dz-title">{label}</span>
        <span className="muted">{file ? `${file.name} — ${formatBytes(file.size)}` : hint}</span>
      </label>
      <input id={id} ref={input} type="file" accept={accept} disabled={disabled} onChange={(e) => onFile(e.target.files?.[0] ?? null)} />
    </div>
  );
}
