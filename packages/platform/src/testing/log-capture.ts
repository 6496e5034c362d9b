import { Writable } from 'node:stream';

/** A pino destination that keeps log lines in memory, so tests can assert what was logged. */
export class LogCapture extends Writable {
  readonly lines: Array<Record<string, unknown>> = [];

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line.trim()) this.lines.push(JSON.parse(line) as Record<string, unknown>);
    }
    done();
  }

  /** Every line as raw text, for "this must never appear" checks. */
  text(): string {
    return this.lines.map((l) => JSON.stringify(l)).join('\n');
  }
}
