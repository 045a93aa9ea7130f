import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { LOCAL_PRINCIPAL } from '../auth/principal.js';
import { createLoaders } from '../kernel/loaders.js';
import type { SearchMode } from '../modules/retrieval/index.js';
import { DocumentService } from '../modules/documents/index.js';
import { ObservationService } from '../modules/observations/index.js';
import type { AppDeps, RequestScope } from '../kernel/request-scope.js';
import { SearchService } from '../modules/retrieval/index.js';
import { TextSearchService } from '../modules/text-search/index.js';
import { type Aggregate, aggregate, scoreRanking } from './metrics.js';
import { openEvalApp } from './eval-app.js';

/**
 * The language harness: small evaluation sets written for the project (documents, chat
 * observations and questions in natural inflected language with their expected evidence).
 * Each set is written into one namespace per text-search configuration asked for, and all
 * sets together into one `auto` namespace; every question goes through `SearchService.search`
 * and is scored on the set's own evidence ids (document keys, observation ids).
 */

const languageSetSchema = z.object({
  language: z.string().min(2),
  description: z.string().optional(),
  documents: z.array(z.object({ key: z.string(), title: z.string(), content: z.string() })),
  observations: z.array(
    z.object({ id: z.string(), occurredAt: z.string(), actor: z.string().optional(), content: z.string() }),
  ),
  questions: z.array(z.object({ question: z.string(), evidence: z.array(z.string()).min(1) })),
});
export type LanguageSet = z.infer<typeof languageSetSchema>;

export function readLanguageSet(file: string): LanguageSet {
  return languageSetSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
}

export interface LanguageEvalOptions {
  files: string[];
  modes: SearchMode[];
  /** One namespace per set and configuration (e.g. russian, english, auto). */
  textSearch: string[];
  /** Also write every set into one `auto` namespace and score each language there. */
  mixed: boolean;
  dataDir: string;
  databaseUrl?: string;
  embedder?: string;
  log?: (message: string) => void;
}

export interface LanguageRun {
  namespace: string;
  textSearch: string;
  /** The sets written into the namespace. */
  contains: string[];
  language: string;
  mode: SearchMode;
  overall: Aggregate;
  /** Questions whose evidence is not all in the first 10, with the ids ranked first. */
  misses: { question: string; evidence: string[]; top: string[] }[];
}

export interface LanguageEvalReport {
  files: string[];
  embedder: string;
  backend: string;
  runs: LanguageRun[];
  createdAt: string;
}

export async function runLanguageEval(options: LanguageEvalOptions): Promise<LanguageEvalReport> {
  const log = options.log ?? (() => {});
  const app = await openEvalApp({ ...options, log });
  const { db, embedder } = app.deps;
  try {
    const sets = options.files.map(readLanguageSet);
    const layouts: { namespace: string; textSearch: string; sets: LanguageSet[] }[] = [];
    for (const set of sets) {
      for (const ts of options.textSearch) {
        layouts.push({ namespace: `eval-${set.language}-${ts}`, textSearch: ts, sets: [set] });
      }
    }
    if (options.mixed && sets.length > 1) {
      const name = sets.map((s) => s.language).join('-');
      layouts.push({ namespace: `eval-${name}-auto`, textSearch: 'auto', sets });
    }
    const runs: LanguageRun[] = [];
    for (const layout of layouts) {
      const started = performance.now();
      const ids = await writeSets(app.deps, layout.namespace, layout.textSearch, layout.sets);
      log(`${layout.namespace}: written in ${Math.round(performance.now() - started)} ms`);
      for (const set of layout.sets) {
        for (const mode of options.modes) {
          const { overall, misses } = await ask(app.deps, layout.namespace, set, mode, ids);
          runs.push({
            namespace: layout.namespace,
            textSearch: layout.textSearch,
            contains: layout.sets.map((s) => s.language),
            language: set.language,
            mode,
            overall,
            misses,
          });
          log(
            `${layout.namespace} ${set.language} ${mode}: R@10 ${overall.recall[10].toFixed(3)}, MRR ${overall.mrr.toFixed(3)}`,
          );
        }
      }
    }
    return {
      files: options.files,
      embedder: embedder.model,
      backend: db.backend,
      runs,
      createdAt: new Date().toISOString(),
    };
  } finally {
    await app.close();
  }
}

function scopeOf(deps: AppDeps): RequestScope {
  return {
    deps,
    db: deps.db,
    principal: LOCAL_PRINCIPAL,
    loaders: createLoaders(deps.db, LOCAL_PRINCIPAL.scopes),
  };
}

/** Writes the sets; answers node key → the set's evidence id (document key or observation id). */
async function writeSets(
  deps: AppDeps,
  namespace: string,
  textSearch: string,
  sets: readonly LanguageSet[],
): Promise<Map<string, string>> {
  const scope = scopeOf(deps);
  await new TextSearchService(scope).configure(namespace, textSearch);
  const ids = new Map<string, string>();
  for (const set of sets) {
    const docs = await new DocumentService(scope).retainDocuments(namespace, set.documents);
    const observations = await new ObservationService(scope).recordObservations(
      namespace,
      set.observations.map((o) => ({
        source: { system: 'eval', stream: set.language, externalId: o.id },
        kind: 'message',
        occurredAt: new Date(o.occurredAt),
        actor: o.actor ? { type: 'person', id: o.actor } : undefined,
        content: o.content,
      })),
    );
    const rejected = [...docs.results, ...observations.results].filter((r) => r.status === 'REJECTED');
    if (rejected.length > 0) throw new Error(`${set.language}: rejected ${JSON.stringify(rejected)}`);
    for (const d of set.documents) ids.set(d.key, d.key);
    for (const r of observations.results) ids.set(r.key!, set.observations[r.index]!.id);
  }
  return ids;
}

async function ask(
  deps: AppDeps,
  namespace: string,
  set: LanguageSet,
  mode: SearchMode,
  ids: ReadonlyMap<string, string>,
): Promise<{ overall: Aggregate; misses: LanguageRun['misses'] }> {
  const scores = [];
  const misses: LanguageRun['misses'] = [];
  for (const q of set.questions) {
    const result = await new SearchService(scopeOf(deps)).search({
      namespaces: [namespace],
      query: q.question,
      k: 20,
      mode,
      hops: 0,
    });
    const ranking = result.hits.map((h) => ids.get(h.chunk.nodeKey) ?? `chunk:${h.chunk.chunkId}`);
    const score = scoreRanking(ranking, q.evidence);
    scores.push(score);
    if (score.recall[10] < 1)
      misses.push({ question: q.question, evidence: q.evidence, top: ranking.slice(0, 3) });
  }
  return { overall: aggregate(scores), misses };
}

export function formatLanguageReport(report: LanguageEvalReport): string {
  const header = ['namespace', 'text search', 'language', 'mode', 'questions', 'R@5', 'R@10', 'MRR'];
  const rows = report.runs.map((r) => [
    r.namespace,
    r.textSearch,
    r.language,
    r.mode,
    String(r.overall.questions),
    r.overall.recall[5].toFixed(3),
    r.overall.recall[10].toFixed(3),
    r.overall.mrr.toFixed(3),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return `${[
    `Language sets (${report.files.length} files; embedder ${report.embedder}; ${report.backend})`,
    line(header),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map(line),
  ].join('\n')}\n`;
}
