import { useEffect, useId, useRef, useState, type DragEvent } from 'react';
import { formatBytes } from './format.js';

/**
 * A file picker that also takes dropped files: a real `<input type=file>` under a label,
 * so it works with the keyboard and screen readers; dragging is an addition. One file
 * (`onFile`), or several at once (`multiple` with `onFiles`).
 */
export function DropZone({
  label,
  hint,
  accept,
  file = null,
  onFile,
  multiple = false,
  onFiles,
  disabled,
  testId = 'dropzone',
}: {
  label: string;
  hint: string;
  accept?: string;
  file?: File | null;
  onFile?: (f: File | null) => void;
  multiple?: boolean;
  onFiles?: (files: File[]) => void;
  disabled?: boolean;
  testId?: string;
}) {
  const id = useId();
  const input = useRef<HTMLInputElement>(null);
  const [over, setOver] = useState(false);
  // The caller let go of the file (a job was started with it): empty the picker too, or it
  // would still show the old name next to a disabled "Start job" (issue 30).
  useEffect(() => {
    if (!multiple && file === null && input.current) input.current.value = '';
  }, [file, multiple]);
  const take = (list: FileList | null) => {
    const files = Array.from(list ?? []);
    if (multiple) {
      if (files.length) onFiles?.(files);
      // The list is kept by the caller: the picker is emptied, so the same file can be added again.
      if (input.current) input.current.value = '';
      return;
    }
    onFile?.(files[0] ?? null);
  };
  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setOver(false);
    if (!e.dataTransfer.files.length || disabled) return;
    // The picker shows the dropped file too (one source of truth for what will be sent).
    if (!multiple && input.current) input.current.files = e.dataTransfer.files;
    take(e.dataTransfer.files);
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
      data-testid={testId}
    >
      <label htmlFor={id}>
        <span className="dz-title">{label}</span>
        <span className="muted">{file ? `${file.name} — ${formatBytes(file.size)}` : hint}</span>
      </label>
      <input id={id} ref={input} type="file" accept={accept} multiple={multiple} disabled={disabled} onChange={(e) => take(e.target.files)} />
    </div>
  );
}
