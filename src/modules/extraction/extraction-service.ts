import { assertCanRead, assertCanWrite } from '../../auth/principal.js';
import { badInput, forbidden, parseInput } from '../../errors.js';
import type { RequestScope } from '../../kernel/request-scope.js';
import { namespaceSchema } from '../../kernel/validation.js';
import { llmFor } from '../../providers/llm.js';
import { describe } from '../facts/index.js';
import { rereadByRules } from './reread.js';
import { type ExtractionSettings, extractionSettingsSchema, readExtractionSettings } from './settings.js';
import { findExtractionSettings, saveExtractionSettings } from './store/extraction-settings-store.js';
import { type JobStatusSummary, requeueObservations, summariseJobs } from './store/job-store.js';

export interface ExtractionStatusView extends JobStatusSummary {
  namespace: string;
  /** The gateway's model (`openai:<name>`), or null when none is configured (nothing is queued). */
  model: string | null;
  settings: ExtractionSettings;
}

/** Extraction settings, status and re-runs of one namespace, for GraphQL and the CLI. */
export class ExtractionService {
  constructor(private readonly scope: RequestScope) {}

  async status(namespace: string): Promise<ExtractionStatusView> {
    const ns = parseInput(namespaceSchema, namespace, 'namespace');
    const { principal } = this.scope;
    assertCanRead(principal, ns);
    // The queue's counts and failure reasons cover every observation, hidden ones included.
    if (!principal.admin && principal.scopes !== null) {
      throw forbidden(
        'The extraction status counts every observation of a namespace; it needs an admin principal or one that sees every scope.',
      );
    }
    const [summary, stored] = await Promise.all([
      summariseJobs(this.scope.db, ns),
      findExtractionSettings(this.scope.db, ns),
    ]);
    const llm = llmFor(this.scope.deps.config);
    return {
      namespace: ns,
      model: llm.available ? llm.name : null,
      settings: readExtractionSettings(stored),
      ...summary,
    };
  }

  /** Merges `patch` over the namespace's settings; unknown keys or bad values are BAD_USER_INPUT. */
  async configure(namespace: string, patch: unknown): Promise<ExtractionSettings> {
    const ns = parseInput(namespaceSchema, namespace, 'namespace');
    assertCanWrite(this.scope.principal, ns);
    if (!patch || typeof patch !== 'object' || Array.isArray(patch))
      throw badInput('settings must be a JSON object');
    const current = readExtractionSettings(await findExtractionSettings(this.scope.db, ns));
    const parsed = extractionSettingsSchema.safeParse({ ...current, ...patch });
    if (!parsed.success) throw badInput(`settings: ${describe(parsed.error)}`);
    await saveExtractionSettings(this.scope.db, ns, parsed.data);
    return parsed.data;
  }

  /**
   * Queues the namespace's observations (recorded since `since`, or all) for model extraction
   * again; rule extraction re-runs through `memgate extract`. Returns how many were queued; 0
   * when no model is configured.
   */
  async requeue(namespace: string, since: Date | null): Promise<number> {
    const ns = parseInput(namespaceSchema, namespace, 'namespace');
    assertCanWrite(this.scope.principal, ns);
    if (!llmFor(this.scope.deps.config).available) return 0;
    return requeueObservations(this.scope.db, ns, since);
  }

  /** Re-runs extraction over stored observations (rules now, the model through the queue). */
  async reread(
    namespace: string,
    since: Date | null,
    onProgress?: (done: number, total: number) => void,
  ): Promise<{ read: number; queued: number }> {
    const ns = parseInput(namespaceSchema, namespace, 'namespace');
    assertCanWrite(this.scope.principal, ns);
    const { read } = await rereadByRules(this.scope, ns, since, onProgress);
    return { read, queued: await this.requeue(ns, since) };
  }
}
