import type { ChangeNotice } from '../../kernel/change-notice.js';
import type { AppDeps } from '../../kernel/request-scope.js';
import { countRefreshes } from './metrics.js';
import { rebuildSummaries } from './summary-builder.js';
import { type TouchedRows, claimDue, clearMarks, markTouched, nextDueInMs } from './store/summary-store.js';

/** The longest the refresher sleeps while marks wait (another process's lease, a far due time). */
const MAX_WAIT_MS = 60_000;

/**
 * Keeps entity summaries in step with their evidence, off the write path. It hears every
 * committed change (the change feed: this process's writes and every other process's), and marks
 * the entities the changed rows are evidence of in `summary_refresh` — one statement per burst of
 * notices, none inside any write. A mark falls due `debounceMs` after the latest change to its
 * entity; due marks are taken in batches (FOR UPDATE SKIP LOCKED, under a lease, so several
 * gateways share the work) and each batch is rebuilt set-based. A mark outlives a crash: a
 * restarted process takes what was left.
 */

export interface RefresherOptions {
  debounceMs: number;
  /** The longest a mark waits while its entity keeps changing. */
  maxDelayMs: number;
  /** Entities rebuilt per round. */
  batchSize: number;
  leaseSeconds: number;
  /** How long changes are gathered before they are marked (one statement per gathering). */
  gatherMs: number;
}

export const DEFAULT_REFRESHER_OPTIONS: RefresherOptions = {
  debounceMs: 2000,
  maxDelayMs: 10_000,
  batchSize: 200,
  leaseSeconds: 120,
  gatherMs: 50,
};

/** What one notice touched, in the shape the mark statement reads. */
export function touchedBy(notice: ChangeNotice): TouchedRows {
  const touched: TouchedRows = { namespace: notice.namespace, entities: [], facts: [], observations: [] };
  if (notice.kind === 'FACT') touched.facts.push(...notice.ids);
  else if (notice.kind === 'OBSERVATION') touched.observations.push(...notice.ids);
  else touched.entities.push(...notice.ids);
  for (const removed of notice.removed) touched.entities.push(...removed.refs);
  return touched;
}

/** Touched rows gathered per namespace. */
function merge(into: Map<string, TouchedRows>, t: TouchedRows): void {
  const held = into.get(t.namespace);
  if (!held) {
    into.set(t.namespace, {
      ...t,
      entities: [...t.entities],
      facts: [...t.facts],
      observations: [...t.observations],
    });
    return;
  }
  held.entities.push(...t.entities);
  held.facts.push(...t.facts);
  held.observations.push(...t.observations);
}

export class SummaryRefresher {
  private readonly options: RefresherOptions;
  private gathered = new Map<string, TouchedRows>();
  private gatherTimer: NodeJS.Timeout | null = null;
  private drainTimer: NodeJS.Timeout | null = null;
  private work: Promise<void> = Promise.resolve();
  private unsubscribe: (() => void) | null = null;
  private stopped = true;
  /** Set by stop: a drain in progress ends after its batch. */
  private halted = false;

  constructor(
    private readonly deps: AppDeps,
    options: Partial<RefresherOptions> = {},
  ) {
    this.options = { ...DEFAULT_REFRESHER_OPTIONS, ...options };
  }

  /** Listens for changes and takes the marks an earlier process left. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.unsubscribe = this.deps.changes?.observe((notice) => this.hear(notice)) ?? null;
    this.scheduleDrain(0);
  }

  /** Takes due marks now (a rebuild was queued). */
  wake(): void {
    if (this.drainTimer) clearTimeout(this.drainTimer);
    this.drainTimer = null;
    this.scheduleDrain(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.halted = true;
    this.unsubscribe?.();
    if (this.gatherTimer) clearTimeout(this.gatherTimer);
    if (this.drainTimer) clearTimeout(this.drainTimer);
    await this.work;
  }

  private hear(notice: ChangeNotice): void {
    merge(this.gathered, touchedBy(notice));
    this.gatherTimer ??= setTimeout(() => {
      this.gatherTimer = null;
      this.enqueue(() => this.markGathered());
    }, this.options.gatherMs);
  }

  /** Runs `step` after the work before it; a failure is logged, never thrown at a writer. */
  private enqueue(step: () => Promise<void>): void {
    this.work = this.work.then(step).catch((error) => {
      this.deps.logger.error('summary refresh failed; marks stay for the next round', {
        error: String(error),
      });
    });
  }

  private async markGathered(): Promise<void> {
    const touched = [...this.gathered.values()];
    this.gathered = new Map();
    if (this.stopped || touched.length === 0) return;
    await markTouched(this.deps.db, touched, this.options);
    this.scheduleDrain(this.options.debounceMs + 10);
  }

  /** A drain already scheduled stays: a steady stream of writes must not postpone every rebuild. */
  private scheduleDrain(delayMs: number): void {
    if (this.stopped || this.drainTimer) return;
    this.drainTimer = setTimeout(() => {
      this.drainTimer = null;
      this.enqueue(() => this.drainAndReschedule());
    }, delayMs);
    this.drainTimer.unref?.();
  }

  /** A drain, then the next one at the time the earliest mark left falls due (changes push marks back). */
  private async drainAndReschedule(): Promise<void> {
    await this.drain();
    const next = await nextDueInMs(this.deps.db);
    if (next !== null) this.scheduleDrain(Math.min(next + 10, MAX_WAIT_MS));
  }

  /** Rebuilds due marks until none is left; how many entities were rebuilt. */
  async drain(): Promise<number> {
    let entities = 0;
    for (;;) {
      const marks = await claimDue(this.deps.db, this.options.batchSize, this.options.leaseSeconds);
      if (marks.length === 0) break;
      const namespace = marks[0]!.namespace;
      try {
        await rebuildSummaries(
          this.deps,
          namespace,
          marks.map((m) => m.key),
        );
      } catch (error) {
        // The marks stay, under their lease: a later round takes them again.
        countRefreshes('failed', marks.length);
        throw error;
      }
      await clearMarks(this.deps.db, namespace, marks);
      countRefreshes('rebuilt', marks.length);
      entities += marks.length;
      if (this.halted) break;
    }
    return entities;
  }
}
