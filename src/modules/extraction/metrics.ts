import { Counter, type Registry } from 'prom-client';
import type { Queryable } from '../../db/database.js';
import {
  type FeatureMetrics,
  type ScrapeGauge,
  activeMetrics,
  boundedLabel,
} from '../../observability/metrics.js';
import { readQueueGauges } from './store/job-store.js';

/**
 * Model-extraction counters on the process's metrics registry: calls by outcome, tokens by
 * direction and namespace, jobs by how they ended; and the queue, read on scrape.
 */
interface ExtractionMetrics {
  calls: Counter<'outcome'>;
  tokens: Counter<'direction' | 'namespace'>;
  jobs: Counter<'outcome'>;
}

const byRegistry = new WeakMap<Registry, ExtractionMetrics>();

function metrics(): ExtractionMetrics | null {
  const registry = activeMetrics()?.registry;
  return registry ? countersOf(registry) : null;
}

function countersOf(registry: Registry): ExtractionMetrics {
  let m = byRegistry.get(registry);
  if (!m) {
    const registers = [registry];
    m = {
      calls: new Counter({
        name: 'memgate_extraction_model_calls_total',
        help: 'Model extraction calls by outcome (ok, timeout, http, malformed…)',
        labelNames: ['outcome'],
        registers,
      }),
      tokens: new Counter({
        name: 'memgate_extraction_tokens_total',
        help: `Tokens sent to (in) and received from (out) the extraction model, by namespace (the first ${MAX_NAMESPACE_LABELS} seen; later ones as other)`,
        labelNames: ['direction', 'namespace'],
        registers,
      }),
      jobs: new Counter({
        name: 'memgate_extraction_jobs_total',
        help: 'Extraction jobs by how a round left them (done, retry, dead)',
        labelNames: ['outcome'],
        registers,
      }),
    };
    byRegistry.set(registry, m);
  }
  return m;
}

/**
 * Namespaces name tenants an operator set up, not caller text, but callers may create them:
 * a bounded set keeps the series count bounded whatever they do.
 */
const MAX_NAMESPACE_LABELS = 100;
const namespaceLabels = new Set<string>();

function namespaceLabel(namespace: string): string {
  if (namespaceLabels.has(namespace)) return namespace;
  if (namespaceLabels.size >= MAX_NAMESPACE_LABELS || boundedLabel(namespace) !== namespace) return 'other';
  namespaceLabels.add(namespace);
  return namespace;
}

export function countCall(namespace: string, outcome: string, tokensIn: number, tokensOut: number): void {
  const m = metrics();
  if (!m) return;
  m.calls.inc({ outcome: /^[a-z_]{1,20}$/.test(outcome) ? outcome : 'other' });
  if (tokensIn <= 0 && tokensOut <= 0) return;
  const ns = namespaceLabel(namespace);
  if (tokensIn > 0) m.tokens.inc({ direction: 'in', namespace: ns }, tokensIn);
  if (tokensOut > 0) m.tokens.inc({ direction: 'out', namespace: ns }, tokensOut);
}

export function countJobs(outcome: 'done' | 'retry' | 'dead', n: number): void {
  metrics()?.jobs.inc({ outcome }, n);
}

/**
 * The counters, declared up front; the queue's depth by status and the age of its oldest waiting
 * job, read on each scrape.
 */
export function extractionMetrics(db: Queryable): FeatureMetrics {
  return { declare: countersOf, gauges: queueGauges(db) };
}

function queueGauges(db: Queryable): ScrapeGauge[] {
  const read = () => readQueueGauges(db);
  return [
    {
      name: 'memgate_extraction_queue_jobs',
      help: 'Model-extraction jobs waiting (queued), claimed by a worker (running) or given up (dead)',
      labelNames: ['status'],
      read: async () => {
        const q = await read();
        return [
          { labels: { status: 'queued' }, value: q.queued },
          { labels: { status: 'running' }, value: q.running },
          { labels: { status: 'dead' }, value: q.dead },
        ];
      },
    },
    {
      name: 'memgate_extraction_queue_oldest_seconds',
      help: 'Age of the oldest queued model-extraction job (0 with none queued)',
      read: async () => [{ value: (await read()).oldestQueuedSeconds }],
    },
  ];
}
