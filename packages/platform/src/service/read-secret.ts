import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';

/**
 * Reads one secret line from standard input: on a terminal after `prompt` (on stderr) with
 * the typing not echoed; when piped, the first line (`printf '%s\n' "$PW" | … --password-stdin`).
 * The trailing line break is dropped, nothing else.
 */
export async function readSecretFromStdin(prompt: string): Promise<string> {
  const tty = process.stdin.isTTY === true;
  if (tty) process.stderr.write(prompt);
  const muted = new Writable({ write: (_chunk, _enc, done) => done() });
  const rl = createInterface({ input: process.stdin, output: tty ? muted : undefined, terminal: tty });
  try {
    const line = await new Promise<string>((resolve, reject) => {
      let got = false;
      rl.once('line', (l) => {
        got = true;
        resolve(l);
      });
      rl.once('close', () => {
        if (!got) resolve('');
      });
      // Ctrl-C at the prompt (raw mode turns it into this event rather than a signal).
      rl.once('SIGINT', () => reject(new Error('cancelled')));
    });
    return line.replace(/\r$/, '');
  } finally {
    rl.close();
    if (tty) process.stderr.write('\n');
  }
}
