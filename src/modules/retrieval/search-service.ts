import { namespacesWithMemory } from './store/namespace-memory-store.js';
import { z } from 'zod';
import { assertCanRead } from '../../auth/principal.js';
import { parseInput } from '../../errors.js';
import { nsKey } from '../../kernel/loaders.js';
import { llmFor } from '../../providers/llm.js';
import { chunkSection } from './pipeline/chunk-section.js';
import { type ContextEntity, type ContextFragment, renderSearchContext } from './pipeline/context-text.js';
import {
  type ChannelStat,
  type RerankReport,
  type SearchMode,
  type SearchHitResult,
  type SearchOutcome,
  search,
} from './pipeline/search.js';
import { type PresetName, channelWeightsSchema, resolveSettings } from './pipeline/settings.js';
import { synthesize } from './pipeline/synthesis.js';
import {
  DEFAULT_RECALL_BUDGET,
  RECALL_BUDGETS,
  type RecallBudget,
  SEARCH_DEFAULTS,
  SEARCH_MODES,
} from './pipeline/vocabulary.js';
import { maskForPrincipal } from '../../security/pii-masking.js';
import type { ChunkRow, HitChunkRow } from '../../kernel/store/chunk-store.js';
import type { EntityRow } from '../../kernel/store/entity-store.js';
import type { Neighbor } from '../graph/index.js';
import type { RequestScope } from '../../kernel/request-scope.js';
import { jsonObjectSchema, kindSchema, namespaceSchema, scopeSchema } from '../../kernel/validation.js';

/** Longer queries are refused; 32 KB still leaves room for pasted logs and stack traces. */
export const MAX_QUERY_CHARS = 32_768;
export const MAX_K = 100;
export const MAX_NAMESPACES = 10;
export { RECALL_BUDGETS, type RecallBudget };

const MODE_PRESET: Readonly<Record<SearchMode, PresetName>> = {
  HYBRID: 'hybrid',
  VECTOR: 'semantic',
  LEXICAL: 'lexical',
};

const filtersSchema = z
  .object({
    meta: jsonObjectSchema.nullish(),
    kinds: z.array(kindSchema).max(50, 'at most 50 kinds').nullish(),
    scopes: z.array(scopeSchema).max(20, 'at most 20 scopes').nullish(),
    since: z.date().nullish(),
    until: z.date().nullish(),
  })
  .refine((f) => !f.since || !f.until || f.since < f.until, {
    message: 'since must be before until',
    path: ['until'],
  });

const namespacesSchema = z
  .array(namespaceSchema)
  .min(1, 'name at least one namespace')
  .max(MAX_NAMESPACES, `at most ${MAX_NAMESPACES} namespaces`);

// PostgreSQL text cannot hold NUL; any other character is the channels' business.
const querySchema = z
  .string()
  .max(MAX_QUERY_CHARS, `the query is limited to ${MAX_QUERY_CHARS} characters`)
  .transform((q) => q.replaceAll('\u0000', ' '));

export const searchInputSchema = z.object({
  namespaces: namespacesSchema,
  query: querySchema,
  k: z.number().int().min(1).max(MAX_K).nullish(),
  mode: z.enum(SEARCH_MODES).nullish(),
  hops: z.number().int().min(0).max(2).nullish(),
  filters: filtersSchema.nullish(),
  asOf: z.date().nullish(),
  weights: channelWeightsSchema.nullish(),
  rrfK: z.number().int().min(0).max(1000).nullish(),
  rerank: z.boolean().nullish(),
});
export type SearchInput = z.input<typeof searchInputSchema>;

export const recallInputSchema = z.object({
  namespaces: namespacesSchema,
  query: querySchema,
  budget: z.enum(Object.keys(RECALL_BUDGETS) as [RecallBudget, ...RecallBudget[]]).nullish(),
});

export const askInputSchema = z.object({
  namespaces: namespacesSchema,
  question: querySchema.refine((q) => q.trim() !== '', 'the question must not be empty'),
  k: z.number().int().min(1).max(MAX_K).nullish(),
  synthesize: z.boolean().nullish(),
  mode: z.enum(SEARCH_MODES).nullish(),
  hops: z.number().int().min(0).max(2).nullish(),
  filters: filtersSchema.nullish(),
  rerank: z.boolean().nullish(),
});

export interface SourceRefModel {
  namespace: string;
  key: string;
  title: string;
  sourcePath: string | null;
}

export interface SearchResultModel {
  mode: SearchMode;
  hits: SearchHitResult[];
  neighbors: Neighbor[];
  sources: SourceRefModel[];
  context: string;
  channelStats: ChannelStat[];
  rerank: RerankReport;
  warnings: string[];
}

export interface AnswerModel {
  question: string;
  answer: string;
  synthesized: boolean;
  /** "echo" or "openai:<model>"; null when no model was asked (no data, synthesize: false). */
  model: string | null;
  citations: SourceRefModel[];
  search: SearchResultModel;
}

export class SearchService {
  constructor(private readonly scope: RequestScope) {}

  async search(raw: unknown): Promise<SearchResultModel> {
    const input = parseInput(searchInputSchema, raw, 'search input');
    return this.run({
      namespaces: input.namespaces,
      query: input.query,
      k: input.k ?? SEARCH_DEFAULTS.k,
      mode: input.mode ?? SEARCH_DEFAULTS.mode,
      hops: input.hops ?? SEARCH_DEFAULTS.hops,
      filters: input.filters ?? null,
      asOf: input.asOf ?? null,
      weights: input.weights ?? null,
      rrfK: input.rrfK ?? null,
      rerank: input.rerank ?? SEARCH_DEFAULTS.rerank,
    });
  }

  async recall(raw: unknown): Promise<SearchResultModel> {
    const input = parseInput(recallInputSchema, raw, 'recall input');
    return this.run({
      namespaces: input.namespaces,
      query: input.query,
      k: RECALL_BUDGETS[input.budget ?? DEFAULT_RECALL_BUDGET],
      mode: SEARCH_DEFAULTS.mode,
      hops: SEARCH_DEFAULTS.hops,
      filters: null,
      asOf: null,
      weights: null,
      rrfK: null,
      rerank: false,
    });
  }

  async ask(raw: unknown): Promise<AnswerModel> {
    const input = parseInput(askInputSchema, raw, 'ask input');
    const result = await this.run({
      namespaces: input.namespaces,
      query: input.question,
      k: input.k ?? SEARCH_DEFAULTS.k,
      mode: input.mode ?? SEARCH_DEFAULTS.mode,
      hops: input.hops ?? SEARCH_DEFAULTS.hops,
      filters: input.filters ?? null,
      asOf: null,
      weights: null,
      rrfK: null,
      rerank: input.rerank ?? SEARCH_DEFAULTS.rerank,
    });
    const base = { question: input.question, search: result };
    if (input.synthesize === false && result.hits.length > 0) {
      return { ...base, answer: '', synthesized: false, model: null, citations: [] };
    }
    const llm = llmFor(this.scope.deps.config);
    const settings = resolveSettings({ embedderModel: this.scope.deps.embedder.model });
    // The prompt leaves the gateway: it carries only what this principal may see.
    const prompt = maskForPrincipal(this.scope.principal, result.context, {
      type: 'llm.prompt',
      field: 'context',
    });
    const outcome = await synthesize(llm, input.question, prompt, result.hits.length, settings.synthesis);
    const hitSources = result.hits.map((h) => this.sourceOfHit(h.chunk, result.sources));
    switch (outcome.kind) {
      case 'no-data':
        return { ...base, answer: outcome.answer, synthesized: false, model: null, citations: [] };
      case 'echo':
      case 'fallback':
        return {
          ...base,
          answer: outcome.answer,
          synthesized: false,
          model: llm.name,
          citations: dedupe(hitSources),
        };
      case 'answer':
        return {
          ...base,
          answer: outcome.answer,
          synthesized: true,
          model: llm.name,
          citations: dedupe(outcome.cited.map((n) => hitSources[n - 1]!)),
        };
    }
  }

  private async run(request: {
    namespaces: string[];
    query: string;
    k: number;
    mode: SearchMode;
    hops: number;
    filters: z.output<typeof filtersSchema> | null;
    asOf: Date | null;
    weights: z.output<typeof channelWeightsSchema> | null;
    rrfK: number | null;
    rerank: boolean;
  }): Promise<SearchResultModel> {
    const namespaces = [...new Set(request.namespaces)];
    for (const ns of namespaces) assertCanRead(this.scope.principal, ns);
    const { deps, principal, loaders } = this.scope;
    const settings = resolveSettings({
      preset: MODE_PRESET[request.mode],
      embedderModel: deps.embedder.model,
      weights: request.weights,
      rrfK: request.rrfK,
    });
    const f = request.filters;
    const outcome = await search(
      {
        db: this.scope.db,
        embedder: deps.embedder,
        llm: llmFor(deps.config),
        visibleScopes: principal.scopes,
        loadChunks: async (refs) => {
          const rows = await loaders.chunk.loadMany(refs.map((r) => nsKey(r.namespace, String(r.chunkId))));
          return rows.map((r) => (r instanceof Error ? null : r));
        },
        maskText: (text) => maskForPrincipal(principal, text, { type: 'llm.prompt', field: 'rerank' }),
        channelTimeoutMs: deps.config.statementTimeoutMs,
        onChannelError: (channel, error) =>
          deps.logger.warn('search channel failed', { channel, error: String(error) }),
      },
      {
        namespaces,
        query: request.query,
        k: request.k,
        mode: request.mode,
        hops: request.hops,
        filters: {
          meta: f?.meta ?? null,
          kinds: f?.kinds?.length ? f.kinds : null,
          // Search serves entity summaries as hits like any text.
          excludeKinds: null,
          scopes: f?.scopes?.length ? f.scopes : null,
          since: f?.since ?? null,
          until: f?.until ?? null,
          asOf: request.asOf,
        },
        rerank: request.rerank,
        settings,
      },
    );
    if (outcome.hits.length === 0 && outcome.neighbors.length === 0) {
      // An empty answer says why when the namespaces hold nothing the caller can read.
      const held = await namespacesWithMemory(this.scope.db, namespaces, principal.scopes);
      const unknown = namespaces.filter((ns) => !held.has(ns));
      if (unknown.length > 0)
        outcome.warnings.push(
          `unknown_namespace: ${unknown.map((ns) => `"${ns}"`).join(', ')} hold(s) nothing you can read`,
        );
    }
    return this.present(request.mode, outcome);
  }

  /**
   * Loads what the hits and neighbours point at: the statements of the search already read
   * most of it (the hits' nodes, the neighbours' entities and facts), the rest costs one
   * statement per namespace and table.
   */
  private async present(mode: SearchMode, outcome: SearchOutcome): Promise<SearchResultModel> {
    const { loaders } = this.scope;
    for (const h of outcome.hits) {
      const owner = (h.chunk as Partial<HitChunkRow>).owner;
      if (owner !== undefined) loaders.entity.prime(nsKey(h.chunk.namespace, h.chunk.nodeKey), owner);
    }
    for (const n of outcome.neighbors) {
      if (n.entity) loaders.entity.prime(nsKey(n.namespace, n.key), n.entity);
      if (n.fact) loaders.fact.prime(nsKey(n.namespace, n.factId), n.fact);
    }
    const entityKeys = new Set<string>();
    for (const h of outcome.hits) entityKeys.add(nsKey(h.chunk.namespace, h.chunk.nodeKey));
    for (const n of outcome.neighbors) {
      entityKeys.add(nsKey(n.namespace, n.key));
      if (n.throughKey) entityKeys.add(nsKey(n.namespace, n.throughKey));
    }
    const keys = [...entityKeys];
    const [entityRows, factRows] = await Promise.all([
      loaders.entity.loadMany(keys),
      loaders.fact.loadMany(outcome.neighbors.map((n) => nsKey(n.namespace, n.factId))),
    ]);
    const entities = new Map<string, EntityRow>();
    keys.forEach((k, i) => {
      const row = entityRows[i];
      if (row && !(row instanceof Error)) entities.set(k, row);
    });

    const neighbors: Neighbor[] = [];
    outcome.neighbors.forEach((n, i) => {
      const entity = entities.get(nsKey(n.namespace, n.key));
      const via = factRows[i];
      if (!entity || !via || via instanceof Error) return;
      const through = n.throughKey ? (entities.get(nsKey(n.namespace, n.throughKey)) ?? null) : null;
      neighbors.push({ entity, distance: n.distance, via, through });
    });

    const sources: SourceRefModel[] = [];
    const seen = new Set<string>();
    const addSource = (s: SourceRefModel) => {
      const k = nsKey(s.namespace, s.key);
      if (seen.has(k)) return;
      seen.add(k);
      sources.push(s);
    };
    const fragments: ContextFragment[] = outcome.hits.map((h, i) => {
      const owner = entities.get(nsKey(h.chunk.namespace, h.chunk.nodeKey));
      addSource(sourceOf(h.chunk, owner));
      return {
        n: i + 1,
        key: h.chunk.nodeKey,
        title: h.chunk.title ?? owner?.title ?? null,
        heading: h.chunk.heading,
        sourcePath: h.chunk.sourcePath ?? owner?.sourcePath ?? null,
        occurredAt: h.chunk.occurredAt ? new Date(h.chunk.occurredAt) : null,
        text: h.chunk.text,
        section: chunkSection(h.chunk),
      };
    });
    const related: ContextEntity[] = neighbors.map((n) => {
      addSource({
        namespace: n.entity.namespace,
        key: n.entity.key,
        title: n.entity.title,
        sourcePath: n.entity.sourcePath,
      });
      return {
        key: n.entity.key,
        kind: n.entity.kind,
        title: n.entity.title,
        sourcePath: n.entity.sourcePath,
        distance: n.distance,
      };
    });
    let context: string | undefined;
    return {
      mode,
      hits: outcome.hits,
      neighbors,
      sources,
      // Rendered when read: a selection without `context` does not pay for it.
      get context() {
        context ??= renderSearchContext(fragments, related);
        return context;
      },
      channelStats: outcome.channels,
      rerank: outcome.rerank,
      warnings: outcome.warnings,
    };
  }

  private sourceOfHit(chunk: ChunkRow, sources: SourceRefModel[]): SourceRefModel {
    return (
      sources.find((s) => s.namespace === chunk.namespace && s.key === chunk.nodeKey) ??
      sourceOf(chunk, undefined)
    );
  }
}

function sourceOf(chunk: ChunkRow, owner: EntityRow | undefined): SourceRefModel {
  return {
    namespace: chunk.namespace,
    key: chunk.nodeKey,
    title: owner?.title ?? chunk.title ?? chunk.nodeKey,
    sourcePath: chunk.sourcePath ?? owner?.sourcePath ?? null,
  };
}

function dedupe(sources: SourceRefModel[]): SourceRefModel[] {
  const seen = new Set<string>();
  return sources.filter((s) => {
    const k = nsKey(s.namespace, s.key);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
