/**
 * A one-line progress report on stderr: redrawn in place on a terminal, a plain line every few
 * seconds otherwise (logs, CI; MEMGATE_PROGRESS_MS sets how many milliseconds apart). Nothing goes
 * to stdout, which stays free for results. A job that ends before the first line is due prints
 * none: a progress line is for waiting, not a log of every small step.
 */
export interface Progress {
  update(done: number, total?: number, note?: string): void;
  done(message?: string): void;
}

/** How long a terminal waits before it shows a progress line at all. */
const TTY_FIRST_LINE_MS = 1000;

export function createProgress(
  label: string,
  stream: NodeJS.WriteStream = process.stderr,
  unit = 'items',
): Progress {
  const started = performance.now();
  const tty = Boolean(stream.isTTY);
  const every = tty ? 100 : Number(process.env.MEMGATE_PROGRESS_MS ?? 5000);
  const firstAfter = tty ? TTY_FIRST_LINE_MS : every;
  let lastDraw: number | null = null;
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
      parts.push(formatDoneOfTotal(done, total, unit));
      if (rate > 0 && done < total) parts.push(`ETA ${formatSeconds((total - done) / rate)}`);
    } else {
      parts.push(formatAmount(done, unit));
    }
    if (rate > 0) parts.push(formatRate(rate, unit));
    if (note) parts.push(note);
    return parts.join('  ');
  };
  return {
    update(done, total, note) {
      const now = performance.now();
      const finished = total !== undefined && done >= total;
      // The closing 100% line only completes a line already shown.
      const due = lastDraw === null ? now - started >= firstAfter : now - lastDraw >= every || finished;
      if (!due) return;
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

/** Bytes in decimal units: 512 B, 3.4 kB, 12 MB, 1.5 GB. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  // 999.7 kB would print as "1000 kB": move up a unit at what rounds to 1000.
  while (value >= 999.5 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  if (unit === 0) return `${Math.round(value)} B`;
  const shown = value < 10 ? value.toFixed(1) : value.toFixed(0);
  return `${shown} ${units[unit]}`;
}

/** `1.2 MB` for bytes, `340 records` for anything else (singular for one). */
export function formatAmount(n: number, unit: string): string {
  if (unit === 'bytes') return formatBytes(n);
  return `${n} ${n === 1 ? singular(unit) : unit}`;
}

function formatDoneOfTotal(done: number, total: number, unit: string): string {
  if (unit === 'bytes') return `${formatBytes(done)}/${formatBytes(total)}`;
  return `${done}/${total} ${unit}`;
}

/** `4.1 MB/s`, `560 lines/s`, `2.5 jobs/s`. */
export function formatRate(perSecond: number, unit: string): string {
  if (unit === 'bytes') return `${formatBytes(perSecond)}/s`;
  const shown = perSecond < 10 ? perSecond.toFixed(1) : perSecond.toFixed(0);
  return `${shown} ${unit}/s`;
}

function singular(unit: string): string {
  if (unit.endsWith('ies')) return `${unit.slice(0, -3)}y`;
  return unit.endsWith('s') ? unit.slice(0, -1) : unit;
}

export function formatSeconds(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 1 : 0)}s`;
  const m = Math.floor(seconds / 60);
  return `${m}m${String(Math.round(seconds % 60)).padStart(2, '0')}s`;
}
