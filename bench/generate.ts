/**
 * The deterministic synthetic dataset: entities with power-law fact degrees, bi-temporal facts
 * with supersessions and conflicts, observations (grouped into episodes) that mention entities
 * and are the evidence of facts, and Markdown documents cut into chunks. Every row is a pure
 * function of (seed, size), so two runs — on PGlite or on PostgreSQL — hold the same data.
 *
 * Rows come out of generators in insertion order; `load.ts` writes them in bulk with SQL.
 */
import { factId, observationId } from '../src/domain/ids.js';
import { Rng, Zipf, permutation } from './rng.js';
import type { TextModel } from './text-model.js';

export const BENCH_NAMESPACE = 'bench';
/** "Now" of the synthetic world; fixed so ids (which hash validFrom) are stable. */
export const EPOCH = Date.parse('2026-01-01T00:00:00Z');
const DAY = 86_400_000;
const HISTORY_DAYS = 730;

export type SizeName = 'quick' | 'S' | 'L';

export interface SizeSpec {
  name: SizeName;
  chunks: number;
  entities: number;
  facts: number;
}

export const SIZES: Record<SizeName, SizeSpec> = {
  quick: { name: 'quick', chunks: 2_000, entities: 2_000, facts: 10_000 },
  S: { name: 'S', chunks: 10_000, entities: 10_000, facts: 50_000 },
  L: { name: 'L', chunks: 100_000, entities: 100_000, facts: 500_000 },
};

/** Share of chunks that are observation content (the rest are document sections). */
const OBSERVATION_CHUNK_SHARE = 0.2;
const OBSERVATIONS_PER_EPISODE = 10;
const SECTIONS = ['Overview', 'Design', 'Operations', 'Decisions'] as const;
/** Zipf exponent of fact endpoints: with 100k entities the top hub gets ~10k facts. */
const DEGREE_EXPONENT = 0.7;

type Kind = 'document' | 'episode' | 'person' | 'project' | 'service' | 'team' | 'topic' | 'ticket';
const OTHER_KINDS: ReadonlyArray<[Kind, number]> = [
  ['person', 0.3],
  ['project', 0.15],
  ['service', 0.25],
  ['team', 0.05],
  ['topic', 0.15],
  ['ticket', 0.1],
];

interface Relation {
  predicate: string;
  to: Kind;
  weight: number;
  single?: boolean;
}

/** The relations of the synthetic domain; `single` ones are single-valued (supersession, conflicts). */
export const RELATIONS: Readonly<Record<string, readonly Relation[]>> = {
  person: [
    { predicate: 'works_on', to: 'project', weight: 0.35 },
    { predicate: 'member_of', to: 'team', weight: 0.15, single: true },
    { predicate: 'reports_to', to: 'person', weight: 0.15, single: true },
    { predicate: 'knows', to: 'person', weight: 0.2 },
    { predicate: 'owns', to: 'service', weight: 0.15 },
  ],
  project: [
    { predicate: 'depends_on', to: 'service', weight: 0.5 },
    { predicate: 'relates_to', to: 'topic', weight: 0.3 },
    { predicate: 'owned_by', to: 'team', weight: 0.2, single: true },
  ],
  service: [
    { predicate: 'depends_on', to: 'service', weight: 0.6 },
    { predicate: 'relates_to', to: 'topic', weight: 0.2 },
    { predicate: 'owned_by', to: 'team', weight: 0.2, single: true },
  ],
  team: [{ predicate: 'works_on', to: 'project', weight: 1 }],
  topic: [{ predicate: 'relates_to', to: 'topic', weight: 1 }],
  ticket: [
    { predicate: 'about', to: 'service', weight: 0.5 },
    { predicate: 'blocks', to: 'ticket', weight: 0.3 },
    { predicate: 'assigned_to', to: 'person', weight: 0.2, single: true },
  ],
};
export const SINGLE_VALUED = Object.values(RELATIONS)
  .flat()
  .filter((r) => r.single)
  .map((r) => r.predicate);

export interface EntityGen {
  key: string;
  kind: string;
  title: string;
  attributes: Record<string, unknown>;
  scopes: string[];
  sourcePath: string | null;
  content: string | null;
  meta: Record<string, unknown> | null;
  provenance: Record<string, unknown> | null;
  createdAt: Date;
}

export interface EntityVersionGen {
  key: string;
  validFrom: Date;
  validTo: Date | null;
  title: string;
  attributes: Record<string, unknown>;
}

export interface ObservationGen {
  observationId: string;
  stream: string;
  externalId: string;
  kind: string;
  occurredAt: Date;
  recordedAt: Date;
  actorKey: string;
  content: string;
  sessionId: string;
}

export interface MentionGen {
  entityKey: string;
  observationId: string;
  role: string;
}

export interface FactGen {
  factId: string;
  subject: string;
  predicate: string;
  object: string;
  validFrom: Date;
  validTo: Date | null;
  recordedAt: Date;
  evidence: 'ASSERTED' | 'EXTRACTED' | 'INFERRED' | 'DERIVED';
  confidence: number;
  status: 'ACTIVE' | 'SUPERSEDED';
  conflict: boolean;
  conflictsWith: string[];
  supersedes: string | null;
  supersededBy: string | null;
  observationIds: string[];
}

export interface ChunkGen {
  nodeKey: string;
  order: number;
  kind: string;
  title: string;
  heading: string | null;
  text: string;
  searchText: string;
  /** What the embedder sees: "<title> — <heading>\n<text>". */
  embeddingText: string;
  sourcePath: string | null;
  meta: Record<string, unknown>;
  scopes: string[];
  observationId: string | null;
  occurredAt: Date | null;
}

interface DocumentGen {
  title: string;
  topic: number;
  sections: { heading: string; text: string }[];
  identifier: string | null;
  team: string;
  tier: string;
  scopes: string[];
}

/** One seeded stream per (purpose, item), so any row can be rebuilt alone, in any order. */
export function itemRng(seed: number, stream: number, index: number): Rng {
  let h =
    Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^
    Math.imul(stream + 1, 0xc2b2ae35) ^
    Math.imul(index, 0x27d4eb2f);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return new Rng(h >>> 0 || 1);
}

const S_DOC = 1;
const S_ENTITY = 2;
const S_OBS = 3;
const S_QUERY = 4;
const S_ANCHOR = 5;
const S_KIND = 6;
const S_INGEST = 7;

export class Dataset {
  readonly namespace = BENCH_NAMESPACE;
  readonly documents: number;
  readonly observations: number;
  readonly episodes: number;
  readonly others: number;
  readonly documentChunks: number;
  private readonly kinds: Kind[];
  private readonly byKind = new Map<Kind, number[]>();
  private readonly kindSamplers = new Map<Kind, Zipf>();
  private readonly subjectOrder: Uint32Array;
  private readonly subjectZipf: Zipf;
  private observationIds: string[] | null = null;

  constructor(
    readonly size: SizeSpec,
    readonly seed: number,
    readonly text: TextModel,
  ) {
    this.observations = Math.round(size.chunks * OBSERVATION_CHUNK_SHARE);
    this.documentChunks = size.chunks - this.observations;
    this.documents = Math.ceil(this.documentChunks / SECTIONS.length);
    this.episodes = Math.ceil(this.observations / OBSERVATIONS_PER_EPISODE);
    this.others = size.entities - this.documents - this.episodes;
    if (this.others < 100) throw new Error(`bench: size ${size.name} leaves too few graph entities`);

    this.kinds = [];
    for (let i = 0; i < this.documents; i++) this.kinds.push('document');
    for (let i = 0; i < this.episodes; i++) this.kinds.push('episode');
    for (let i = 0; i < this.others; i++) {
      const rng = itemRng(seed, S_KIND, i);
      let u = rng.float();
      let kind: Kind = 'person';
      for (const [k, w] of OTHER_KINDS) {
        if (u < w) {
          kind = k;
          break;
        }
        u -= w;
      }
      this.kinds.push(kind);
    }
    this.kinds.forEach((kind, i) => {
      const list = this.byKind.get(kind) ?? [];
      list.push(i);
      this.byKind.set(kind, list);
    });
    // Hubs are spread over the key space: Zipf rank r maps to a permuted entity.
    const order = new Rng(seed ^ 0x5eed);
    for (const [kind, list] of this.byKind) {
      const perm = permutation(list.length, order);
      this.byKind.set(
        kind,
        Array.from(perm, (p) => list[p]!),
      );
      this.kindSamplers.set(kind, new Zipf(list.length, DEGREE_EXPONENT));
    }
    const firstOther = this.documents + this.episodes;
    this.subjectOrder = Uint32Array.from(permutation(this.others, order), (p) => p + firstOther);
    this.subjectZipf = new Zipf(this.others, DEGREE_EXPONENT);
  }

  get entities(): number {
    return this.kinds.length;
  }

  kindOf(i: number): string {
    return this.kinds[i]!;
  }

  keyOf(i: number): string {
    const kind = this.kinds[i]!;
    const prefix = kind === 'document' ? 'doc' : kind;
    return `${prefix}:${kind.charAt(0)}${String(i).padStart(6, '0')}`;
  }

  titleOf(i: number): string {
    const kind = this.kinds[i]!;
    if (kind === 'document') return this.document(i).title;
    const rng = itemRng(this.seed, S_ENTITY, i);
    const name = this.text.name(rng);
    if (kind === 'person') return name;
    if (kind === 'episode') return `Session ${i - this.documents + 1}: ${name}`;
    return `${kind.charAt(0).toUpperCase()}${kind.slice(1)} ${name}`;
  }

  /** Entities of a kind, hubs first (Zipf rank order). */
  ofKind(kind: string): readonly number[] {
    return this.byKind.get(kind as Kind) ?? [];
  }

  private sampleOfKind(kind: Kind, rng: Rng): number {
    return this.byKind.get(kind)![this.kindSamplers.get(kind)!.sample(rng)]!;
  }

  private sampleSubject(rng: Rng): number {
    return this.subjectOrder[this.subjectZipf.sample(rng)]!;
  }

  document(d: number): DocumentGen {
    const rng = itemRng(this.seed, S_DOC, d);
    const topic = rng.int(this.text.topicCount());
    const topicWords = this.text.topicWords(topic);
    const title = `${cap(rng.pick(topicWords))} ${rng.pick(topicWords)} ${rng.pick(['guide', 'notes', 'runbook', 'design', 'review'])}`;
    const identifier = rng.chance(0.1)
      ? rng.chance(0.5)
        ? `ERR-${1000 + rng.int(9000)}`
        : `${rng.pick(topicWords)}_${rng.pick(topicWords)}_handler`
      : null;
    const sections = SECTIONS.map((heading, s) => {
      let text = this.text.paragraph(rng, topic, 300);
      if (identifier && s === 1) text += ` See ${identifier} for the details.`;
      return { heading, text };
    });
    return {
      title: `${title} ${d}`,
      topic,
      sections,
      identifier,
      team: `team-${d % 20}`,
      tier: rng.pick(['gold', 'silver', 'bronze']),
      scopes: rng.chance(0.3) ? [`project:p${d % 50}`] : [],
    };
  }

  *entityRows(): Generator<EntityGen> {
    for (let i = 0; i < this.kinds.length; i++) {
      const kind = this.kinds[i]!;
      const rng = itemRng(this.seed, S_ENTITY, i + 1_000_000_000);
      const createdAt = new Date(EPOCH - (HISTORY_DAYS + 30) * DAY + rng.int(30 * DAY));
      if (kind === 'document') {
        const doc = this.document(i);
        const path = `docs/${this.keyOf(i).slice(4)}.md`;
        yield {
          key: this.keyOf(i),
          kind,
          title: doc.title,
          attributes: { tier: doc.tier },
          scopes: doc.scopes,
          sourcePath: path,
          content: doc.sections.map((s) => `## ${s.heading}\n\n${s.text}`).join('\n\n'),
          meta: { team: doc.team, tier: doc.tier, lang: 'en' },
          provenance: { repository: 'bench/docs', path, commit: 'bench' },
          createdAt,
        };
        continue;
      }
      yield {
        key: this.keyOf(i),
        kind,
        title: this.titleOf(i),
        attributes: attributesFor(kind, rng),
        scopes: [],
        sourcePath: null,
        content: null,
        meta: null,
        provenance: null,
        createdAt,
      };
    }
  }

  /** One attribute version per entity, and a second (a title change) for one in ten. */
  *entityVersionRows(): Generator<EntityVersionGen> {
    for (const e of this.entityRows()) {
      const rng = itemRng(this.seed, S_ENTITY, hashKey(e.key));
      if (e.kind !== 'document' && rng.chance(0.1)) {
        const changedAt = new Date(e.createdAt.getTime() + rng.between(30, HISTORY_DAYS) * DAY);
        yield {
          key: e.key,
          validFrom: e.createdAt,
          validTo: changedAt,
          title: `${e.title} (old)`,
          attributes: e.attributes,
        };
        yield { key: e.key, validFrom: changedAt, validTo: null, title: e.title, attributes: e.attributes };
      } else {
        yield { key: e.key, validFrom: e.createdAt, validTo: null, title: e.title, attributes: e.attributes };
      }
    }
  }

  private episodeIndex(j: number): number {
    return this.documents + Math.floor(j / OBSERVATIONS_PER_EPISODE);
  }

  observation(j: number): ObservationGen & { topic: number } {
    const rng = itemRng(this.seed, S_OBS, j);
    const episode = this.episodeIndex(j);
    const stream = this.keyOf(episode);
    const externalId = `msg-${j}`;
    const spacing = (HISTORY_DAYS * DAY) / this.episodes;
    const occurredAt = new Date(
      EPOCH -
        Math.round((this.episodes - (episode - this.documents)) * spacing) +
        (j % OBSERVATIONS_PER_EPISODE) * 90_000,
    );
    const actor = this.sampleOfKind('person', rng);
    const topic = rng.int(this.text.topicCount());
    const content = `${this.titleOf(actor)}: ${this.text.paragraph(rng, topic, 220)}`;
    return {
      observationId: observationId(
        this.namespace,
        { system: 'bench', stream, externalId },
        {
          kind: 'message',
          occurredAt,
        },
      ),
      stream,
      externalId,
      kind: 'message',
      occurredAt,
      recordedAt: new Date(occurredAt.getTime() + 5_000),
      actorKey: this.keyOf(actor),
      content,
      sessionId: stream,
      topic,
    };
  }

  observationIdOf(j: number): string {
    if (!this.observationIds) {
      this.observationIds = Array.from({ length: this.observations }, (_, k) =>
        observationId(
          this.namespace,
          { system: 'bench', stream: this.keyOf(this.episodeIndex(k)), externalId: `msg-${k}` },
          { kind: 'message', occurredAt: new Date(0) },
        ),
      );
    }
    return this.observationIds[j]!;
  }

  *observationRows(): Generator<ObservationGen> {
    for (let j = 0; j < this.observations; j++) yield this.observation(j);
  }

  /** The actor, and two more entities each observation mentions. */
  *mentionRows(): Generator<MentionGen> {
    for (let j = 0; j < this.observations; j++) {
      const o = this.observation(j);
      const rng = itemRng(this.seed, S_OBS, j + 1_000_000_000);
      const seen = new Set<string>([o.actorKey]);
      yield { entityKey: o.actorKey, observationId: o.observationId, role: 'actor' };
      for (let m = 0; m < 2; m++) {
        const key = this.keyOf(this.sampleSubject(rng));
        if (seen.has(key)) continue;
        seen.add(key);
        yield { entityKey: key, observationId: o.observationId, role: 'mention' };
      }
    }
  }

  /**
   * `size.facts` facts. Subjects are Zipf-distributed over all graph entities, objects over the
   * relation's target kind; one in four single-valued facts comes with its supersession (the
   * old fact closed at the new one's validFrom, linked both ways), 3% as an open conflict.
   * 4% are LINKS_TO edges between documents.
   */
  *factRows(): Generator<FactGen> {
    const rng = new Rng(this.seed ^ 0xfac7);
    const seen = new Set<string>();
    let emitted = 0;
    const make = (s: string, p: string, o: string, validFrom: Date): FactGen | null => {
      const id = factId(this.namespace, s, p, o, validFrom);
      if (seen.has(id)) return null;
      seen.add(id);
      const evidenceRoll = rng.float();
      const evidence =
        evidenceRoll < 0.5
          ? 'ASSERTED'
          : evidenceRoll < 0.85
            ? 'EXTRACTED'
            : evidenceRoll < 0.95
              ? 'INFERRED'
              : 'DERIVED';
      const observationIds =
        this.observations === 0
          ? []
          : Array.from({ length: rng.between(1, 2) }, () => this.observationIdOf(rng.int(this.observations)));
      return {
        factId: id,
        subject: s,
        predicate: p,
        object: o,
        validFrom,
        validTo: null,
        recordedAt: new Date(validFrom.getTime() + rng.int(3 * DAY)),
        evidence,
        confidence: Math.round((0.5 + rng.float() * 0.5) * 1000) / 1000,
        status: 'ACTIVE',
        conflict: false,
        conflictsWith: [],
        supersedes: null,
        supersededBy: null,
        observationIds: [...new Set(observationIds)],
      };
    };
    const randomTime = () =>
      new Date(EPOCH - HISTORY_DAYS * DAY + Math.floor(rng.float() * HISTORY_DAYS * 86_400) * 1000);

    while (emitted < this.size.facts) {
      const remaining = this.size.facts - emitted;
      if (this.documents > 1 && rng.chance(0.04)) {
        const a = this.sampleOfKind('document', rng);
        const b = this.sampleOfKind('document', rng);
        if (a === b) continue;
        const f = make(this.keyOf(a), 'LINKS_TO', this.keyOf(b), randomTime());
        if (f) {
          emitted++;
          yield f;
        }
        continue;
      }
      const subject = this.sampleSubject(rng);
      const relations = RELATIONS[this.kinds[subject]!]!;
      let u = rng.float();
      let rel = relations[0]!;
      for (const r of relations) {
        if (u < r.weight) {
          rel = r;
          break;
        }
        u -= r.weight;
      }
      const object = this.sampleOfKind(rel.to, rng);
      if (object === subject) continue;
      const s = this.keyOf(subject);
      const t1 = randomTime();
      if (rel.single && remaining >= 2 && rng.chance(0.28)) {
        const other = this.sampleOfKind(rel.to, rng);
        if (other === object || other === subject) continue;
        if (rng.chance(0.1)) {
          // An open conflict: two ACTIVE facts of a single-valued relation, overlapping.
          const a = make(s, rel.predicate, this.keyOf(object), t1);
          const b = make(
            s,
            rel.predicate,
            this.keyOf(other),
            new Date(t1.getTime() + rng.between(1, 30) * DAY),
          );
          if (!a || !b) continue;
          a.conflict = b.conflict = true;
          a.conflictsWith = [b.factId];
          b.conflictsWith = [a.factId];
          emitted += 2;
          yield a;
          yield b;
          continue;
        }
        const t2 = new Date(Math.min(t1.getTime() + rng.between(1, 300) * DAY, EPOCH - DAY));
        if (t2 <= t1) continue;
        const old = make(s, rel.predicate, this.keyOf(object), t1);
        const next = make(s, rel.predicate, this.keyOf(other), t2);
        if (!old || !next) continue;
        old.validTo = t2;
        old.status = 'SUPERSEDED';
        old.supersededBy = next.factId;
        next.supersedes = old.factId;
        emitted += 2;
        yield old;
        yield next;
        continue;
      }
      const f = make(s, rel.predicate, this.keyOf(object), t1);
      if (!f) continue;
      // A few relations simply ended.
      if (rng.chance(0.05)) f.validTo = new Date(Math.min(t1.getTime() + rng.between(1, 200) * DAY, EPOCH));
      emitted++;
      yield f;
    }
  }

  *chunkRows(): Generator<ChunkGen> {
    for (let d = 0; d < this.documents; d++) {
      const doc = this.document(d);
      const key = this.keyOf(d);
      const path = `docs/${key.slice(4)}.md`;
      for (let s = 0; s < doc.sections.length; s++) {
        if (d * SECTIONS.length + s >= this.documentChunks) return;
        const { heading, text } = doc.sections[s]!;
        yield {
          nodeKey: key,
          order: s,
          kind: 'document',
          title: doc.title,
          heading,
          text,
          searchText: `${doc.title}\n${heading}\n${text}`,
          embeddingText: `${doc.title} — ${heading}\n${text}`,
          sourcePath: path,
          meta: { team: doc.team, tier: doc.tier, lang: 'en' },
          scopes: doc.scopes,
          observationId: null,
          occurredAt: null,
        };
      }
    }
  }

  *observationChunkRows(): Generator<ChunkGen> {
    for (let j = 0; j < this.observations; j++) {
      const o = this.observation(j);
      const episode = this.episodeIndex(j);
      const title = this.titleOf(episode);
      yield {
        nodeKey: o.stream,
        order: j % OBSERVATIONS_PER_EPISODE,
        kind: 'message',
        title,
        heading: null,
        text: o.content,
        searchText: o.content,
        embeddingText: `${title}\n${o.content}`,
        sourcePath: null,
        meta: { speaker: o.actorKey },
        scopes: [],
        observationId: o.observationId,
        occurredAt: o.occurredAt,
      };
    }
  }

  /** Query `q`: three of a chunk's own topic words (sometimes its identifier), so it has real answers. */
  searchQuery(q: number): string {
    const rng = itemRng(this.seed, S_QUERY, q);
    const d = rng.int(this.documents);
    const doc = this.document(d);
    const topicWords = new Set(this.text.topicWords(doc.topic));
    const section = doc.sections[rng.int(doc.sections.length)]!;
    const words = [...new Set(section.text.toLowerCase().split(/[^a-z]+/))].filter((w) => topicWords.has(w));
    const picked: string[] = [];
    while (picked.length < 3 && words.length > 0) picked.push(words.splice(rng.int(words.length), 1)[0]!);
    if (doc.identifier && rng.chance(0.25)) picked.splice(0, 2, doc.identifier);
    return picked.join(' ') || doc.title;
  }

  /** The `i`-th biggest hub: the entity of Zipf rank `i` among fact subjects. */
  hubKey(i: number): string {
    return this.keyOf(this.subjectOrder[i % this.subjectOrder.length]!);
  }

  /** Anchor `a` of one kind, by degree rank (hubs come up often). */
  anchorOfKind(kind: string, a: number): string {
    const rng = itemRng(this.seed, S_ANCHOR, a + 1_000_000);
    return this.keyOf(this.sampleOfKind(kind as Kind, rng));
  }

  /** Anchor `a` for graph reads: half by degree (hubs come up often), half uniform over the graph. */
  anchorKey(a: number): string {
    const rng = itemRng(this.seed, S_ANCHOR, a);
    const index = rng.chance(0.5)
      ? this.sampleSubject(rng)
      : this.documents + this.episodes + rng.int(this.others);
    return this.keyOf(index);
  }

  /** Deterministic inputs for the ingest scenarios (another namespace, disjoint keys). */
  ingestRng(stream: number): Rng {
    return itemRng(this.seed, S_INGEST, stream);
  }
}

function attributesFor(kind: Kind, rng: Rng): Record<string, unknown> {
  switch (kind) {
    case 'person':
      return { role: rng.pick(['engineer', 'manager', 'analyst', 'designer']), level: rng.between(1, 7) };
    case 'service':
      return { language: rng.pick(['go', 'rust', 'typescript', 'java']), tier: rng.between(1, 3) };
    case 'ticket':
      return { state: rng.pick(['open', 'closed', 'in_progress']), priority: rng.between(1, 4) };
    case 'project':
      return { status: rng.pick(['active', 'paused', 'done']) };
    default:
      return {};
  }
}

function cap(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

function hashKey(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
