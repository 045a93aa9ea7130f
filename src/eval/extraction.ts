/**
 * The extraction evaluation: a set of messages with the facts a careful reader would record
 * (subject/predicate/object keys after resolution) is written through the real services, and
 * what the gateway learned is scored per evidence class and language. A learned fact counts
 * once per message it cites: right when that message expects it. Rules run offline in one
 * namespace; the model (any OpenAI-compatible endpoint in the environment) in another with
 * rules off, so each class is scored alone.
 */
import { readFileSync } from 'node:fs';
import { type App, createApp } from '../app.js';
import { LOCAL_PRINCIPAL } from '../auth/principal.js';
import { parseConfig } from '../config.js';
import { createContext } from '../context.js';
import { openPglite } from '../db/pglite-database.js';
import { createLogger } from '../logger.js';
import { ExtractionWorker, listLearnedFacts } from '../modules/extraction/index.js';
import { createHashingEmbedder } from '../providers/hashing-embedder.js';
import { llmFor } from '../providers/llm.js';

export interface ExtractionSet {
  description?: string;
  pack: Record<string, unknown>;
  entities: Record<string, unknown>[];
  messages: {
    id: string;
    lang: string;
    stream: string;
    actor: string;
    text: string;
    expected: { subject: string; predicate: string; object: string }[];
  }[];
}

export interface Score {
  predicted: number;
  correct: number;
  expected: number;
  found: number;
  precision: number;
  recall: number;
}

export interface ExtractionReport {
  set: string;
  messages: number;
  expectedFacts: number;
  model: string | null;
  /** By evidence class, then `all` and each language. */
  scores: Record<string, Record<string, Score>>;
  errors: { class: string; message: string; kind: 'false-positive' | 'missed'; fact: string }[];
}

export interface ExtractionEvalOptions {
  /** MEMGATE_LLM-style model spec (openai:<model>); unset: rules only. */
  llm?: string;
  openaiBaseUrl?: string;
  openaiApiKey?: string;
  log?: (message: string) => void;
}

export async function runExtractionEval(
  file: string,
  options: ExtractionEvalOptions,
): Promise<ExtractionReport> {
  const set = JSON.parse(readFileSync(file, 'utf8')) as ExtractionSet;
  const config = parseConfig({
    MEMGATE_LOG_LEVEL: 'warn',
    MEMGATE_EMBEDDER: 'hashing:64',
    MEMGATE_LLM: options.llm,
    OPENAI_BASE_URL: options.openaiBaseUrl,
    OPENAI_API_KEY: options.openaiApiKey,
  });
  const logger = createLogger('warn', (line) => process.stderr.write(line));
  const app = await createApp(config, {
    db: await openPglite({}),
    embedder: createHashingEmbedder(64),
    logger,
    extractionWorker: false,
  });
  try {
    const report: ExtractionReport = {
      set: file,
      messages: set.messages.length,
      expectedFacts: set.messages.reduce((n, m) => n + m.expected.length, 0),
      model: null,
      scores: {},
      errors: [],
    };
    const rules = await learn(app, set, 'eval-rules', { rules: true, model: false });
    score(report, set, 'EXTRACTED', await learned(app, 'eval-rules', rules));
    const llm = llmFor(config);
    if (llm.available) {
      report.model = llm.name;
      const model = await learn(app, set, 'eval-model', { rules: false, model: true });
      options.log?.(`model extraction with ${llm.name}…`);
      await new ExtractionWorker(app.deps.db, llm, logger, { batchSize: 12 }).drain('eval-model', (round) =>
        options.log?.(`  ${round.kind} ${'jobs' in round ? round.jobs : ''}`),
      );
      score(report, set, 'INFERRED', await learned(app, 'eval-model', model));
    }
    return report;
  } finally {
    await app.close();
  }
}

type Learned = { messageId: string; triple: string }[];

/** Writes the set into `ns`; returns observation id → message id. */
async function learn(
  app: App,
  set: ExtractionSet,
  ns: string,
  settings: Record<string, unknown>,
): Promise<Map<string, string>> {
  const services = createContext(app.deps, LOCAL_PRINCIPAL).services;
  await services.domainPacks.register(set.pack);
  const ref = `${set.pack.name as string}@${set.pack.version as string}`;
  await services.domainPacks.configure(ns, [ref], false);
  await services.extraction.configure(ns, settings);
  await services.entities.upsertEntities(ns, set.entities);
  const start = Date.UTC(2025, 2, 3, 9, 0);
  const payload = await createContext(app.deps, LOCAL_PRINCIPAL).services.observations.recordObservations(
    ns,
    set.messages.map((m, i) => ({
      source: { system: 'eval', stream: m.stream, externalId: m.id },
      kind: 'message',
      occurredAt: new Date(start + i * 60_000),
      actor: { type: 'person', id: m.actor },
      content: m.text,
    })),
  );
  return new Map(payload.results.map((r) => [r.key!, set.messages[r.index]!.id]));
}

async function learned(app: App, ns: string, map: ReadonlyMap<string, string>): Promise<Learned> {
  const facts = await listLearnedFacts(app.deps.db, ns);
  return facts.flatMap((f) =>
    f.observationIds
      .filter((o) => map.has(o))
      .map((o) => ({ messageId: map.get(o)!, triple: `${f.subject} ${f.predicate} ${f.object}` })),
  );
}

function score(report: ExtractionReport, set: ExtractionSet, evidence: string, found: Learned): void {
  const scores: Record<string, Score> = {};
  const groups = ['all', ...new Set(set.messages.map((m) => m.lang))];
  for (const group of groups) {
    const messages = set.messages.filter((m) => group === 'all' || m.lang === group);
    const ids = new Set(messages.map((m) => m.id));
    const gold = new Set(
      messages.flatMap((m) => m.expected.map((e) => `${m.id}|${e.subject} ${e.predicate} ${e.object}`)),
    );
    const predicted = new Set(
      found.filter((f) => ids.has(f.messageId)).map((f) => `${f.messageId}|${f.triple}`),
    );
    const correct = [...predicted].filter((p) => gold.has(p)).length;
    scores[group] = {
      predicted: predicted.size,
      correct,
      expected: gold.size,
      found: correct,
      precision: predicted.size === 0 ? 0 : round(correct / predicted.size),
      recall: gold.size === 0 ? 0 : round(correct / gold.size),
    };
    if (group === 'all') {
      for (const p of predicted) if (!gold.has(p)) report.errors.push(errorOf(evidence, p, 'false-positive'));
      for (const g of gold) if (!predicted.has(g)) report.errors.push(errorOf(evidence, g, 'missed'));
    }
  }
  report.scores[evidence] = scores;
}

function errorOf(evidence: string, pair: string, kind: 'false-positive' | 'missed') {
  const [message, fact] = pair.split('|') as [string, string];
  return { class: evidence, message, kind, fact };
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}

export function formatExtractionReport(r: ExtractionReport): string {
  const lines = [
    `extraction evaluation: ${r.messages} messages, ${r.expectedFacts} expected facts (${r.set})`,
    `model: ${r.model ?? 'none (rules only)'}`,
    '',
    'class      group  predicted  correct  expected  precision  recall',
  ];
  for (const [evidence, groups] of Object.entries(r.scores)) {
    for (const [group, s] of Object.entries(groups)) {
      lines.push(
        `${evidence.padEnd(10)} ${group.padEnd(5)}  ${String(s.predicted).padStart(9)}  ${String(s.correct).padStart(7)}  ${String(s.expected).padStart(8)}  ${s.precision.toFixed(3).padStart(9)}  ${s.recall.toFixed(3).padStart(6)}`,
      );
    }
  }
  lines.push('', 'errors:');
  for (const e of r.errors) lines.push(`  ${e.class} ${e.message} ${e.kind}: ${e.fact}`);
  return `${lines.join('\n')}\n`;
}
