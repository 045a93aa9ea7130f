import { z } from 'zod';
import { assertCanRead } from '../../auth/principal.js';
import { compileContext, compilePack } from './compiler/compile.js';
import type { CompileDeps, CompileRequest, ContextPackValue } from './compiler/pack-types.js';
import { decisionsAsServed, writeTrace } from './compiler/trace.js';
import { CONTEXT_DEFAULTS, CONTEXT_STRATEGIES } from './pipeline/vocabulary.js';
import { badInput, parseInput } from '../../errors.js';
import { recordContextPack } from '../../observability/retrieval.js';
import { channelWeightsSchema } from './pipeline/settings.js';
import { maskForPrincipal } from '../../security/pii-masking.js';
import { type TraceRow, findTrace } from './store/trace-store.js';
import type { RequestScope } from '../../kernel/request-scope.js';
import { RouteService } from './route-service.js';
import { keySchema, namespaceSchema, scopeSchema } from '../../kernel/validation.js';

export const CONTEXT_LIMITS = {
  namespaces: 10,
  scopes: 10,
  anchors: 20,
  /** k: target size of each channel; phase 1 never returns more than 64 per channel. */
  minK: 1,
  maxK: 64,
  defaultK: CONTEXT_DEFAULTS.k,
  defaultBudget: CONTEXT_DEFAULTS.budgetTokens,
  maxBudget: 1_000_000,
  /** Characters of `query` (any text is accepted up to this). */
  maxQueryChars: 32_768,
  /** Cosine distance lies in [0, 2]. */
  maxDistance: 2,
} as const;

const budgetSchema = z
  .number({ error: 'budgetTokens must be a positive integer' })
  .int('budgetTokens must be a positive integer')
  .positive('budgetTokens must be a positive integer')
  .max(CONTEXT_LIMITS.maxBudget, `budgetTokens must be at most ${CONTEXT_LIMITS.maxBudget}`);

export const contextInputSchema = z.object({
  namespaces: z
    .array(namespaceSchema)
    .min(1, 'at least one namespace')
    .max(CONTEXT_LIMITS.namespaces, `at most ${CONTEXT_LIMITS.namespaces} namespaces`),
  query: z
    .string()
    .max(CONTEXT_LIMITS.maxQueryChars, `query must be at most ${CONTEXT_LIMITS.maxQueryChars} characters`)
    .nullish(),
  scopes: z
    .array(scopeSchema)
    .max(CONTEXT_LIMITS.scopes, `at most ${CONTEXT_LIMITS.scopes} scopes`)
    .nullish(),
  anchors: z
    .array(keySchema)
    .max(CONTEXT_LIMITS.anchors, `at most ${CONTEXT_LIMITS.anchors} anchors`)
    .nullish(),
  subject: z.object({ type: z.string().min(1).max(64), id: z.string().min(1).max(256) }).nullish(),
  ephemeralContext: z.unknown().optional(),
  // Absent means the default; an explicit null, zero, a negative or a fraction is an error.
  budgetTokens: budgetSchema.optional(),
  strategy: z.enum([...CONTEXT_STRATEGIES, 'AUTO']).nullish(),
  asOf: z.date().nullish(),
  k: z
    .number()
    .int('k must be an integer')
    .min(CONTEXT_LIMITS.minK, `k must be between ${CONTEXT_LIMITS.minK} and ${CONTEXT_LIMITS.maxK}`)
    .max(CONTEXT_LIMITS.maxK, `k must be between ${CONTEXT_LIMITS.minK} and ${CONTEXT_LIMITS.maxK}`)
    .nullish(),
  maxDistance: z
    .number()
    .gt(0, 'maxDistance must be a cosine distance in (0, 2]')
    .max(CONTEXT_LIMITS.maxDistance, 'maxDistance must be a cosine distance in (0, 2]')
    .nullish(),
  weights: channelWeightsSchema.nullish(),
});

/** Prune on write at most this often per database (the first compilation of a process prunes). */
export const TRACE_PRUNE_INTERVAL_MS = 10 * 60 * 1000;
const lastPrune = new WeakMap<object, Map<string, number>>();

/** Of `namespaces`, those whose old traces were not pruned in the last interval (marked pruned now). */
function pruneDue(db: object, namespaces: readonly string[]): string[] {
  const now = Date.now();
  const last = lastPrune.get(db) ?? new Map<string, number>();
  lastPrune.set(db, last);
  const due = namespaces.filter(
    (ns) => now - (last.get(ns) ?? Number.NEGATIVE_INFINITY) >= TRACE_PRUNE_INTERVAL_MS,
  );
  for (const ns of due) last.set(ns, now);
  return due;
}

export interface ContextTraceView {
  traceId: string;
  createdAt: Date;
  kind: string;
  request: unknown;
  channels: unknown;
  decisions: unknown;
}

export class ContextService {
  constructor(private readonly scope: RequestScope) {}

  async compile(raw: Record<string, unknown>): Promise<ContextPackValue> {
    if ('budgetTokens' in raw && raw.budgetTokens === null) {
      throw badInput('Invalid context input: budgetTokens: budgetTokens must be a positive integer', {
        issues: [{ path: 'budgetTokens', message: 'budgetTokens must be a positive integer' }],
      });
    }
    const input = parseInput(contextInputSchema, stripUndefined(raw), 'context input');
    const namespaces = [...new Set(input.namespaces)];
    for (const ns of namespaces) assertCanRead(this.scope.principal, ns);
    const { deps, principal } = this.scope;
    const request: CompileRequest = {
      namespaces,
      query: input.query ?? '',
      scopes: [...new Set(input.scopes ?? [])],
      anchors: [...new Set(input.anchors ?? [])],
      subject: input.subject ?? null,
      ephemeralContext: input.ephemeralContext ?? null,
      budgetTokens: input.budgetTokens ?? CONTEXT_LIMITS.defaultBudget,
      strategy: input.strategy === 'AUTO' ? 'HYBRID' : (input.strategy ?? CONTEXT_DEFAULTS.strategy),
      asOf: input.asOf ?? null,
      k: input.k ?? CONTEXT_LIMITS.defaultK,
      maxDistance: input.maxDistance ?? null,
      weights: input.weights
        ? Object.fromEntries(Object.entries(input.weights).filter(([, v]) => typeof v === 'number'))
        : null,
    };
    const compileDeps: CompileDeps = {
      db: this.scope.db,
      embedder: deps.embedder,
      principal: { id: principal.id, scopes: principal.scopes, pii: principal.pii },
      charsPerToken: deps.config.charsPerToken,
      traceRetentionDays: deps.config.traceRetentionDays,
      pruneDue: (namespaces) => pruneDue(deps.db, namespaces),
      channelTimeoutMs: deps.config.statementTimeoutMs,
      mask: (text) => maskForPrincipal(principal, text, { type: 'ContextItem', field: 'text' }),
      onChannelError: (channel, error) =>
        deps.logger.warn('context channel failed', { channel, error: String(error) }),
    };
    // AUTO: the router picks the handler, each handler compiles what its route needs.
    const pack =
      input.strategy === 'AUTO'
        ? await this.compileAuto(request, compileDeps)
        : await compileContext(request, compileDeps);
    recordContextPack(pack.budget.used, pack.budget.dropped);
    return pack;
  }

  private compileAuto(request: CompileRequest, compileDeps: CompileDeps): Promise<ContextPackValue> {
    return new RouteService(this.scope).compileAuto(request, {
      compile: (r) => compilePack(r, compileDeps),
      serve: (trace, pack) =>
        writeTrace(compileDeps.db, trace, pack, {
          prune: {
            namespaces: compileDeps.pruneDue(request.namespaces),
            olderThanDays: compileDeps.traceRetentionDays,
          },
          onError: compileDeps.onChannelError,
        }),
    });
  }

  async trace(namespace: string, traceId: string): Promise<ContextTraceView | null> {
    const ns = parseInput(namespaceSchema, namespace, 'namespace');
    assertCanRead(this.scope.principal, ns);
    const id = parseInput(z.string().min(1).max(128), traceId, 'traceId');
    const row: TraceRow | null = await findTrace(this.scope.db, ns, id, this.scope.principal.scopes);
    if (!row) return null;
    return {
      traceId: row.traceId,
      createdAt: row.createdAt,
      kind: row.kind,
      request: row.request,
      channels: row.channels,
      // Typed traces (typedContext) are stored whole; context traces compactly (trace.ts).
      decisions: row.kind === 'context' ? decisionsAsServed(row.decisions, row.namespace) : row.decisions,
    };
  }
}

function stripUndefined(raw: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined));
}
