import type { Queryable } from '../../db/database.js';
import { embeddingText } from '../../domain/chunking.js';
import type { AppDeps } from '../../kernel/request-scope.js';
import { llmFor } from '../../providers/llm.js';
import { findExtractionSettings, readExtractionSettings } from '../extraction/index.js';
import { chunkLanguageOf } from '../text-search/index.js';
import { composeWithModel } from './summary-model.js';
import { summaryMaterial } from './store/summary-material-store.js';
import {
  SUMMARY_KIND,
  type SummaryMeta,
  type SummaryWrite,
  replaceSummaries,
} from './store/summary-store.js';
import { summaryClasses } from './summary-classes.js';
import type { SummaryMaterial } from './summary-material.js';
import { type SummaryDraft, summaryText } from './summary-text.js';

/**
 * Rebuilding the summaries of some entities of one namespace, as named stages: read the material
 * (every row, with its visibility), split it into visibility classes, draft each class's text,
 * embed the texts, and replace the entities' summary chunks in one transaction.
 */

export interface DraftedSummary {
  key: string;
  title: string;
  scopes: string[];
  /** The order of its chunk: -1 for the first class, -2 for the next… */
  order: number;
  visibility: string[];
  draft: SummaryDraft;
  /** Personal data in any source it states, and of which categories. */
  pii: { pii: boolean; categories: string[] };
  /** The class's material (what a model rewrite may use). */
  material: SummaryMaterial;
  /** 'extractive', or the model that wrote it. */
  by: string;
}

/** A summary holds personal data when its entity or any row it states does. */
export function piiOf(m: SummaryMaterial, draft: SummaryDraft): { pii: boolean; categories: string[] } {
  const facts = new Set(draft.sources.facts);
  const notes = new Set(draft.sources.observations);
  const marks = [
    { pii: m.entity.pii, categories: m.entity.piiCategories },
    ...m.facts
      .filter((f) => facts.has(f.factId))
      .map((f) => ({ pii: f.otherPii, categories: f.otherPiiCategories })),
    ...m.notes
      .filter((n) => notes.has(n.observationId))
      .map((n) => ({ pii: n.pii, categories: n.piiCategories })),
  ].filter((x) => x.pii);
  return { pii: marks.length > 0, categories: [...new Set(marks.flatMap((x) => x.categories))].sort() };
}

/** Each entity's classes, drafted; a class with nothing to say gets no summary. Pure. */
export function draftSummaries(materials: readonly SummaryMaterial[], asOf: Date): DraftedSummary[] {
  return materials.flatMap((m) => {
    let order = 0;
    return summaryClasses(m).flatMap((cls) => {
      const draft = summaryText(cls.material, asOf);
      if (draft === null) return [];
      order -= 1;
      const { entity } = m;
      const pii = piiOf(cls.material, draft);
      const { visibility, material } = cls;
      return [
        {
          key: entity.key,
          title: entity.title,
          scopes: entity.scopes,
          order,
          visibility,
          draft,
          pii,
          material,
          by: 'extractive',
        },
      ];
    });
  });
}

async function summaryWrites(
  deps: AppDeps,
  q: Queryable,
  namespace: string,
  drafted: readonly DraftedSummary[],
  builtAt: Date,
): Promise<SummaryWrite[]> {
  if (drafted.length === 0) return [];
  const language = await chunkLanguageOf(deps, q, namespace);
  const vectors = await deps.embedder.embed(drafted.map((d) => embeddingText(d.title, null, d.draft.text)));
  return drafted.map((d, i) => {
    const meta: SummaryMeta = {
      evidence: 'DERIVED',
      sources: d.draft.sources,
      builtAt: builtAt.toISOString(),
      by: d.by,
    };
    return {
      nodeKey: d.key,
      chunk: {
        order: d.order,
        kind: SUMMARY_KIND,
        title: d.title,
        heading: 'Summary',
        text: d.draft.text,
        searchText: d.draft.text,
        sourcePath: null,
        meta: { ...meta },
        scopes: d.scopes,
        visibility: d.visibility,
        observationId: null,
        occurredAt: builtAt,
        pii: d.pii.pii,
        piiCategories: d.pii.categories,
        embedding: vectors[i] ?? null,
        tsConfig: language(d.draft.text),
      },
    };
  });
}

/**
 * When the gateway has a model and the namespace lets it run, each draft is rewritten by the
 * model with citations (summary-model.ts); a draft the model could not rewrite stays extractive.
 */
async function rewriteWithModel(
  deps: AppDeps,
  namespace: string,
  drafted: readonly DraftedSummary[],
): Promise<DraftedSummary[]> {
  const llm = llmFor(deps.config);
  if (!llm.available || drafted.length === 0) return [...drafted];
  const settings = readExtractionSettings(await findExtractionSettings(deps.db, namespace));
  if (!settings.model) return [...drafted];
  const composer = { llm, model: settings.modelName, timeoutMs: MODEL_TIMEOUT_MS, sendPii: settings.sendPii };
  const out: DraftedSummary[] = [];
  for (const d of drafted) {
    try {
      const draft = await composeWithModel(d.material, d.draft, composer);
      out.push({ ...d, draft, pii: piiOf(d.material, draft), by: settings.modelName ?? llm.name });
    } catch (error) {
      deps.logger.warn('the model could not write a summary; the extractive one is kept', {
        entity: d.key,
        error: String(error),
      });
      out.push(d);
    }
  }
  return out;
}

const MODEL_TIMEOUT_MS = 30_000;

/** Rebuilds the summaries of `keys` as of now; returns how many summary chunks were written. */
export async function rebuildSummaries(
  deps: AppDeps,
  namespace: string,
  keys: readonly string[],
): Promise<number> {
  if (keys.length === 0) return 0;
  const builtAt = new Date();
  const materials = await summaryMaterial(deps.db, namespace, keys, builtAt, null);
  const drafted = await rewriteWithModel(deps, namespace, draftSummaries(materials, builtAt));
  const writes = await summaryWrites(deps, deps.db, namespace, drafted, builtAt);
  await deps.db.transaction('rebuildSummaries', (tx) => replaceSummaries(tx, namespace, keys, writes));
  return writes.length;
}
