// A node:test reporter (issue 44): one JSON line per test file (its path, seconds and counts)
// and one for the whole run, written to its destination file. scripts/test.mjs reads them
// after the run and prints the slowest files, so the next person sees where the time goes.
export default async function* fileTimes(source) {
  for await (const event of source) {
    if (event.type !== 'test:summary') continue;
    const { file, duration_ms: ms, counts } = event.data;
    yield `${JSON.stringify({ file: file ?? null, seconds: ms / 1000, passed: counts.passed, failed: counts.failed + counts.cancelled, skipped: counts.skipped + counts.todo })}\n`;
  }
}

/**
 * The table printed at the end of `npm test`: the `count` slowest files, then the totals as
 * one plain closing line ("N passed, N failed"), read from the reporter's lines.
 */
export function slowestFilesTable(lines, root, count = 15) {
  const rows = lines.filter(Boolean).map((l) => JSON.parse(l));
  const files = rows.filter((r) => r.file !== null).sort((a, b) => b.seconds - a.seconds);
  const total = rows.find((r) => r.file === null);
  if (!files.length || !total) return null;
  const name = (file) => (file.startsWith(`${root}/`) ? file.slice(root.length + 1) : file).replace(/\/test\/dist\//, '/test/').replace(/\/dist\//, '/src/').replace(/\.js$/, '.ts');
  const width = Math.max(...files.slice(0, count).map((f) => name(f.file).length));
  const summed = files.reduce((s, f) => s + f.seconds, 0);
  return [
    '',
    `The ${Math.min(count, files.length)} slowest of ${files.length} test files (seconds each file took; the run took ${total.seconds.toFixed(0)} s, the files ${summed.toFixed(0)} s together):`,
    ...files.slice(0, count).map((f) => `  ${f.seconds.toFixed(1).padStart(7)}  ${name(f.file).padEnd(width)}  ${f.passed} passed${f.failed ? `, ${f.failed} FAILED` : ''}`),
    '',
    `${total.passed} passed, ${total.failed} failed${total.skipped ? `, ${total.skipped} skipped` : ''}`,
    '',
  ].join('\n');
}
