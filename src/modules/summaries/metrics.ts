import { Counter, type Registry } from 'prom-client';
import type { Queryable } from '../../db/database.js';
import { type FeatureMetrics, type ScrapeGauge, activeMetrics } from '../../observability/metrics.js';
import { readRefreshGauges } from './store/summary-store.js';

const refreshes = new WeakMap<Registry, Counter<'outcome'>>();

function refreshCounter(registry: Registry): Counter<'outcome'> {
  let counter = refreshes.get(registry);
  if (!counter) {
    counter = new Counter({
      name: 'memgate_summary_refreshes_total',
      help: 'Entities whose summaries the background refresher rebuilt, or failed to rebuild (retried later)',
      labelNames: ['outcome'],
      registers: [registry],
    });
    refreshes.set(registry, counter);
  }
  return counter;
}

/** Entities whose summaries a refresher round rebuilt (`rebuilt`) or failed to (`failed`). */
export function countRefreshes(outcome: 'rebuilt' | 'failed', entities: number): void {
  const registry = activeMetrics()?.registry;
  if (registry && entities > 0) refreshCounter(registry).inc({ outcome }, entities);
}

/**
 * The refresh counter, declared up front; the refresh queue, read on each scrape: entities
 * marked (waiting or due) and the oldest mark's age.
 */
export function summaryMetrics(db: Queryable): FeatureMetrics {
  return { declare: refreshCounter, gauges: refreshGauges(db) };
}

function refreshGauges(db: Queryable): ScrapeGauge[] {
  const read = () => readRefreshGauges(db);
  return [
    {
      name: 'memgate_summary_refresh_marked',
      help: 'Entities marked for a summary rebuild (state: waiting for their debounce, or due now)',
      labelNames: ['state'],
      read: async () => {
        const g = await read();
        return [
          { labels: { state: 'waiting' }, value: g.marked - g.due },
          { labels: { state: 'due' }, value: g.due },
        ];
      },
    },
    {
      name: 'memgate_summary_refresh_oldest_seconds',
      help: 'Age of the oldest summary-refresh mark (0 with none)',
      read: async () => [{ value: (await read()).oldestSeconds }],
    },
  ];
}
