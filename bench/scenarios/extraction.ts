/**
 * What extraction adds to the online write path: recordObservations batches like the plain
 * scenario's (same sizes, drawn the same way from generator streams of their own), one message
 * in three stating something a domain pack's extractors read ("Ada works on Orbit", "Orbit uses
 * Kestrel"…), written into namespaces of their own and measured in alternating rounds with the
 * plain scenario (the runner's `baseline`):
 *
 *   recordObservations+rules   the namespace uses a pack with extractors, rule extraction on:
 *                              facts (evidence EXTRACTED) are written in the batch's transaction.
 *   recordObservations+model   the gateway has an OpenAI-compatible model configured (a local
 *                              stand-in answers it), model extraction on: every batch queues
 *                              one job per observation in its transaction. The worker (the
 *                              gateway's own, in its process) drains the queue after each
 *                              timed batch and is idle during the next: in PGlite's single
 *                              process a worker busy with the batch's jobs while its answer is
 *                              on its way would be timed with the write. The drain is reported
 *                              on its own.
 */
import type { Dataset } from '../generate.js';
import type { Rng } from '../rng.js';
import { observationInput } from './ingest.js';
import { type IngestScenario, type ScenarioContext, SkipScenario } from './types.js';

export const RULES_NAMESPACE = 'bench-ingest-rules';
export const MODEL_NAMESPACE = 'bench-ingest-model';
/** Generator streams of the two scenarios' observations (the plain scenario's is 0). */
const RULES_STREAM = 20_000_000;
const MODEL_STREAM = 30_000_000;

/** A team pack whose extractors read who works on or leads which project, what it uses, roles. */
export const BENCH_TEAM_PACK = {
  name: 'bench-team',
  version: '1.0.0',
  kinds: [{ kind: 'person', aliases: ['name'] }, { kind: 'project' }, { kind: 'vendor' }],
  relations: [
    { relation: 'leads', fromKinds: ['person'], toKinds: ['project'], cardinality: 'one' },
    { relation: 'works_on', fromKinds: ['person'], toKinds: ['project'] },
    { relation: 'uses', fromKinds: ['project'], toKinds: ['vendor'] },
  ],
  extractors: [
    {
      name: 'leads',
      pattern:
        '(?<subject>\\p{Lu}\\p{Ll}{1,30}(?: \\p{Lu}\\p{Ll}{1,30})?) (?:now )?leads (?:project )?(?<object>\\p{Lu}[\\p{L}\\d]{1,40})',
      predicate: 'leads',
      subjectKind: 'person',
      objectKind: 'project',
      confidence: 0.8,
    },
    {
      name: 'works-on',
      pattern: '(?<subject>\\p{Lu}\\p{Ll}{1,30}) works on (?<object>\\p{Lu}[\\p{L}\\d]{1,40})',
      predicate: 'works_on',
      subjectKind: 'person',
      objectKind: 'project',
    },
    {
      name: 'uses',
      pattern: '(?<subject>\\p{Lu}[\\p{L}\\d]{1,40}) (?:now )?uses (?<object>\\p{Lu}[\\p{L}\\d]{1,40})',
      predicate: 'uses',
      subjectKind: 'project',
      objectKind: 'vendor',
      confidence: 0.6,
    },
    {
      name: 'role',
      pattern: "(?<subject>\\p{Lu}\\p{Ll}{1,30})'s role is (?<value>\\p{L}{1,20}(?: \\p{L}{1,20})?)",
      attribute: 'role',
      subjectKind: 'person',
    },
  ],
};

const PEOPLE = 300;
const PROJECTS = 60;
const VENDORS = 20;
const ROLES = ['reviewer', 'tech lead', 'on call', 'release manager', 'maintainer'];

interface Names {
  people: string[];
  projects: string[];
  vendors: string[];
}

const namesOf = new WeakMap<Dataset, Names>();

/** Distinct capitalised words of the dataset's vocabulary: the team's people, projects and vendors. */
function names(ds: Dataset): Names {
  let found = namesOf.get(ds);
  if (!found) {
    const rng = ds.ingestRng(95_000_000);
    const taken = new Set<string>();
    const draw = (n: number) => {
      const out: string[] = [];
      while (out.length < n) {
        const word = ds.text.words[150 + rng.int(ds.text.words.length - 150)]!;
        const name = word.charAt(0).toUpperCase() + word.slice(1);
        if (!taken.has(name)) {
          taken.add(name);
          out.push(name);
        }
      }
      return out;
    };
    found = { people: draw(PEOPLE), projects: draw(PROJECTS), vendors: draw(VENDORS) };
    namesOf.set(ds, found);
  }
  return found;
}

/**
 * The statement message `i` of batch `b` makes, for one message in three (null otherwise):
 * who works on a project, who leads it (each project keeps its lead), what it uses, a role.
 */
export function statementSentence(ds: Dataset, b: number, i: number): string | null {
  if (i % 3 !== 0) return null;
  const { people, projects, vendors } = names(ds);
  const rng: Rng = ds.ingestRng(96_000_000 + b * 100_003 + i);
  const project = rng.int(PROJECTS);
  switch ((i / 3 + b) % 4) {
    case 0:
      return `${rng.pick(people)} works on ${projects[project]}.`;
    case 1:
      return `${people[(project * 7) % PEOPLE]} leads project ${projects[project]}.`;
    case 2:
      return `${projects[project]} uses ${rng.pick(vendors)}.`;
    default:
      return `${rng.pick(people)}'s role is ${rng.pick(ROLES)}.`;
  }
}

/**
 * Observation `i` of batch `b` drawn as the plain scenario draws its own, from generator stream
 * `stream` (texts of their own: see `observationInput`), its text opening with the statement when
 * there is one: the statement takes the place of as many leading characters of the paragraph
 * (up to the next word), so texts keep the plain scenario's lengths to within a word.
 */
export function extractionObservation(ds: Dataset, b: number, i: number, prefix: string, stream: number) {
  const base = observationInput(ds, b, i, false, prefix, stream);
  const sentence = statementSentence(ds, b, i);
  if (sentence === null) return base;
  const colon = base.content.indexOf(': ');
  const speaker = base.content.slice(0, colon);
  const paragraph = base.content.slice(colon + 2);
  const cut = paragraph.indexOf(' ', sentence.length);
  const rest = cut < 0 ? '' : paragraph.slice(cut + 1);
  return { ...base, content: `${speaker}: ${sentence}${rest ? ` ${rest}` : ''}` };
}

const RECORD = `mutation BenchRecord($ns: String!, $observations: [ObservationInput!]!) {
  recordObservations(namespace: $ns, observations: $observations) { accepted rejected results { status code message } }
}`;
const REGISTER = `mutation BenchRegisterPack($pack: JSON!) { registerDomainPack(pack: $pack) }`;
const CONFIGURE_NAMESPACE = `mutation BenchConfigureNamespace($ns: String!, $packs: [String!]!) {
  configureNamespace(namespace: $ns, packs: $packs, strict: false)
}`;
const CONFIGURE_EXTRACTION = `mutation BenchConfigureExtraction($ns: String!, $settings: JSON!) {
  configureExtraction(namespace: $ns, settings: $settings)
}`;

async function setUp(ctx: ScenarioContext, query: string, variables: Record<string, unknown>): Promise<void> {
  const answer = await ctx.gql(query, variables);
  if (answer.status !== 200 || answer.errors?.length)
    throw new SkipScenario(`set-up failed: ${answer.errors?.[0]?.message ?? `HTTP ${answer.status}`}`);
}

export const ingestObservationsWithRules: IngestScenario = {
  kind: 'ingest',
  name: 'recordObservations+rules',
  title: 'recordObservations + rule extraction (pack extractors)',
  unit: 'observations',
  document: RECORD,
  setupDocuments: [REGISTER, CONFIGURE_NAMESPACE, CONFIGURE_EXTRACTION],
  baseline: 'recordObservations',
  optIn: true,
  async setup(ctx) {
    await setUp(ctx, REGISTER, { pack: BENCH_TEAM_PACK });
    await setUp(ctx, CONFIGURE_NAMESPACE, {
      ns: RULES_NAMESPACE,
      packs: [`${BENCH_TEAM_PACK.name}@${BENCH_TEAM_PACK.version}`],
    });
    await setUp(ctx, CONFIGURE_EXTRACTION, { ns: RULES_NAMESPACE, settings: { rules: true } });
    return `pack ${BENCH_TEAM_PACK.name} (${BENCH_TEAM_PACK.extractors.length} extractors), one message in three states something it reads`;
  },
  batch: (ds, b, size) => ({
    items: size,
    variables: {
      ns: RULES_NAMESPACE,
      observations: Array.from({ length: size }, (_, i) =>
        extractionObservation(ds, b, i, 'r', RULES_STREAM),
      ),
    },
  }),
  async derived(ctx) {
    const rows = await ctx.gateway.query<{ n: number }>(
      `/* benchCountExtractedFacts */ SELECT count(*)::int AS n FROM facts WHERE namespace = $1 AND evidence = 'EXTRACTED'`,
      [RULES_NAMESPACE],
    );
    return { unit: 'EXTRACTED facts', count: rows[0]?.n ?? 0 };
  },
};

async function openJobs(ctx: ScenarioContext): Promise<number> {
  const rows = await ctx.gateway.query<{ n: number }>(
    `/* benchOpenExtractionJobs */ SELECT count(*)::int AS n FROM extraction_jobs
     WHERE namespace = $1 AND status IN ('QUEUED', 'RUNNING')`,
    [MODEL_NAMESPACE],
  );
  return rows[0]?.n ?? 0;
}

export const ingestObservationsWithModel: IngestScenario = {
  kind: 'ingest',
  name: 'recordObservations+model',
  title: 'recordObservations + model extraction queued',
  unit: 'observations',
  document: RECORD,
  setupDocuments: [CONFIGURE_EXTRACTION],
  baseline: 'recordObservations',
  optIn: true,
  model: true,
  async setup(ctx) {
    // A gateway started without the model cannot serve this scenario.
    await ctx.gateway.modelExtraction(true).catch((error: unknown) => {
      throw new SkipScenario(`no model-configured gateway: ${String(error)}`);
    });
    await ctx.gateway.modelExtraction(false);
    await setUp(ctx, CONFIGURE_EXTRACTION, { ns: MODEL_NAMESPACE, settings: { model: true } });
    return 'a local stand-in answers the model; the worker drains the queue between timed batches, not during them';
  },
  async beforeBatch(ctx) {
    const open = await openJobs(ctx);
    if (open > 0) throw new Error(`${open} extraction jobs still open before a timed batch`);
    await ctx.gateway.modelExtraction(true);
  },
  /** The worker's rounds over the batch's jobs, from the batch's answer until nothing is ready. */
  async afterBatch(ctx) {
    const started = performance.now();
    const drained = await ctx.gateway.drainExtraction();
    const ms = performance.now() - started;
    await ctx.gateway.modelExtraction(false);
    const open = await openJobs(ctx);
    if (drained.failed > 0 || open > 0)
      throw new Error(`model extraction failed for ${drained.failed} jobs (${open} still open)`);
    return { unit: 'jobs', count: drained.jobs, ms };
  },
  batch: (ds, b, size) => ({
    items: size,
    variables: {
      ns: MODEL_NAMESPACE,
      observations: Array.from({ length: size }, (_, i) =>
        extractionObservation(ds, b, i, 'm', MODEL_STREAM),
      ),
    },
  }),
};
