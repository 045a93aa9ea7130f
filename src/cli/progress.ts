/**
 * A one-line progress report on stderr: redrawn in place on a terminal, a plain line every few
 * seconds otherwise (logs, CI; MEMGATE_PROGRESS_MS sets how many milliseconds apart). Nothing goes
 * to stdout, which stays free for results.
 */
export interface Progress {
  update(done: number, total?: number, note?: string): void;
  done(message?: string): void;
}

export function createProgress(
  label: string,
  stream: NodeJS.WriteStream = process.stderr,
  unit = 'items',
): Progress {
  const started = performance.now();
  const tty = Boolean(stream.isTTY);
  const every = tty ? 100 : Number(process.env.MEMGATE_PROGRESS_MS ?? 5000);
  let lastDraw = 0;
  let lastLine = '';
  const render = (done: number, total: number | undefined, note?: string): string => {
    const secs = (performance.now() - started) / 1000;
    const rate = secs > 0 ? done / secs : 0;
    const parts = [label];
    if (total && total > 0) {
      const ratio = Math.min(1, done / total);
      const width = 24;
      const filled = Math.round(ratio * width);
      parts.push(
        `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(ratio * 100).toFixed(0).padStart(3)}%`,
      );
      parts.push(`${done}/${total} ${unit}`);
      if (rate > 0 && done < total) parts.push(`ETA ${formatSeconds((total - done) / rate)}`);
    } else {
      parts.push(`${done} ${unit}`);
    }
    parts.push(`${rate.toFixed(0)}/s`);
    if (note) parts.push(note);
    return parts.join('  ');
  };
  return {
    update(done, total, note) {
      const now = performance.now();
      const finished = total !== undefined && done >= total;
      if (now - lastDraw < every && !finished) return;
      lastDraw = now;
      lastLine = render(done, total, note);
      stream.write(tty ? `\r\x1b[2K${lastLine}` : `${lastLine}\n`);
    },
    done(message) {
      if (tty && lastLine) stream.write('\n');
      if (message) stream.write(`${message}\n`);
    },
  };
}

export function formatSeconds(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 1 : 0)}s`;
  const m = Math.floor(seconds / 60);
  return `${m}m${String(Math.round(seconds % 60)).padStart(2, '0')}s`;
}
