/**
 * A scenario is one measured operation. The runner validates its GraphQL documents against
 * the schema first and skips it, with the validation message as the note, when a field it
 * needs has not landed yet — so the suite runs today and grows as the API does.
 */
import type { BenchBackend } from '../database.js';
import type { Dataset } from '../generate.js';
import type { GatewayProcess } from '../gateway-process.js';
import type { GqlAnswer } from '../http-load.js';

export interface ScenarioContext {
  ds: Dataset;
  backend: BenchBackend;
  quick: boolean;
  gateway: GatewayProcess;
  gql(query: string, variables?: Record<string, unknown>): Promise<GqlAnswer>;
  log(msg: string): void;
}

/** Thrown by a setup step that cannot prepare its scenario; the runner records the reason. */
export class SkipScenario extends Error {}

export interface ReadScenario {
  kind: 'read';
  name: string;
  /** What is measured, as printed in the tables. */
  title: string;
  document: string;
  /** Client counts to measure at, when not the run's (hub scenarios: one client). */
  concurrency?: number[];
  /** Operations sent by `setup`; validated like `document`. */
  setupDocuments?: string[];
  /** Variables of request `i`: deterministic, varied (queries, anchors). */
  variables(ds: Dataset, i: number): Record<string, unknown>;
  /** Prepares the data the operation needs through the API; may return a note for the report. */
  setup?(ctx: ScenarioContext): Promise<string | undefined>;
}

export interface IngestBatch {
  variables: Record<string, unknown>;
  items: number;
}

export interface IngestScenario {
  kind: 'ingest';
  name: string;
  title: string;
  /** What one item of a batch is: observations, documents, facts… */
  unit: string;
  document: string;
  /** Batch `b` (0-based) of `size` items, deterministic. */
  batch(ds: Dataset, b: number, size: number): IngestBatch;
  /** Rows the batches produced that are worth a rate of their own (chunks of documents). */
  derived?(ctx: ScenarioContext): Promise<{ unit: string; count: number } | null>;
  /** The same rows as batch `b` inserted by hand (see ingest-floor.ts): milliseconds, NaN when none. */
  floor?(ctx: ScenarioContext, b: number): Promise<number>;
  /** Batch `b`'s chunks inserted with and without their postings (see ingest-floor.ts). */
  postings?(ctx: ScenarioContext, b: number): Promise<PostingsUpkeep | null>;
  /** A whole run of its own instead of `batches` × `batch` (the bulk import: begin, load, finish). */
  run?(ctx: ScenarioContext, batchSize: number): Promise<IngestRun>;
  /** Operations sent by `setup`; validated like `document`. */
  setupDocuments?: string[];
  /** Prepares the namespace through the API (a pack, settings); may return a note for the report. */
  setup?(ctx: ScenarioContext): Promise<string | undefined>;
  /**
   * The scenario this one is compared with: when both run, their batches alternate in rounds
   * (so drift in the machine's load falls on both alike) and the figure carries its rate ÷ the
   * baseline's, overall and paired by round.
   */
  baseline?: string;
  /**
   * Batches (and their floor) run with the database's durability on, as production runs it
   * (see `withDurability` in the runner); native PostgreSQL only, skipped on PGlite.
   */
  durable?: boolean;
  /** Runs only when named in --only (not in the full suite). */
  optIn?: boolean;
  /** Needs the gateway started with a model configured (the local stand-in). */
  model?: boolean;
  /** Before each timed batch, untimed (switch the gateway the batch is sent to…). */
  beforeBatch?(ctx: ScenarioContext): Promise<void>;
  /** After each timed batch, untimed: the work the batch left to a background worker, drained. */
  afterBatch?(ctx: ScenarioContext, b: number): Promise<Drained | undefined>;
}

/** One batch's chunks inserted with and without the postings CTEs (medians over rounds). */
export interface PostingsUpkeep {
  chunks: number;
  withMs: number;
  withoutMs: number;
}

/** Work a batch left to a background worker (model-extraction jobs), drained after the batch. */
export interface Drained {
  unit: string;
  count: number;
  /** How long the worker took over it (after the batch's answer). */
  ms: number;
}

/** What a scenario with its own `run` measured. */
export interface IngestRun {
  items: number;
  ms: number;
  batchMs: number[];
  statements: number[];
  rejected: number;
  firstRejection?: string;
  /** Named phases of the run worth reporting (index build…), in milliseconds. */
  phases: Record<string, number>;
}

export type Scenario = ReadScenario | IngestScenario;

export const INGEST_NAMESPACE = 'bench-ingest';
