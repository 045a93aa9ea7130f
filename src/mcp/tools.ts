import { z } from 'zod';
import { notFound } from '../errors.js';
import { contextInputSchema } from '../modules/retrieval/index.js';
import { factInputSchema } from '../modules/facts/index.js';
import { entityFactsArgs } from '../kernel/entity-facts.js';
import { observationInputSchema } from '../modules/observations/index.js';
import { MAX_PAGE_SIZE } from '../kernel/pagination.js';
import { searchInputSchema } from '../modules/retrieval/index.js';
import { keySchema, namespaceSchema } from '../kernel/validation.js';

/**
 * The MCP tools. Each is one GraphQL operation run through the gateway with the caller's
 * credentials, so a tool reaches the services by the same road as a GraphQL client: the same
 * authentication, namespace checks, visibility predicates, limits, PII masking and audit.
 * The input schema of a tool is built from the zod schemas the services validate with; the
 * JSON Schema a client lists is printed from it (json-schema.ts).
 */
export interface McpTool {
  name: string;
  title: string;
  description: string;
  input: z.ZodObject;
  /** Reads only (MCP's readOnlyHint). */
  readOnly: boolean;
  /** One named GraphQL operation; the tool's arguments become its variables. */
  document: string;
  variables?: (args: Record<string, unknown>) => Record<string, unknown>;
  /** Shapes the operation's data for the agent; throws a coded error (e.g. NOT_FOUND). */
  result: (data: Record<string, unknown>, args: Record<string, unknown>) => ToolOutput;
}

export interface ToolOutput {
  /** Text for the model, when it differs from the JSON of `structured`. */
  text?: string;
  /**
   * With `text`: what else the model needs to go on (ids to cite, the trace id), sent as a second
   * text block, since many clients hand the model the text content only.
   */
  footer?: Record<string, unknown>;
  structured: Record<string, unknown>;
}

const WRITE_PAYLOAD = 'accepted rejected results { index status id key code message }';

const FACT_FIELDS =
  'id factId predicate subject { key title } object { key title } validFrom validTo status evidence confidence conflict scopes';

/** A root field that is null because the row is absent or not visible: both read the same. */
function present<T>(value: T | null | undefined, what: string): T {
  if (value === null || value === undefined) throw notFound(what);
  return value;
}

interface PackData {
  context: {
    text: string;
    traceId: string;
    tokenEstimate: number;
    warnings: string[];
    emptyReason: string | null;
    conflicts: string[];
    budget: { maxTokens: number; used: number; truncated: boolean };
    sections: { kind: string; items: { id: string; kind: string; title: string | null }[] }[];
  };
}

interface EntityData {
  title: string;
  attributes: unknown;
  version: { title: string; attributes: unknown; validFrom: string; validTo: string | null } | null;
  facts: { totalCount: number; edges: { node: unknown }[] };
}

export const MCP_TOOLS: readonly McpTool[] = [
  {
    name: 'get_context',
    title: 'Get context',
    description:
      'Compiles a ContextPack: what an agent should know now for a query, under a token budget ' +
      '(budgetTokens) with a retrieval strategy (HYBRID, SEMANTIC, EXACT, GRAPH, BRIEFING, AUTO). ' +
      'Returns the pack text, the ids of its items (for trace_provenance) and a traceId (for explain_context).',
    input: contextInputSchema,
    readOnly: true,
    document: `query McpGetContext($input: ContextInput!) {
      context(input: $input) {
        text traceId tokenEstimate warnings emptyReason conflicts
        budget { maxTokens used truncated }
        sections { kind items { id kind title } }
      }
    }`,
    variables: (args) => ({ input: args }),
    result: (data) => {
      const pack = (data as unknown as PackData).context;
      const items = pack.sections.flatMap((s) =>
        s.items.filter((i) => i.kind !== 'current').map((i) => ({ ...i, section: s.kind })),
      );
      return {
        text: pack.text || `(empty pack: ${pack.emptyReason ?? 'nothing found'})`,
        footer: { traceId: pack.traceId, items, tokenEstimate: pack.tokenEstimate, warnings: pack.warnings },
        structured: {
          text: pack.text,
          traceId: pack.traceId,
          itemIds: items.map((i) => i.id),
          items,
          tokenEstimate: pack.tokenEstimate,
          budget: pack.budget,
          warnings: pack.warnings,
          conflicts: pack.conflicts,
          emptyReason: pack.emptyReason,
        },
      };
    },
  },
  {
    name: 'search_memory',
    title: 'Search memory',
    description:
      'Hybrid search (vector + lexical + exact identifiers, fused) over the chunks of some namespaces; ' +
      'returns numbered context text, the hits with their entity, and the sources.',
    input: searchInputSchema,
    readOnly: true,
    document: `query McpSearchMemory($input: SearchInput!) {
      search(input: $input) {
        context mode
        hits { score chunk { id text title heading node { key kind title } } }
        sources { namespace key title }
      }
    }`,
    variables: (args) => ({ input: args }),
    result: (data) => {
      const search = data.search as {
        context: string;
        hits: { score: number; chunk: { id: string; node: { key: string } } }[];
        sources: unknown[];
      };
      return {
        text: search.context || '(no hits)',
        footer: {
          hits: search.hits.map((h) => ({ id: h.chunk.id, entity: h.chunk.node.key, score: h.score })),
          sources: search.sources,
        },
        structured: data.search as Record<string, unknown>,
      };
    },
  },
  {
    name: 'record_observations',
    title: 'Record observations',
    description:
      'Records observations (immutable events from a source: a message, a ticket, a note). A repeat is ' +
      'DUPLICATE and changes nothing; each item answers for itself (status, id, code, message). Plain ' +
      'text is enough: domain-pack extractors turn it into EXTRACTED facts at once, and when a model is ' +
      'configured, INFERRED facts appear asynchronously, seconds later (extractionStatus shows the queue); ' +
      'every learned fact cites the observation it was read from.',
    input: z.object({ namespace: namespaceSchema, observations: z.array(observationInputSchema) }),
    readOnly: false,
    document: `mutation McpRecordObservations($namespace: String!, $observations: [ObservationInput!]!) {
      recordObservations(namespace: $namespace, observations: $observations) { ${WRITE_PAYLOAD} }
    }`,
    result: (data) => ({ structured: data.recordObservations as Record<string, unknown> }),
  },
  {
    name: 'assert_facts',
    title: 'Assert facts',
    description:
      'Asserts facts (subject —predicate→ object, valid from/to). An existing fact is REINFORCED; ' +
      'a conflicting one is kept and flagged. Each item answers for itself.',
    input: z.object({ namespace: namespaceSchema, facts: z.array(factInputSchema) }),
    readOnly: false,
    document: `mutation McpAssertFacts($namespace: String!, $facts: [FactInput!]!) {
      assertFacts(namespace: $namespace, facts: $facts) { ${WRITE_PAYLOAD} }
    }`,
    result: (data) => ({ structured: data.assertFacts as Record<string, unknown> }),
  },
  {
    name: 'supersede_fact',
    title: 'Supersede a fact',
    description:
      "Replaces an ACTIVE fact by a new one: the old fact's validity closes at the new one's validFrom " +
      '(default now) and it becomes SUPERSEDED; nothing is deleted.',
    input: z.object({ namespace: namespaceSchema, factId: z.string().min(1).max(128), by: factInputSchema }),
    readOnly: false,
    document: `mutation McpSupersedeFact($namespace: String!, $factId: String!, $by: FactInput!) {
      supersedeFact(namespace: $namespace, factId: $factId, by: $by) { ${WRITE_PAYLOAD} }
    }`,
    result: (data) => ({ structured: data.supersedeFact as Record<string, unknown> }),
  },
  {
    name: 'get_entity',
    title: 'Get an entity',
    description:
      'One entity by key: its title and attributes as of a time (asOf, default now; both null if the entity ' +
      'had no version then) and the facts it is an endpoint of (valid at asOf; every version with includeHistory).',
    input: z
      .object({
        namespace: namespaceSchema,
        key: keySchema,
        first: z.number().int().min(1).max(MAX_PAGE_SIZE).nullish(),
      })
      .extend(entityFactsArgs.shape),
    readOnly: true,
    document: `query McpGetEntity($namespace: String!, $key: String!, $asOf: DateTime, $first: Int,
        $predicates: [String!], $direction: Direction, $includeHistory: Boolean) {
      entity(namespace: $namespace, key: $key) {
        id key kind title scopes stale placeholder attributes
        version(asOf: $asOf) { title attributes validFrom validTo }
        facts(asOf: $asOf, first: $first, predicates: $predicates, direction: $direction,
              includeHistory: $includeHistory) {
          totalCount
          edges { node { ${FACT_FIELDS} } }
        }
      }
    }`,
    variables: (args) => ({ first: 20, ...args }),
    result: (data, args) => {
      const { version, facts, ...entity } = present(
        data.entity as EntityData | null,
        `No entity "${String(args.key)}" in namespace "${String(args.namespace)}".`,
      );
      return {
        structured: {
          ...entity,
          // With asOf, the title and attributes of the version in force then, not today's.
          title: args.asOf == null ? entity.title : (version?.title ?? null),
          attributes: args.asOf == null ? entity.attributes : (version?.attributes ?? null),
          ...(args.asOf != null && version?.title !== entity.title ? { currentTitle: entity.title } : {}),
          version: version ? { validFrom: version.validFrom, validTo: version.validTo } : null,
          facts: facts.edges.map((e) => e.node),
          factCount: facts.totalCount,
        },
      };
    },
  },
  {
    name: 'trace_provenance',
    title: 'Trace provenance',
    description:
      'The chain from a fact, chunk, entity or observation (by the id get_context or search_memory gave) ' +
      'down to the observations and source documents it rests on.',
    input: z.object({ id: z.string().min(1).max(1024) }),
    readOnly: true,
    document: `query McpTraceProvenance($id: ID!) {
      provenance(id: $id) {
        truncated
        steps { depth kind id label uri at metadata source { system stream externalId } }
      }
    }`,
    result: (data) => ({ structured: data.provenance as Record<string, unknown> }),
  },
  {
    name: 'explain_context',
    title: 'Explain a context pack',
    description:
      'The persisted trace of a get_context call: per channel what was found, and per candidate why it was ' +
      'included, dropped or blocked (OVER_BUDGET, DUPLICATE, OUT_OF_SCOPE…).',
    input: z.object({ namespace: namespaceSchema, traceId: z.string().min(1).max(128) }),
    readOnly: true,
    document: `query McpExplainContext($namespace: String!, $traceId: String!) {
      contextTrace(namespace: $namespace, traceId: $traceId) { traceId createdAt kind request channels decisions }
    }`,
    result: (data, args) => ({
      structured: present(
        data.contextTrace as Record<string, unknown> | null,
        `No context trace "${String(args.traceId)}" in namespace "${String(args.namespace)}".`,
      ),
    }),
  },
];
