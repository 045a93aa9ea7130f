/** The run's figures as Markdown (stdout and bench/results/*.md) and JSON (bench/results/*.json). */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchResult } from './runner.js';
import { round } from './stats.js';

const ms = (v: number | null | undefined) => (v == null || !Number.isFinite(v) ? '–' : String(round(v)));
const int = (v: number) => Math.round(v).toLocaleString('en-US');
const signed = (v: number) => (v >= 0 ? `+${v}` : String(v));
const mb = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MB`;

function table(header: string[], rows: (string | number)[][]): string {
  const lines = [
    `| ${header.join(' | ')} |`,
    `| ${header.map((_, i) => (i === 0 ? '---' : '---:')).join(' | ')} |`,
  ];
  for (const r of rows) lines.push(`| ${r.join(' | ')} |`);
  return lines.join('\n');
}

export function renderMarkdown(r: BenchResult): string {
  const m = r.meta;
  const out: string[] = [];
  out.push(`## memgate benchmark — size ${m.size.name}, ${m.backend}${m.quick ? ' (quick)' : ''}`);
  out.push('');
  out.push(
    `\`${m.command}\` · ${m.date.slice(0, 16).replace('T', ' ')} UTC · commit ${m.commit.slice(0, 10)}${m.dirty ? ' (+ uncommitted changes)' : ''} · ` +
      `${m.machine.cpu}, ${m.machine.cores} cores, ${m.machine.memoryGB} GB, Node ${m.machine.node} · ` +
      `PostgreSQL ${m.versions.postgres}${m.backend === 'pglite' ? ` (PGlite ${m.versions.pglite})` : ''}, pgvector ${m.versions.pgvector} · ` +
      `load average ${m.machine.loadAvgStart[0]} → ${m.machine.loadAvgEnd[0]} · ${(m.durationMs / 60000).toFixed(1)} min`,
  );
  out.push('');
  out.push(
    `Dataset (seed ${m.seed}): ${int(m.size.entities)} entities (${int(m.size.documents)} documents, ${int(m.size.episodes)} episodes), ` +
      `${int(m.size.facts)} facts (power law; the biggest hub has ${int(m.size.hubDegree)}), ${int(m.size.chunks)} chunks (${int(m.size.observations)} of them observations), ` +
      `embedded with ${r.embedding.model} (${r.embedding.dimensions}-d). Bulk SQL load ${(r.load.totalMs / 1000).toFixed(1)} s ` +
      `(${topPhases(r)}). Latencies in ms; each figure is the median of ${m.runs} run(s).` +
      (Object.keys(m.gatewayEnv).length
        ? ` Gateway settings changed from the defaults: ${Object.entries(m.gatewayEnv)
            .map(([k, v]) => `${k}=${v}`)
            .join(', ')} (the exploration query nests deeper than the default limit).`
        : ''),
  );

  if (r.reads.length) {
    out.push('', '### Reads over HTTP (loopback)', '');
    const rows: (string | number)[][] = [];
    for (const f of r.reads) {
      for (const c of f.concurrency) {
        rows.push([
          c === f.concurrency[0] ? f.title : '',
          c.concurrency,
          int(c.requests),
          ms(c.rps),
          ms(c.p50),
          ms(c.p95),
          ms(c.p99),
          ms(c.cpuMsPerRequest),
          c === f.concurrency[0] && f.statements ? `${f.statements.median} (max ${f.statements.max})` : '',
          c.errors || '',
        ]);
      }
    }
    out.push(
      table(
        [
          'operation',
          'clients',
          'requests',
          'req/s',
          'p50 ms',
          'p95 ms',
          'p99 ms',
          'gateway CPU ms/req',
          'SQL stmts/req',
          'errors',
        ],
        rows,
      ),
    );

    out.push(...renderFloor(r));
    out.push('', '### Gateway overhead (one client, the captured requests)', '');
    out.push(
      "Overhead = end-to-end latency ÷ the same request's SQL statements replayed one after another on the driver " +
        '(no GraphQL, no services), per captured request (every distinct request of the latency runs, timed end ' +
        'to end while captured, replayed after one warm-up pass; on native PostgreSQL the SQL floor above replays ' +
        'the same set); medians over the set. ' +
        '"SQL in flight" is the wall time during which the request had a statement running, measured in the ' +
        'gateway: on PostgreSQL channels run concurrently, so it can be far below the replayed sum and the first ' +
        'ratio can fall under 1×.',
      '',
    );
    out.push(
      table(
        [
          'operation',
          'end to end ms',
          'SQL replayed ms',
          'overhead ×',
          'SQL in flight ms',
          'e2e ÷ in flight',
          'statements',
          'slowest statements (replayed)',
        ],
        r.reads
          .filter((f) => f.overhead)
          .map((f) => [
            f.title,
            ms(f.overhead!.e2eMs),
            ms(f.overhead!.sqlMs),
            `${round(f.overhead!.ratio)}×`,
            ms(f.overhead!.sqlWallMs),
            f.overhead!.wallRatio != null ? `${round(f.overhead!.wallRatio)}×` : '–',
            f.overhead!.statements,
            f.overhead!.slowest.map((s) => `${s.name} ${ms(s.ms)}`).join(', ') +
              (f.overhead!.replayErrors ? ` (${f.overhead!.replayErrors} replayed statements failed)` : ''),
          ]),
      ),
    );
  }

  if (r.observability?.length) {
    out.push(
      '',
      '### Metrics and tracing: off, on as shipped, every trace sampled (one client, rotating rounds)',
      '',
    );
    out.push(
      'On = metrics on (the default) and OpenTelemetry spans exported over OTLP/HTTP to a local sink at the ' +
        "default sampler's ratio; every trace = the same with OTEL_TRACES_SAMPLER=always_on. Off = no metrics, " +
        'no tracer, no context manager. Each figure is the median over rounds of the same requests (reads) or ' +
        "same-shaped batches (writes) on the same gateway process; CPU is the gateway process's, per request or " +
        'per written item; "paired by round" is the median of each round\'s own on ÷ off (the sides of a round run ' +
        'back to back); "best" compares the least-CPU round of each side (other load only ever adds time).',
      '',
    );
    out.push(
      table(
        [
          'operation',
          'rounds × requests',
          'p50 off ms',
          'p50 on ms',
          'p50 +%',
          'CPU off ms',
          'CPU on ms',
          'CPU +%',
          'paired by round CPU +%',
          'best-round CPU +%',
          'every trace: CPU ms',
          'CPU +%',
        ],
        r.observability.map((f) => [
          f.title,
          `${f.rounds} × ${f.requestsPerRound}`,
          ms(f.off.p50),
          ms(f.on.p50),
          `${f.p50OverheadPct}%`,
          `${ms(f.off.cpuMsPerRequest)}${f.unit && f.unit !== 'request' ? ` per ${f.unit}` : ''}`,
          ms(f.on.cpuMsPerRequest),
          `${f.cpuOverheadPct}%`,
          f.pairedCpuOverheadPct !== undefined ? `${f.pairedCpuOverheadPct}%` : '–',
          f.bestCpuOverheadPct !== undefined ? `${f.bestCpuOverheadPct}%` : '–',
          f.full ? ms(f.full.cpuMsPerRequest) : '–',
          f.fullSampling ? `${f.fullSampling.cpuOverheadPct}%` : '–',
        ]),
      ),
    );
  }

  if (r.ingest.length) {
    out.push('', '### Ingest through GraphQL mutations (one client, sequential batches)', '');
    const compared = r.ingest.some((f) => f.baseline);
    const databaseCpu = r.ingest.some((f) => f.databaseCpuMsPerItem !== undefined);
    out.push(
      table(
        [
          'mutation',
          'batches × size',
          'items/s',
          'median batch items/s',
          'batch p50 ms',
          'batch p95 ms',
          'gateway CPU ms/item',
          ...(databaseCpu ? ['database CPU ms/item'] : []),
          'SQL stmts/batch',
          '÷ hand-written floor',
          ...(compared ? ['÷ baseline (paired by round)', 'CPU ÷ baseline'] : []),
          'rejected',
        ],
        r.ingest.map((f) => [
          f.title,
          `${f.batches} × ${f.batchSize} ${f.unit}`,
          `${int(f.perSec)} ${f.unit}/s${f.derived ? ` (${int(f.derived.perSec)} ${f.derived.unit}/s)` : ''}`,
          int(f.perSecMedianBatch),
          ms(f.batchMs.p50),
          ms(f.batchMs.p95),
          ms(f.cpuMsPerItem),
          ...(databaseCpu ? [ms(f.databaseCpuMsPerItem)] : []),
          `${f.statementsPerBatch ?? '–'}${f.baseline?.extraStatements != null ? ` (${signed(f.baseline.extraStatements)})` : ''}`,
          f.floor ? `${f.floor.ratio.toFixed(2)}× (floor ${int(f.floor.perSec)}/s)` : '–',
          ...(compared
            ? [
                f.baseline ? `${f.baseline.ratio.toFixed(3)}× (${f.baseline.pairedRatio.toFixed(3)}×)` : '–',
                f.baseline ? `${f.baseline.cpuRatio.toFixed(3)}×` : '–',
              ]
            : []),
          f.rejected ? `${f.rejected}: ${f.firstRejection ?? ''}` : 0,
        ]),
      ),
    );
    const notes = r.ingest.filter((f) => f.note || f.baseline || f.drained);
    if (notes.length) out.push('');
    if (compared)
      out.push(
        "÷ baseline: items/s ÷ the baseline scenario's (in brackets the median over rounds of the two batches' ratio); " +
          `CPU ÷ baseline: CPU time per item (the gateway process's${databaseCpu ? " plus the database backends'" : ', database included'}) ÷ the baseline's, ` +
          'a figure other processes competing for the cores move far less than the rate.',
        '',
      );
    for (const f of notes) {
      const parts: string[] = [];
      if (f.baseline)
        parts.push(
          `measured in alternating rounds with ${f.baseline.name} (${int(f.baseline.perSec)} ${f.unit}/s), after one untimed warm-up batch each`,
        );
      if (f.note) parts.push(f.note);
      if (f.drained)
        parts.push(
          `between the timed batches the worker drained their ${int(f.drained.count)} ${f.drained.unit}, p50 ${(f.drained.batchMs.p50 / 1000).toFixed(1)} s a batch ` +
            `(${int(f.drained.perSec)} ${f.drained.unit}/s; not in items/s)`,
        );
      out.push(`- ${f.title}: ${parts.join('; ')}.`);
    }
    if (m.modelGatewayEnv)
      out.push(
        `- Model-configured gateway (same process and database): ${Object.entries(m.modelGatewayEnv)
          .map(([k, v]) => `${k}=${v}`)
          .join(', ')} (a local stand-in that answers at once).`,
      );
    out.push(...postingsUpkeepTable(r.ingest));
  }

  out.push(
    '',
    '### Bulk load (SQL, not GraphQL; PGlite runs in-process, so its CPU time is the work itself)',
    '',
  );
  const shown = r.load.phases.filter((p) => p.ms >= r.load.totalMs * 0.01);
  out.push(
    table(
      ['phase', 'rows', 'wall s', 'CPU s'],
      [
        ...shown.map((p) => [
          p.name,
          p.rows != null ? int(p.rows) : '',
          (p.ms / 1000).toFixed(1),
          p.cpuMs != null ? (p.cpuMs / 1000).toFixed(1) : '',
        ]),
        ['total', '', (r.load.totalMs / 1000).toFixed(1), ''],
      ],
    ),
  );

  out.push('', '### Vectors', '');
  out.push(
    table(
      ['figure', 'value'],
      [
        [`offline embedder throughput`, `${int(r.embedding.textsPerSec)} texts/s`],
        ...r.hnsw.map((h) => [
          `HNSW recall@${h.k} vs exact, ef_search ${h.efSearch} (${h.queries} queries)`,
          `${h.recall.toFixed(3)} · HNSW p50 ${ms(h.hnswMs.p50)} ms / exact p50 ${ms(h.exactMs.p50)} ms${h.indexUsed ? '' : ' (index NOT used)'}`,
        ]),
      ],
    ),
  );

  const res = r.resources;
  out.push('', '### Resources', '');
  out.push(
    table(
      ['figure', 'value'],
      [
        [
          'gateway start (process, migrations check, embedder)',
          `${(res.gatewayStartMs / 1000).toFixed(1)} s`,
        ],
        [
          `gateway RSS at start → end (peak)${m.backend === 'pglite' ? ', database included' : ''}`,
          `${res.rssStartMB} → ${res.rssEndMB} MB (peak ${res.peakRssMB} MB)`,
        ],
        ['database size after load → at end', `${mb(res.dbBytesAfterLoad)} → ${mb(res.dbBytesEnd)}`],
        ...(res.dataDirBytesEnd != null ? [['PGlite data directory at end', mb(res.dataDirBytesEnd)]] : []),
      ],
    ),
  );

  if (r.skipped.length) {
    out.push('', '### Not measured', '');
    for (const s of r.skipped) out.push(`- \`${s.name}\`: ${s.reason}`);
  }
  return `${out.join('\n')}\n`;
}

/** memgate ÷ SQL floor: the reads' latency and throughput against their own statements replayed. */
function renderFloor(r: BenchResult): string[] {
  const out = ['', '### memgate ÷ SQL floor', ''];
  const floors = r.reads.filter((f) => f.floor);
  if (r.meta.backend !== 'postgres' || floors.length === 0) {
    out.push(
      r.meta.backend === 'postgres'
        ? 'Not measured in this run.'
        : 'Not measured on PGlite: the SQL floor is measured on native PostgreSQL only (`--backend postgres`).',
    );
    return out;
  }
  const x = (v: number | null) => (v === null ? '–' : `${round(v)}×`);
  out.push(
    "SQL floor = each request's own SQL statements, captured from the gateway while it served the distinct " +
      "requests of this run's latency runs, replayed on the gateway's driver (`openPostgres`: the same pool, " +
      "prepared statements and generic-plan connections) with no GraphQL and no services. A request's " +
      'statements are replayed one after another in the order the gateway issued them, also those that ran ' +
      'concurrently in the gateway. After one warm-up pass over the set: p50 = the median over the requests of ' +
      'the sum of their statement times, one at a time; req/s = that many workers replaying whole requests ' +
      "round robin over the set, each run as long as memgate's run at that concurrency (median over runs). " +
      'Ratios are memgate ÷ floor: above 1× for latency and below 1× for req/s is what the gateway costs.',
    '',
  );
  out.push(
    table(
      [
        'operation',
        'p50 1 client: memgate ms',
        'floor ms',
        'ratio',
        'req/s: clients',
        'memgate',
        'floor',
        'ratio',
        'statements/request',
        'requests',
      ],
      floors.map((f) => {
        const fl = f.floor!;
        return [
          f.title,
          ms(fl.memgateP50),
          ms(fl.p50),
          x(fl.p50Ratio),
          fl.concurrency ?? '–',
          fl.memgateRps == null ? '–' : int(fl.memgateRps),
          fl.rps == null ? '–' : int(fl.rps),
          x(fl.throughputRatio),
          `${round(fl.statementsPerRequest)} (max ${fl.statementsMax})`,
          fl.requests + (fl.replayErrors ? ` (${fl.replayErrors} replayed statements failed)` : ''),
        ];
      }),
    ),
  );
  return out;
}

function topPhases(r: BenchResult): string {
  return [...r.load.phases]
    .sort((a, b) => b.ms - a.ms)
    .slice(0, 4)
    .map((p) => `${p.name} ${(p.ms / 1000).toFixed(1)} s`)
    .join(', ');
}

/** Writes `<name>.json` and `<name>.md` atomically; returns their paths. */
export function writeResults(r: BenchResult, dir: string): { json: string; md: string } {
  mkdirSync(dir, { recursive: true });
  const run = r.meta.quick ? `quick-${r.meta.backend}` : `${r.meta.size.name}-${r.meta.backend}`;
  const name = r.meta.label ? `${r.meta.label}-${run}` : run;
  const json = join(dir, `${name}.json`);
  const md = join(dir, `${name}.md`);
  writeAtomic(json, `${JSON.stringify(r, null, 2)}\n`);
  writeAtomic(md, renderMarkdown(r));
  return { json, md };
}

function writeAtomic(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

/** What the BM25 postings add to a chunk insert, for the ingest figures that measured it. */
function postingsUpkeepTable(ingest: BenchResult['ingest']): string[] {
  const measured = ingest.filter((f) => f.postingsUpkeep && f.postingsMsPerChunk !== undefined);
  if (measured.length === 0) return [];
  return [
    '',
    "Postings upkeep: each timed batch's chunks, staged once, inserted into a namespace of their own with and " +
      'without the postings CTEs, each in a transaction rolled back (vectors left out: the same HNSW work on both ' +
      'sides); median of 3 rounds per batch, summed over the batches.',
    '',
    table(
      ['mutation', 'chunks', 'insert with postings ms', 'insert without ms', 'postings ms/chunk'],
      measured.map((f) => [
        f.title,
        int(f.postingsUpkeep!.chunks),
        ms(f.postingsUpkeep!.withMs),
        ms(f.postingsUpkeep!.withoutMs),
        f.postingsMsPerChunk!.toFixed(3),
      ]),
    ),
  ];
}
