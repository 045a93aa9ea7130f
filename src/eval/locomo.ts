import { readFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { Readable } from 'node:stream';
import { conversationIdOf, locomoToObservations } from './locomo-jsonl.js';
import { LOCAL_PRINCIPAL } from '../auth/principal.js';
import { observationId } from '../domain/ids.js';
import { createLoaders } from '../kernel/loaders.js';
import type { SearchMode } from '../modules/retrieval/index.js';
import type { ChannelWeights } from '../modules/retrieval/index.js';
import { importJsonl } from '../cli/local-import.js';
import type { AppDeps } from '../kernel/request-scope.js';
import { SearchService } from '../modules/retrieval/index.js';
import { type ContextWindow, saveContextWindow } from '../kernel/store/context-index-store.js';
import {
  type Aggregate,
  type QuestionScore,
  RECALL_KS,
  aggregate,
  parseEvidence,
  percentile,
  scoreRanking,
} from './metrics.js';
import { openEvalApp } from './eval-app.js';
import { type ContextEvalStrategy, askThroughContext } from './locomo-context.js';

/**
 * The LoCoMo retrieval harness. Each conversation file is converted by
 * `scripts/locomo-to-jsonl.ts` and imported through the import service into its own namespace
 * (one observation per turn); then every question with evidence is asked through
 * `SearchService.search` — the code path of the GraphQL `search` field — once per mode, and
 * the evidence turns (the chunks of the observations whose externalId is the dia_id) are
 * looked for in the top 20.
 */

export const CATEGORY_NAMES: Readonly<Record<number, string>> = {
  1: 'multi-hop',
  2: 'temporal',
  3: 'open-domain',
  4: 'single-hop',
  5: 'adversarial',
};

export interface LocomoEvalOptions {
  files: string[];
  modes: SearchMode[];
  /** Where the offline embedder keeps its cache (built once). */
  dataDir: string;
  /** Native PostgreSQL instead of an in-memory PGlite. */
  databaseUrl?: string;
  /** Embedder spec; the harness is meant for the offline default. */
  embedder?: string;
  /** Weights and RRF k for HYBRID (defaults: the configured ones). */
  weights?: ChannelWeights | null;
  rrfK?: number | null;
  /** Extra HYBRID runs, one per vector weight, labelled `HYBRID@w`. */
  sweepVectorWeights?: number[];
  /** Only the first N questions of each file (quick runs). */
  limit?: number;
  /** Extra runs through context(strategy), HYBRID against AUTO, labelled `CONTEXT:<s>@<budget>`. */
  contextStrategies?: ContextEvalStrategy[];
  /** The namespaces' contextual-index window (default: the gateway's default). */
  contextWindow?: ContextWindow;
  /** Token budget of the context runs (default 2,000). */
  packBudget?: number;
  /** Every turn of a session at the session's time (default: one second apart). */
  equalTimestamps?: boolean;
  /**
   * How many of the files form the first half of a split (each fitted constant is checked on
   * both halves); default: half of them, rounded down.
   */
  firstHalf?: number;
  log?: (message: string) => void;
}

export interface RunReport {
  label: string;
  mode: SearchMode | `CONTEXT_${ContextEvalStrategy}`;
  weights: ChannelWeights | null;
  overall: Aggregate;
  byCategory: Record<string, Aggregate>;
  /** The two halves of the files (`26+30`, `41+42+43`): a constant must not help one and hurt the other. */
  byHalf: Record<string, Aggregate>;
  latencyMs: { p50: number; p95: number };
}

export interface LocomoEvalReport {
  files: string[];
  embedder: string;
  backend: string;
  conversations: { file: string; namespace: string; turns: number; questions: number; importMs: number }[];
  runs: RunReport[];
  /** Evidence ids that name no turn of their conversation (they count as misses). */
  unknownEvidence: number;
  /** Token budget of the context runs. */
  packBudget: number;
  /** The contextual-index window the namespaces were written with (null = the default). */
  contextWindow: ContextWindow | null;
  /** Whether a session's turns shared one timestamp. */
  equalTimestamps: boolean;
  createdAt: string;
}

interface Question {
  namespace: string;
  /** The half of the split its conversation belongs to. */
  half: string;
  text: string;
  category: number;
  evidence: string[];
  /** The day after the conversation's last turn: the reference time of context runs. */
  asOf: Date;
}

interface RunSpec {
  label: string;
  mode: SearchMode;
  weights: ChannelWeights | null;
}

/** The questions of one conversation file with evidence (at most `limit`), and evidence ids naming no turn. */
function questionsOf(
  raw: unknown,
  where: Pick<Question, 'namespace' | 'half' | 'asOf'>,
  turns: ReadonlySet<string>,
  limit: number | undefined,
): { questions: Question[]; unknownEvidence: number } {
  const questions: Question[] = [];
  let unknownEvidence = 0;
  for (const item of (raw as { qa?: unknown[] }).qa ?? []) {
    const q = item as { question?: unknown; category?: unknown; evidence?: unknown };
    const evidence = parseEvidence(q.evidence);
    if (typeof q.question !== 'string' || evidence.length === 0) continue;
    if (limit !== undefined && questions.length >= limit) break;
    unknownEvidence += evidence.filter((e) => !turns.has(e)).length;
    questions.push({ ...where, text: q.question, category: Number(q.category), evidence });
  }
  return { questions, unknownEvidence };
}

export async function runLocomoEval(options: LocomoEvalOptions): Promise<LocomoEvalReport> {
  const log = options.log ?? (() => {});
  const app = await openEvalApp({ ...options, log });
  const { db, embedder } = app.deps;
  try {
    const questions: Question[] = [];
    const diaOf = new Map<string, string>(); // observation id → dia id
    const conversations: LocomoEvalReport['conversations'] = [];
    let unknownEvidence = 0;
    const halfOf = splitHalves(options.files, options.firstHalf);
    for (const file of options.files) {
      const raw: unknown = JSON.parse(readFileSync(file, 'utf8'));
      const conversation = conversationIdOf(raw, file);
      const namespace = `locomo-${conversation}`.replace(/[^A-Za-z0-9._:-]/g, '-').slice(0, 128);
      const observations = locomoToObservations(raw, conversation, options.equalTimestamps ? 0 : 1000);
      const turns = new Set<string>();
      for (const o of observations) {
        turns.add(o.source.externalId);
        diaOf.set(
          observationId(namespace, o.source, { kind: o.kind, occurredAt: o.occurredAt }),
          o.source.externalId,
        );
      }
      if (options.contextWindow) await saveContextWindow(db, namespace, options.contextWindow);
      const lines = Readable.from(observations.map((o) => `${JSON.stringify(o)}\n`));
      const summary = await importJsonl(app.deps, LOCAL_PRINCIPAL, lines, { namespace });
      if (summary.rejected > 0)
        throw new Error(`${file}: ${summary.rejected} turns rejected: ${summary.reasons.join('; ')}`);
      const lastTurn = Math.max(...observations.map((o) => new Date(o.occurredAt).getTime()));
      const asOf = new Date((Number.isFinite(lastTurn) ? lastTurn : Date.now()) + 86_400_000);
      const asked = questionsOf(raw, { namespace, half: halfOf.get(file)!, asOf }, turns, options.limit);
      questions.push(...asked.questions);
      unknownEvidence += asked.unknownEvidence;
      conversations.push({
        file: dataFileName(file),
        namespace,
        turns: observations.length,
        questions: asked.questions.length,
        importMs: Math.round(summary.ms),
      });
      log(
        `${file}: ${observations.length} turns imported into ${namespace} in ${Math.round(summary.ms)} ms; ${asked.questions.length} questions`,
      );
    }

    const specs: RunSpec[] = options.modes.map((mode) => ({
      label: mode,
      mode,
      weights: mode === 'HYBRID' ? (options.weights ?? null) : null,
    }));
    for (const w of options.sweepVectorWeights ?? []) {
      specs.push({
        label: `HYBRID@${w}`,
        mode: 'HYBRID',
        weights: { ...options.weights, vector: w },
      });
    }
    const runs: RunReport[] = [];
    for (const spec of specs) {
      runs.push(await evaluate(app.deps, spec, questions, diaOf, options.rrfK ?? null));
      const last = runs[runs.length - 1]!;
      log(`${spec.label}: R@10 ${last.overall.recall[10].toFixed(3)}, MRR ${last.overall.mrr.toFixed(3)}`);
    }
    const packBudget = options.packBudget ?? 2000;
    for (const strategy of options.contextStrategies ?? []) {
      const last = await evaluateThroughContext(app.deps, strategy, questions, diaOf, packBudget);
      runs.push(last);
      log(`${last.label}: R@10 ${last.overall.recall[10].toFixed(3)}, MRR ${last.overall.mrr.toFixed(3)}`);
    }
    return {
      // Folder and file name only: a report names its data, not the machine it ran on.
      files: options.files.map(dataFileName),
      embedder: embedder.model,
      backend: db.backend,
      conversations,
      runs,
      unknownEvidence,
      packBudget,
      contextWindow: options.contextWindow ?? null,
      equalTimestamps: options.equalTimestamps ?? false,
      createdAt: new Date().toISOString(),
    };
  } finally {
    await app.close();
  }
}

async function evaluate(
  deps: AppDeps,
  spec: RunSpec,
  questions: Question[],
  diaOf: Map<string, string>,
  rrfK: number | null,
): Promise<RunReport> {
  const k = Math.max(...RECALL_KS);
  const scores: ScoredQuestion[] = [];
  const latencies: number[] = [];
  for (const q of questions) {
    // A fresh request scope per question, as a GraphQL request would get.
    const service = new SearchService({
      deps,
      db: deps.db,
      principal: LOCAL_PRINCIPAL,
      loaders: createLoaders(deps.db, LOCAL_PRINCIPAL.scopes),
    });
    const started = performance.now();
    const result = await service.search({
      namespaces: [q.namespace],
      query: q.text,
      k,
      mode: spec.mode,
      weights: spec.weights,
      rrfK,
    });
    latencies.push(performance.now() - started);
    const ranking = result.hits.map(
      (h) => diaOf.get(h.chunk.observationId ?? '') ?? `chunk:${h.chunk.chunkId}`,
    );
    scores.push({ category: q.category, half: q.half, score: scoreRanking(ranking, q.evidence) });
  }
  return {
    label: spec.label,
    mode: spec.mode,
    weights: spec.weights,
    ...slices(scores),
    latencyMs: { p50: round(percentile(latencies, 50)), p95: round(percentile(latencies, 95)) },
  };
}

async function evaluateThroughContext(
  deps: AppDeps,
  strategy: ContextEvalStrategy,
  questions: Question[],
  diaOf: Map<string, string>,
  budgetTokens: number,
): Promise<RunReport> {
  const k = Math.max(...RECALL_KS);
  const scores: ScoredQuestion[] = [];
  const latencies: number[] = [];
  for (const q of questions) {
    const started = performance.now();
    const score = await askThroughContext(deps, strategy, q, diaOf, k, budgetTokens);
    scores.push({ category: q.category, half: q.half, score });
    latencies.push(performance.now() - started);
  }
  return {
    label: `CONTEXT:${strategy}@${budgetTokens}`,
    mode: `CONTEXT_${strategy}`,
    weights: null,
    ...slices(scores),
    latencyMs: { p50: round(percentile(latencies, 50)), p95: round(percentile(latencies, 95)) },
  };
}

interface ScoredQuestion {
  category: number;
  half: string;
  score: QuestionScore;
}

function slices(scores: ScoredQuestion[]): Pick<RunReport, 'overall' | 'byCategory' | 'byHalf'> {
  const byCategory: Record<string, Aggregate> = {};
  for (const category of [...new Set(scores.map((s) => s.category))].sort((a, b) => a - b)) {
    byCategory[CATEGORY_NAMES[category] ?? String(category)] = aggregate(
      scores.filter((s) => s.category === category).map((s) => s.score),
    );
  }
  const byHalf: Record<string, Aggregate> = {};
  for (const half of new Set(scores.map((s) => s.half))) {
    byHalf[half] = aggregate(scores.filter((s) => s.half === half).map((s) => s.score));
  }
  return { overall: aggregate(scores.map((s) => s.score)), byCategory, byHalf };
}

/** File → the name of its half (`half 26+30`): the first `firstHalf` files, then the rest. */
function splitHalves(files: string[], firstHalf: number | undefined): Map<string, string> {
  const cut = Math.min(files.length, Math.max(0, firstHalf ?? Math.floor(files.length / 2)));
  const name = (group: string[]) => `half ${group.map((f) => basename(f).replace(/\.json$/i, '')).join('+')}`;
  const first = name(files.slice(0, cut));
  const second = name(files.slice(cut));
  return new Map(files.map((f, i) => [f, i < cut ? first : second]));
}

/** The report as a fixed-width table: one block per run, overall first, then per category. */
export function formatReport(report: LocomoEvalReport): string {
  const header = [
    'run',
    'slice',
    'questions',
    'R@5',
    'R@10',
    'R@20',
    'MRR',
    'cov any',
    'cov all',
    'p50 ms',
    'p95 ms',
  ];
  const rows: string[][] = [];
  for (const run of report.runs) {
    const line = (slice: string, a: Aggregate, latency: boolean) => [
      run.label,
      slice,
      String(a.questions),
      a.recall[5].toFixed(3),
      a.recall[10].toFixed(3),
      a.recall[20].toFixed(3),
      a.mrr.toFixed(3),
      a.coverage.any.toFixed(3),
      a.coverage.all.toFixed(3),
      latency ? run.latencyMs.p50.toFixed(1) : '',
      latency ? run.latencyMs.p95.toFixed(1) : '',
    ];
    rows.push(line('overall', run.overall, true));
    for (const [name, a] of Object.entries(run.byCategory)) rows.push(line(name, a, false));
    for (const [name, a] of Object.entries(run.byHalf)) rows.push(line(name, a, false));
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (cells: string[]) =>
    cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const title =
    `LoCoMo retrieval (${report.conversations.length} conversations, ` +
    `${report.conversations.reduce((a, c) => a + c.questions, 0)} questions with evidence; ` +
    `embedder ${report.embedder}; ${report.backend}; packs of ${report.packBudget} tokens)\n` +
    'cov any / all: questions with some / all evidence in the first 10 hits (search) or in the pack (CONTEXT)';
  const lines = [title, fmt(header), widths.map((w) => '-'.repeat(w)).join('  ')];
  let previous = '';
  for (const r of rows) {
    if (previous && r[0] !== previous) lines.push('');
    previous = r[0]!;
    lines.push(fmt(r));
  }
  return `${lines.join('\n')}\n`;
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}

/** A data file by its folder and name only: reports never carry where the data was read from. */
function dataFileName(file: string): string {
  return `${basename(dirname(file))}/${basename(file)}`;
}
