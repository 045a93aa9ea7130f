/**
 * The model-extraction worker. Each round claims one batch (the ready jobs of one session or
 * stream, so a turn is read with its neighbours), asks the model once with a JSON Schema (and,
 * for servers without structured output, again asking for a plain JSON object), and in one
 * transaction writes what it read through the fact path, settles the jobs and appends an audit
 * summary (model, tokens, facts). Failures never lose a job: a 429 or 503 waits what the server
 * asked (Retry-After), other failures back off exponentially, and after `maxAttempts` tries a
 * job is DEAD with its reason. A worker killed mid-batch wrote nothing; its lease runs out and
 * the batch is claimed again.
 */
import { randomUUID } from 'node:crypto';
import type { Database } from '../../db/database.js';
import type { Logger } from '../../logger.js';
import { appendAudit } from '../../kernel/store/audit-store.js';
import { type Llm, LlmError, parseJsonReply, withDeadline } from '../../providers/llm.js';
import { SchemaPolicy } from '../domain-packs/index.js';
import { allowedPredicates } from './extract-on-write.js';
import { writeLearned } from './learned-writes.js';
import { aliasAttributesOf } from './resolution.js';
import { countCall, countJobs } from './metrics.js';
import {
  EXTRACTION_JSON_SCHEMA,
  extractionPrompt,
  extractionReplySchema,
  statementsOfReply,
} from './model-prompt.js';
import { readExtractionSettings } from './settings.js';
import { findExtractionSettings } from './store/extraction-settings-store.js';
import {
  type ClaimedJob,
  claimBatch,
  finishJobs,
  releaseJobs,
  releaseOrphanedJobs,
  tokensSpentToday,
} from './store/job-store.js';
import { type JobSource, loadJobSources } from './store/source-store.js';

export interface WorkerOptions {
  /** Jobs per batch (one model call). */
  batchSize: number;
  leaseSeconds: number;
  maxAttempts: number;
  /** First retry delay; doubles with each attempt up to `maxBackoffSeconds`. */
  backoffSeconds: number;
  maxBackoffSeconds: number;
  timeoutMs: number;
  pollMs: number;
}

export const DEFAULT_WORKER_OPTIONS: WorkerOptions = {
  batchSize: 20,
  leaseSeconds: 300,
  maxAttempts: 5,
  backoffSeconds: 5,
  maxBackoffSeconds: 3600,
  timeoutMs: 60_000,
  pollMs: 2000,
};

/** What one round did. */
export type RoundOutcome =
  | { kind: 'idle' }
  | { kind: 'done'; jobs: number; facts: number }
  | { kind: 'retry' | 'dead'; jobs: number; reason: string };

interface ModelAnswer {
  content: string;
  tokensIn: number;
  tokensOut: number;
}

export class ExtractionWorker {
  readonly id = `worker-${randomUUID().slice(0, 8)}`;
  private readonly options: WorkerOptions;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = true;
  /** Set once the server refused a JSON Schema: later calls ask for a plain JSON object. */
  private schemaUnsupported = false;

  constructor(
    private readonly db: Database,
    private readonly llm: Llm,
    private readonly logger: Logger,
    options: Partial<WorkerOptions> = {},
  ) {
    this.options = { ...DEFAULT_WORKER_OPTIONS, ...options };
  }

  /**
   * On an embedded database this process owns alone, the batches a killed process left RUNNING
   * are queued again now rather than when their lease runs out; the count released.
   */
  async adoptOrphans(): Promise<number> {
    if (this.db.backend !== 'pglite') return 0;
    const released = await releaseOrphanedJobs(this.db);
    if (released > 0)
      this.logger.info('extraction jobs of a stopped process queued again', { jobs: released });
    return released;
  }

  /** Polls in the background until `stop`, first queuing again what a killed process left. */
  start(): void {
    if (!this.llm.available || !this.stopped) return;
    this.stopped = false;
    const schedule = () => {
      this.running = null;
      if (!this.stopped) this.timer = setTimeout(tick, this.options.pollMs);
    };
    const tick = () => {
      this.running = this.drain(null)
        .then(() => undefined)
        .catch((error) => this.logger.error('extraction worker round failed', { error: String(error) }))
        .finally(schedule);
    };
    this.running = this.adoptOrphans()
      .then(() => undefined)
      .catch((error) =>
        this.logger.warn('could not queue orphaned extraction jobs', { error: String(error) }),
      )
      .finally(schedule);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /** Rounds until nothing is ready (of one namespace, or any); the outcomes in order. */
  async drain(namespace: string | null, onRound?: (o: RoundOutcome) => void): Promise<RoundOutcome[]> {
    const outcomes: RoundOutcome[] = [];
    for (;;) {
      const outcome = await this.runOnce(namespace);
      if (outcome.kind === 'idle') return outcomes;
      outcomes.push(outcome);
      onRound?.(outcome);
    }
  }

  async runOnce(namespace: string | null): Promise<RoundOutcome> {
    const jobs = await claimBatch(this.db, {
      workerId: this.id,
      limit: this.options.batchSize,
      leaseSeconds: this.options.leaseSeconds,
      namespace,
    });
    if (jobs.length === 0) return { kind: 'idle' };
    const ns = jobs[0]!.namespace;
    try {
      return await this.process(ns, jobs);
    } catch (error) {
      this.logger.error('extraction batch failed', { error: String(error) });
      return this.giveBack(ns, jobs, {
        reason: 'internal: the batch could not be written',
        countAttempt: true,
      });
    }
  }

  private async process(ns: string, jobs: ClaimedJob[]): Promise<RoundOutcome> {
    const settings = readExtractionSettings(await findExtractionSettings(this.db, ns));
    if (!settings.model) return this.settle(ns, jobs, [], 'model extraction is off for this namespace');
    if (settings.tokenBudget !== null && (await tokensSpentToday(this.db, ns)) >= settings.tokenBudget) {
      return this.giveBack(ns, jobs, {
        reason: 'token budget spent: waiting for the next 24 hours',
        countAttempt: false,
        delaySeconds: 3600,
      });
    }
    const sources = await loadJobSources(this.db, ns, jobs);
    if (sources.length === 0) return this.settle(ns, jobs, [], 'nothing to read (redacted or empty)');
    const schema = await new SchemaPolicy(null).schemaFor(this.db, ns);
    const model = settings.modelName ?? this.llm.name.replace(/^openai:/, '');
    const prompt = extractionPrompt(sources, schema, { sendPii: settings.sendPii });
    let answer: ModelAnswer;
    try {
      answer = await this.ask(prompt, settings.modelName);
    } catch (error) {
      return this.afterFailure(ns, jobs, error);
    }
    countCall(ns, 'ok', answer.tokensIn, answer.tokensOut);
    let reply: ReturnType<typeof extractionReplySchema.parse>;
    try {
      reply = parseJsonReply(answer.content, extractionReplySchema);
    } catch (error) {
      countCall(ns, 'malformed', 0, 0);
      return this.giveBack(ns, jobs, { reason: reasonOf(error), countAttempt: true, tokens: answer });
    }
    const { statements, dropped } = statementsOfReply(reply, sources, model);
    const note =
      dropped > 0 ? `partial answer: ${dropped} item(s) of the reply were not valid and were skipped` : null;
    return this.settle(ns, jobs, sources, note, {
      statements,
      answer,
      model,
      allowed: allowedPredicates(schema),
      aliasAttributes: aliasAttributesOf(schema),
    });
  }

  /** Structured output first; a server that refuses it is asked for a plain JSON object. */
  private async ask(prompt: Parameters<Llm['chat']>[0], modelName: string | null): Promise<ModelAnswer> {
    const call = async (structured: boolean): Promise<ModelAnswer> => {
      const options = {
        temperature: 0,
        timeoutMs: this.options.timeoutMs,
        ...(modelName ? { model: modelName } : {}),
        ...(structured
          ? { jsonSchema: { name: 'extraction', schema: EXTRACTION_JSON_SCHEMA } }
          : { json: true }),
      };
      const pending = this.llm.chatWithUsage
        ? this.llm.chatWithUsage(prompt, options)
        : this.llm.chat(prompt, options).then((content) => ({ content, tokensIn: 0, tokensOut: 0 }));
      return withDeadline(pending, this.options.timeoutMs + 1000);
    };
    if (this.schemaUnsupported) return call(false);
    try {
      return await call(true);
    } catch (error) {
      if (
        !(error instanceof LlmError && error.reason === 'http' && [400, 404, 422].includes(error.status ?? 0))
      )
        throw error;
      this.schemaUnsupported = true;
      return call(false);
    }
  }

  private async afterFailure(ns: string, jobs: ClaimedJob[], error: unknown): Promise<RoundOutcome> {
    const llmError = error instanceof LlmError ? error : null;
    countCall(ns, llmError?.reason ?? 'error', 0, 0);
    const limited = llmError?.status === 429 || llmError?.status === 503;
    return this.giveBack(ns, jobs, {
      reason: reasonOf(error),
      countAttempt: !limited,
      delaySeconds:
        limited && llmError?.retryAfterMs !== undefined ? Math.ceil(llmError.retryAfterMs / 1000) : undefined,
    });
  }

  private async giveBack(
    ns: string,
    jobs: ClaimedJob[],
    how: { reason: string; countAttempt: boolean; delaySeconds?: number; tokens?: ModelAnswer },
  ): Promise<RoundOutcome> {
    const attempts = Math.max(...jobs.map((j) => j.attempts));
    const backoff = Math.min(
      this.options.backoffSeconds * 2 ** Math.max(0, attempts - 1),
      this.options.maxBackoffSeconds,
    );
    const { dead } = await releaseJobs(
      this.db,
      ns,
      this.id,
      jobs.map((j) => j.jobId),
      {
        delaySeconds: how.delaySeconds ?? backoff,
        reason: how.reason,
        maxAttempts: this.options.maxAttempts,
        countAttempt: how.countAttempt,
        tokensIn: how.tokens?.tokensIn ?? 0,
        tokensOut: how.tokens?.tokensOut ?? 0,
      },
    );
    countJobs(dead > 0 ? 'dead' : 'retry', jobs.length);
    return { kind: dead > 0 ? 'dead' : 'retry', jobs: jobs.length, reason: how.reason };
  }

  /** Facts, job settlement and the audit summary in one transaction. */
  private async settle(
    ns: string,
    jobs: ClaimedJob[],
    sources: readonly JobSource[],
    note: string | null,
    read?: {
      statements: Parameters<typeof writeLearned>[2];
      answer: ModelAnswer;
      model: string;
      allowed: ReadonlySet<string> | null;
      aliasAttributes: string[];
    },
  ): Promise<RoundOutcome> {
    const facts = await this.db.transaction('modelExtraction', async (tx) => {
      const outcome = read
        ? await writeLearned(tx, ns, read.statements, {
            now: new Date(),
            visibleScopes: null,
            allowedPredicates: read.allowed,
            aliasAttributes: read.aliasAttributes,
            onUnexpected: (error) =>
              this.logger.error('model extraction fact failed', { error: String(error) }),
          })
        : null;
      const written = (outcome?.created ?? 0) + (outcome?.reinforced ?? 0);
      const share = (n: number) => Math.floor(n / jobs.length);
      const finished = await finishJobs(
        tx,
        ns,
        this.id,
        jobs.map((j, i) => ({
          jobId: j.jobId,
          tokensIn:
            share(read?.answer.tokensIn ?? 0) + (i === 0 ? (read?.answer.tokensIn ?? 0) % jobs.length : 0),
          tokensOut:
            share(read?.answer.tokensOut ?? 0) + (i === 0 ? (read?.answer.tokensOut ?? 0) % jobs.length : 0),
          factsWritten: i === 0 ? written : 0,
          note,
        })),
      );
      // Another worker took the batch after our lease ran out: its writes stand, ours roll back.
      if (finished !== jobs.length) throw new Error('the lease on the batch was lost');
      if (read) {
        await appendAudit(tx, ns, {
          principalId: 'system:extraction',
          action: 'extraction.model',
          target: jobs[0]!.batchKey,
          summary: {
            model: read.model,
            jobs: jobs.length,
            texts: sources.length,
            tokensIn: read.answer.tokensIn,
            tokensOut: read.answer.tokensOut,
            created: outcome!.created,
            reinforced: outcome!.reinforced,
            attributes: outcome!.attributes,
            skipped: outcome!.skipped.length,
            ...(note ? { note } : {}),
          },
        });
      }
      return written;
    });
    countJobs('done', jobs.length);
    return { kind: 'done', jobs: jobs.length, facts };
  }
}

function reasonOf(error: unknown): string {
  if (error instanceof LlmError) {
    const status = error.status ? ` (HTTP ${error.status})` : '';
    return `${error.reason}${status}: ${error.message}`.slice(0, 500);
  }
  return `internal: ${error instanceof Error ? error.message : String(error)}`.slice(0, 500);
}
