import { type Principal, scopeAssignmentError } from '../../auth/principal.js';
/**
 * Assertion projection: what an observation's structured `assertions` become in the graph,
 * inside the observation's own transaction (and savepoint).
 *
 * - `entity` → `upsertEntity`: attribute changes open a version valid from the entity's
 *   validFrom or else the observation's occurredAt, recorded with the observation id.
 * - `fact` → `writeFact`: created or reinforced (the observation id joins its evidence; sourcePath
 *   defaults to the observation's provenance uri);
 *   missing endpoints become placeholders that a later entity write fills in. validFrom
 *   defaults to occurredAt.
 * - `episode` → an entity of kind `episode` (key given, or `episode:<observationId>` and
 *   `episode:<observationId>:<n>` for further keyless ones) whose text is its chunk (carrying
 *   the observation id). Provenance is the `mentions` row with role `episode`, which is what
 *   Observation.episodes reads; no DERIVED_FROM edge is written.
 *
 * Every assertion runs under its own savepoint: a rejected one leaves no trace, the others
 * stand, and the observation ends PARTIALLY_PROCESSED (or FAILED when none stood).
 */
import { z } from 'zod';
import type { Queryable } from '../../db/database.js';
import { isDatabaseUnavailable } from '../../db/unavailable.js';
import { type AssertionResult, withSavepoint } from '../../kernel/batch.js';
import { combinePii, detectPii, detectPiiInJson } from '../../domain/pii.js';
import { MemgateError } from '../../errors.js';
import type { MentionRole, MentionWrite } from '../../kernel/store/mention-store.js';
import { replaceNodeChunks } from '../../kernel/store/observation-store.js';
import { entityInputSchema, upsertVisibleEntity } from '../entities/index.js';
import {
  type FactInput,
  type FactWriteContext,
  describe,
  factInputSchema,
  writeFact,
} from '../facts/index.js';
import type { EntityWrite } from '../../kernel/store/entity-store.js';
import { SchemaPolicy } from '../domain-packs/index.js';
import { keySchema, titleSchema, visibilityScopes } from '../../kernel/validation.js';

export const episodeInputSchema = z.object({
  key: keySchema.nullish(),
  title: titleSchema.nullish(),
  text: z
    .string()
    .min(1, 'episode text must not be empty')
    .max(1024 * 1024, 'episode text is at most 1 MiB'),
});

export const assertionInputSchema = z
  .object({
    entity: entityInputSchema.nullish(),
    fact: factInputSchema.nullish(),
    episode: episodeInputSchema.nullish(),
  })
  .refine(
    (a) => [a.entity, a.fact, a.episode].filter((x) => x != null).length === 1,
    'an assertion holds exactly one of entity, fact, episode',
  );

export type ParsedAssertion =
  | { ok: true; kind: 'entity'; value: z.infer<typeof entityInputSchema> }
  | { ok: true; kind: 'fact'; value: z.infer<typeof factInputSchema> }
  | { ok: true; kind: 'episode'; value: z.infer<typeof episodeInputSchema>; key: string; title: string }
  | { ok: false; kind: string; code: string; message: string };

/** Parses assertions one by one (a bad one is rejected alone) and derives episode keys. */
export function parseAssertions(
  raw: readonly unknown[],
  observation: { observationId: string; kind: string; occurredAt: Date },
  principal: Principal,
): ParsedAssertion[] {
  let keyless = 0;
  return raw.map((item): ParsedAssertion => {
    const parsed = assertionInputSchema.safeParse(item);
    if (!parsed.success) {
      return {
        ok: false,
        kind: assertionKind(item),
        code: 'BAD_USER_INPUT',
        message: describe(parsed.error),
      };
    }
    const a = parsed.data;
    const refused = scopeAssignmentError(principal, a.entity?.scopes ?? a.fact?.scopes);
    if (refused)
      return { ok: false, kind: assertionKind(item), code: refused.code, message: refused.message };
    if (a.entity) return { ok: true, kind: 'entity', value: a.entity };
    if (a.fact) return { ok: true, kind: 'fact', value: a.fact };
    const episode = a.episode!;
    let key = episode.key;
    if (!key) {
      key =
        keyless === 0
          ? `episode:${observation.observationId}`
          : `episode:${observation.observationId}:${keyless}`;
      keyless += 1;
    }
    // Never derived from the text: a redaction removes the text, a title would outlive it.
    const title = episode.title ?? `${observation.kind} episode ${observation.occurredAt.toISOString()}`;
    return { ok: true, kind: 'episode', value: episode, key, title };
  });
}

/** One piece of an episode's text, embedded before the transaction. */
export interface EpisodeChunkDraft {
  order: number;
  heading: string | null;
  text: string;
  /** The text-search configuration of the chunk (decided with the observation's other chunks). */
  tsConfig: string;
  embedding: number[] | null;
}

export interface ProjectionContext {
  namespace: string;
  observationId: string;
  kind: string;
  occurredAt: Date;
  now: Date;
  scopes: string[];
  sourcePath: string | null;
  /** Chunks of each episode assertion, by assertion index. */
  episodeChunks: Map<number, EpisodeChunkDraft[]>;
  onUnexpected: (error: unknown) => void;
  /** Strict-mode checks (the request's policy; a fresh one when absent, so they always run). */
  policy?: SchemaPolicy;
  /** The writer's visibility scopes (null: all): projections change only rows it can see. */
  visibleScopes: string[] | null;
}

export interface AssertionRejection {
  index: number;
  kind: string;
  code: string;
  message: string;
}

export interface ProjectionOutcome {
  applied: number;
  rejected: AssertionRejection[];
  /** Every assertion in input order: APPLIED, or REJECTED with its code. */
  results: AssertionResult[];
  mentions: MentionWrite[];
}

const ROLE_RANK: Record<MentionRole, number> = {
  episode: 4,
  entity: 3,
  fact: 2,
  node: 1,
  actor: 0,
  subject: 0,
  mention: 0,
};

/** Applies each assertion under its own savepoint; returns what stood and the mentions to record. */
export async function projectAssertions(
  tx: Queryable,
  ctx: ProjectionContext,
  assertions: readonly ParsedAssertion[],
): Promise<ProjectionOutcome> {
  const checked: ProjectionContext = { ...ctx, policy: ctx.policy ?? new SchemaPolicy(ctx.visibleScopes) };
  const rejectedList: AssertionRejection[] = [];
  const touched: [string, MentionRole][] = [];
  for (const [index, assertion] of assertions.entries()) {
    if (!assertion.ok) {
      rejectedList.push({ index, kind: assertion.kind, code: assertion.code, message: assertion.message });
      continue;
    }
    try {
      touched.push(
        ...(await withSavepoint(tx, 'assertion', (q) => applyAssertion(q, checked, index, assertion))),
      );
    } catch (error) {
      rejectedList.push(assertionRejection(index, assertion.kind, error, ctx.onUnexpected));
    }
  }
  return projectionOutcome(ctx.observationId, assertions, rejectedList, touched);
}

/** An assertion that failed: its code and message, or INTERNAL for an unexpected error (logged). */
export function assertionRejection(
  index: number,
  kind: string,
  error: unknown,
  onUnexpected: (error: unknown) => void,
): AssertionRejection {
  // Nothing more can be written: the whole request answers UNAVAILABLE.
  if (isDatabaseUnavailable(error)) throw error;
  if (error instanceof MemgateError) return { index, kind, code: error.code, message: error.message };
  onUnexpected(error);
  return { index, kind, code: 'INTERNAL', message: 'could not be applied' };
}

/**
 * The outcome of an observation's projection: every assertion APPLIED unless rejected, and one
 * mention per entity touched, with the strongest role it was touched in.
 */
export function projectionOutcome(
  observationId: string,
  assertions: readonly ParsedAssertion[],
  rejectedList: readonly AssertionRejection[],
  touched: readonly [string, MentionRole][],
): ProjectionOutcome {
  const roles = new Map<string, MentionRole>();
  for (const [key, role] of touched) {
    const current = roles.get(key);
    if (!current || ROLE_RANK[role] > ROLE_RANK[current]) roles.set(key, role);
  }
  const mentions = [...roles].map(([entityKey, role]) => ({ entityKey, observationId, role }));
  const rejectedAt = new Map(rejectedList.map((r) => [r.index, r]));
  const results: AssertionResult[] = assertions.map((assertion, index) => {
    const rejection = rejectedAt.get(index);
    return rejection
      ? { index, kind: rejection.kind, status: 'REJECTED', code: rejection.code, message: rejection.message }
      : { index, kind: assertion.kind, status: 'APPLIED' };
  });
  const rejected = [...rejectedList].sort((a, b) => a.index - b.index);
  return { applied: assertions.length - rejected.length, rejected, results, mentions };
}

/** The entity write an `entity` assertion makes (scopes and validFrom default to the observation's). */
export function assertedEntity(
  ctx: ProjectionContext,
  e: Extract<ParsedAssertion, { kind: 'entity'; ok: true }>['value'],
): EntityWrite {
  const scopes = e.scopes ?? ctx.scopes;
  const pii = combinePii(detectPii(e.title ?? ''), detectPiiInJson(e.attributes ?? null));
  return {
    key: e.key,
    kind: e.kind,
    title: e.title ?? null,
    attributes: e.attributes ?? null,
    validFrom: e.validFrom ?? ctx.occurredAt,
    scopes,
    visibility: visibilityScopes(scopes),
    sourcePath: e.sourcePath ?? ctx.sourcePath,
    confidence: e.confidence ?? null,
    origin: 'AGENT',
    pii: pii.pii,
    piiCategories: pii.categories,
    observationId: ctx.observationId,
  };
}

/** The fact write a `fact` assertion makes (validFrom, scopes, source path default to the observation's). */
export function assertedFact(
  ctx: ProjectionContext,
  f: Extract<ParsedAssertion, { kind: 'fact'; ok: true }>['value'],
): { input: FactInput; ctx: FactWriteContext } {
  return {
    input: { ...f, sourcePath: f.sourcePath ?? ctx.sourcePath },
    ctx: {
      now: ctx.now,
      defaultValidFrom: ctx.occurredAt,
      observationId: ctx.observationId,
      defaultScopes: ctx.scopes,
      policy: ctx.policy,
      visibleScopes: ctx.visibleScopes,
    },
  };
}

export async function applyAssertion(
  tx: Queryable,
  ctx: ProjectionContext,
  index: number,
  assertion: Extract<ParsedAssertion, { ok: true }>,
): Promise<[string, MentionRole][]> {
  const ns = ctx.namespace;
  switch (assertion.kind) {
    case 'entity': {
      const e = assertion.value;
      await ctx.policy!.assertEntity(tx, ns, { kind: e.kind, key: e.key, attributes: e.attributes });
      await upsertVisibleEntity(tx, ns, assertedEntity(ctx, e), ctx.visibleScopes);
      return [[e.key, 'entity']];
    }
    case 'fact': {
      const f = assertion.value;
      const fact = assertedFact(ctx, f);
      await writeFact(tx, ns, fact.input, fact.ctx);
      return [
        [f.subject, 'fact'],
        [f.object, 'fact'],
      ];
    }
    case 'episode': {
      const chunks = ctx.episodeChunks.get(index) ?? [];
      const pii = combinePii(...chunks.map((c) => detectPii(c.text)));
      await upsertVisibleEntity(
        tx,
        ns,
        {
          key: assertion.key,
          kind: 'episode',
          title: assertion.title,
          attributes: null,
          validFrom: ctx.occurredAt,
          scopes: ctx.scopes,
          visibility: visibilityScopes(ctx.scopes),
          sourcePath: ctx.sourcePath,
          confidence: null,
          origin: 'AGENT',
          pii: pii.pii,
          piiCategories: pii.categories,
          observationId: ctx.observationId,
        },
        ctx.visibleScopes,
      );
      await replaceNodeChunks(
        tx,
        ns,
        assertion.key,
        chunks.map((c) => {
          const mark = detectPii(c.text);
          return {
            nodeKey: assertion.key,
            order: c.order,
            kind: 'episode',
            title: assertion.title,
            heading: c.heading,
            text: c.text,
            searchText: `${assertion.title}\n${c.text}`,
            sourcePath: ctx.sourcePath,
            meta: { observationId: ctx.observationId, observationKind: ctx.kind },
            scopes: ctx.scopes,
            visibility: visibilityScopes(ctx.scopes),
            observationId: ctx.observationId,
            occurredAt: ctx.occurredAt,
            pii: mark.pii,
            piiCategories: mark.categories,
            tsConfig: c.tsConfig,
            embedding: c.embedding,
          };
        }),
      );
      return [[assertion.key, 'episode']];
    }
  }
}

function assertionKind(raw: unknown): string {
  if (raw && typeof raw === 'object') {
    const keys = Object.entries(raw as Record<string, unknown>)
      .filter(([, v]) => v != null)
      .map(([k]) => k);
    if (keys.length === 1) return keys[0]!;
  }
  return 'assertion';
}
