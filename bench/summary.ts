/**
 * One table across several results files (S/L × PGlite/PostgreSQL): the one-client latencies,
 * the gateway overhead, ingest rates and resources side by side. `npm run bench -- --summary`
 * prints it from bench/results/*.json; the README's Performance section is written from it.
 */
import type { BenchResult } from './runner.js';
import { round } from './stats.js';

const ms = (v: number | null | undefined) => (v == null || !Number.isFinite(v) ? '–' : String(round(v)));
const int = (v: number | null | undefined) =>
  v == null || !Number.isFinite(v) ? '–' : Math.round(v).toLocaleString('en-US');

function label(r: BenchResult): string {
  return `${r.meta.size.name} ${r.meta.backend === 'pglite' ? 'PGlite' : 'PostgreSQL'}`;
}

export function renderSummary(results: BenchResult[]): string {
  const order = (r: BenchResult) =>
    `${r.meta.size.name === 'L' ? 1 : 0}${r.meta.backend === 'pglite' ? 0 : 1}`;
  const rs = [...results].sort((a, b) => order(a).localeCompare(order(b)));
  const head = (first: string) => [
    `| ${first} | ${rs.map(label).join(' | ')} |`,
    `| --- | ${rs.map(() => '---:').join(' | ')} |`,
  ];
  const out: string[] = [];

  const names: { name: string; title: string }[] = [];
  for (const r of rs) for (const f of r.reads) if (!names.some((n) => n.name === f.name)) names.push(f);
  out.push('One client, p50 / p95 ms (SQL statements per request):', '', ...head('operation'));
  for (const { name, title } of names) {
    const cells = rs.map((r) => {
      const f = r.reads.find((x) => x.name === name);
      const c = f?.concurrency.find((x) => x.concurrency === 1);
      return c ? `${ms(c.p50)} / ${ms(c.p95)} (${f!.statements?.median ?? '–'})` : '–';
    });
    out.push(`| ${title} | ${cells.join(' | ')} |`);
  }

  out.push('', '32 clients, requests/s (p50 ms):', '', ...head('operation'));
  for (const { name, title } of names) {
    const cells = rs.map((r) => {
      const c = r.reads.find((x) => x.name === name)?.concurrency.find((x) => x.concurrency === 32);
      return c ? `${int(c.rps)} (${ms(c.p50)})` : '–';
    });
    if (cells.some((c) => c !== '–')) out.push(`| ${title} | ${cells.join(' | ')} |`);
  }

  out.push(
    '',
    'Gateway overhead, end to end ÷ SQL replayed on the driver (÷ SQL in flight):',
    '',
    ...head('operation'),
  );
  for (const { name, title } of names) {
    const cells = rs.map((r) => {
      const o = r.reads.find((x) => x.name === name)?.overhead;
      if (!o) return '–';
      return `${round(o.ratio)}×${o.wallRatio != null ? ` (${round(o.wallRatio)}×)` : ''}`;
    });
    out.push(`| ${title} | ${cells.join(' | ')} |`);
  }

  if (rs.some((r) => r.reads.some((f) => f.floor))) {
    out.push(
      '',
      'memgate ÷ SQL floor (native PostgreSQL): p50 at one client (req/s at 32 clients):',
      '',
      ...head('operation'),
    );
    for (const { name, title } of names) {
      const cells = rs.map((r) => {
        const f = r.reads.find((x) => x.name === name)?.floor;
        if (!f) return '–';
        const x = (v: number | null) => (v === null ? '–' : `${round(v)}×`);
        return `${x(f.p50Ratio)} (${x(f.throughputRatio)})`;
      });
      out.push(`| ${title} | ${cells.join(' | ')} |`);
    }
  }

  const ingestNames: { name: string; title: string; unit: string }[] = [];
  for (const r of rs)
    for (const f of r.ingest) if (!ingestNames.some((n) => n.name === f.name)) ingestNames.push(f);
  out.push('', 'Ingest through GraphQL, batches of 500, one client (items/s):', '', ...head('mutation'));
  for (const { name, title, unit } of ingestNames) {
    const cells = rs.map((r) => {
      const f = r.ingest.find((x) => x.name === name);
      if (!f) return '–';
      return `${int(f.perSec)} ${unit}/s${f.derived ? ` (${int(f.derived.perSec)} ${f.derived.unit}/s)` : ''}`;
    });
    out.push(`| ${title} | ${cells.join(' | ')} |`);
  }

  out.push('', 'Vectors and resources:', '', ...head('figure'));
  const configured = (r: BenchResult) => r.hnsw.reduce((m, h) => Math.max(m, h.efSearch), 0);
  out.push(
    `| HNSW recall@10 at the configured ef_search (${rs
      .map(configured)
      .filter((v, i, a) => a.indexOf(v) === i)
      .join('/')}) | ${rs
      .map((r) => {
        const h = r.hnsw.find((x) => x.k === 10 && x.efSearch === configured(r));
        return h ? `${h.recall.toFixed(3)} (${ms(h.hnswMs.p50)} ms)` : '–';
      })
      .join(' | ')} |`,
    `| HNSW recall@10 at ef_search 40 | ${rs
      .map((r) => {
        const h = r.hnsw.find((x) => x.k === 10 && x.efSearch === 40);
        return h ? h.recall.toFixed(3) : '–';
      })
      .join(' | ')} |`,
    `| offline embedder, texts/s | ${rs.map((r) => int(r.embedding.textsPerSec)).join(' | ')} |`,
    `| bulk SQL load of the dataset, s (CPU s of this process) | ${rs
      .map((r) => {
        const cpu = r.load.phases.reduce((a, p) => a + (p.cpuMs ?? 0), 0);
        return `${(r.load.totalMs / 1000).toFixed(0)} (${(cpu / 1000).toFixed(0)})`;
      })
      .join(' | ')} |`,
    `| gateway peak RSS, MB | ${rs.map((r) => `${Math.round(r.resources.peakRssMB)}${r.meta.backend === 'pglite' ? ' (with the database)' : ''}`).join(' | ')} |`,
    `| database size at the end, MB | ${rs.map((r) => Math.round(r.resources.dbBytesEnd / 1048576)).join(' | ')} |`,
    `| whole run, min (load average at start) | ${rs.map((r) => `${(r.meta.durationMs / 60000).toFixed(1)} (${r.meta.machine.loadAvgStart[0]})`).join(' | ')} |`,
  );
  out.push('', `Commands: ${rs.map((r) => `\`${r.meta.command}\``).join(', ')}.`);
  return `${out.join('\n')}\n`;
}
