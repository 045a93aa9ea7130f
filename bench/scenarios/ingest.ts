/**
 * Ingest throughput through the GraphQL mutations, in batches (500 items by default), into a
 * namespace of their own so the read dataset stays the same for every read scenario.
 */
import { EPOCH, type Dataset } from '../generate.js';
import { observationFloorMs, postingsUpkeep } from './ingest-floor.js';
import { INGEST_NAMESPACE, type IngestScenario } from './types.js';

const RESULT = 'accepted rejected results { status code message }';
const DAY = 86_400_000;

/** Ingest keys live in the ingest namespace only: a few thousand, so facts hit repeated endpoints. */
function ingestKey(kind: string, n: number): string {
  return `${kind}:ing${n % 3000}`;
}

/**
 * Observation `i` of batch `b`. `stream` picks the generator stream: scenarios compared with one
 * another write texts of their own, since a text written twice embeds to the same vector and
 * pgvector's HNSW insert of an exact duplicate skips the graph search (see ingest-floor.ts).
 */
export function observationInput(
  ds: Dataset,
  b: number,
  i: number,
  withAssertions: boolean,
  prefix = '',
  stream = withAssertions ? 50_000_000 : 0,
) {
  const rng = ds.ingestRng(b * 100_003 + i + stream);
  const topic = rng.int(ds.text.topicCount());
  const actor = ingestKey('person', rng.int(3000));
  const occurredAt = new Date(EPOCH - rng.int(365) * DAY + i * 1000).toISOString();
  const base = {
    source: {
      system: 'bench-ingest',
      // Each scenario opens streams of its own: written into the plain scenario's streams, the
      // assertion batches' turns (random times) would fall between older ones and re-index
      // them, a cost of contextual indexing the plain batches never meet, not of assertions.
      stream: withAssertions ? `assert-stream-${b % 16}` : `${prefix}stream-${b % 16}`,
      externalId: `${prefix}${withAssertions ? 'a' : 'p'}-${b}-${i}`,
    },
    kind: 'message',
    occurredAt,
    actor: { type: 'person', id: actor },
    content: `${ds.text.name(rng)}: ${ds.text.paragraph(rng, topic, 220)}`,
  };
  if (!withAssertions) return base;
  const project = ingestKey('project', rng.int(3000));
  const service = ingestKey('service', rng.int(3000));
  return {
    ...base,
    assertions: [
      { entity: { key: project, kind: 'project', title: `Project ${ds.text.name(rng)}` } },
      {
        fact: {
          subject: actor,
          predicate: 'works_on',
          object: project,
          validFrom: occurredAt,
          evidence: 'EXTRACTED',
        },
      },
      {
        fact: {
          subject: project,
          predicate: 'depends_on',
          object: service,
          validFrom: occurredAt,
          evidence: 'EXTRACTED',
        },
      },
    ],
  };
}

const RECORD = `mutation BenchRecord($ns: String!, $observations: [ObservationInput!]!) {
  recordObservations(namespace: $ns, observations: $observations) { ${RESULT} }
}`;

export const ingestObservations: IngestScenario = {
  kind: 'ingest',
  name: 'recordObservations',
  title: 'recordObservations (plain)',
  floor: (ctx, b) => observationFloorMs(ctx, `p-${b}-`),
  postings: (ctx, b) => postingsUpkeep(ctx, `p-${b}-`),
  unit: 'observations',
  document: RECORD,
  batch: (ds, b, size) => ({
    items: size,
    variables: {
      ns: INGEST_NAMESPACE,
      observations: Array.from({ length: size }, (_, i) => observationInput(ds, b, i, false)),
    },
  }),
};

/**
 * The plain batches again with the database's durability on (fsync, full-page writes and
 * synchronous commit, as a production server runs), the floor measured the same way: the other
 * figures run on a server with durability off, which hides what each commit and page write costs.
 * Its turns go to streams and texts of their own (see `observationInput`).
 */
export const ingestObservationsDurable: IngestScenario = {
  kind: 'ingest',
  name: 'recordObservations+durable',
  title: 'recordObservations (plain), durability on',
  baseline: 'recordObservations',
  durable: true,
  floor: (ctx, b) => observationFloorMs(ctx, `durable-p-${b}-`),
  unit: 'observations',
  document: RECORD,
  batch: (ds, b, size) => ({
    items: size,
    variables: {
      ns: INGEST_NAMESPACE,
      observations: Array.from({ length: size }, (_, i) =>
        observationInput(ds, b, i, false, 'durable-', 30_000_000),
      ),
    },
  }),
};

export const ingestObservationsWithAssertions: IngestScenario = {
  kind: 'ingest',
  name: 'recordObservations+assertions',
  title: 'recordObservations (1 entity + 2 facts each)',
  unit: 'observations',
  document: RECORD,
  batch: (ds, b, size) => ({
    items: size,
    variables: {
      ns: INGEST_NAMESPACE,
      observations: Array.from({ length: size }, (_, i) => observationInput(ds, b, i, true)),
    },
  }),
};

const SECTIONS = ['Overview', 'Design', 'Operations', 'Decisions'];

/** Documents of four ~300-character sections (one chunk each): a batch of 500 documents writes 2000 chunks. */
export const ingestDocuments: IngestScenario = {
  kind: 'ingest',
  name: 'retainDocuments',
  title: 'retainDocuments (4 sections each, embedded offline)',
  unit: 'documents',
  document: `mutation BenchRetain($ns: String!, $documents: [DocumentInput!]!) {
  retainDocuments(namespace: $ns, documents: $documents) { ${RESULT} }
}`,
  batch: (ds, b, size) => {
    const count = size;
    return {
      items: count,
      variables: {
        ns: INGEST_NAMESPACE,
        documents: Array.from({ length: count }, (_, i) => {
          const n = b * count + i;
          const rng = ds.ingestRng(70_000_000 + n);
          const topic = rng.int(ds.text.topicCount());
          return {
            key: `doc:ing${n}`,
            title: `${ds.text.name(rng)} notes ${n}`,
            content: SECTIONS.map((h) => `## ${h}\n\n${ds.text.paragraph(rng, topic, 300)}`).join('\n\n'),
            kind: 'document',
            sourcePath: `ingest/doc-${n}.md`,
            meta: { team: `team-${n % 20}`, lang: 'en' },
            links: n > 0 ? [`doc:ing${rng.int(n)}`] : [],
          };
        }),
      },
    };
  },
  async derived(ctx) {
    const rows = await ctx.gateway.query<{ n: number }>(
      `/* benchCountIngestChunks */ SELECT count(*)::int AS n FROM chunks WHERE namespace = $1 AND node_key LIKE 'doc:ing%'`,
      [INGEST_NAMESPACE],
    );
    return { unit: 'chunks', count: rows[0]?.n ?? 0 };
  },
};

export const ingestFacts: IngestScenario = {
  kind: 'ingest',
  name: 'assertFacts',
  title: 'assertFacts',
  unit: 'facts',
  document: `mutation BenchAssert($ns: String!, $facts: [FactInput!]!) {
  assertFacts(namespace: $ns, facts: $facts) { ${RESULT} }
}`,
  batch: (ds, b, size) => ({
    items: size,
    variables: {
      ns: INGEST_NAMESPACE,
      facts: Array.from({ length: size }, (_, i) => {
        const rng = ds.ingestRng(90_000_000 + b * 100_003 + i);
        return {
          subject: ingestKey('service', rng.int(3000)),
          predicate: 'depends_on',
          object: ingestKey('service', rng.int(3000)),
          validFrom: new Date(EPOCH - rng.int(365 * 86_400) * 1000).toISOString(),
          evidence: 'ASSERTED',
          confidence: 0.9,
        };
      }),
    },
  }),
};
