import { Counter, type Registry } from 'prom-client';
import { activeMetrics } from '../../observability/metrics.js';

/**
 * Model-extraction counters on the process's metrics registry: calls by outcome, tokens by
 * direction, jobs by how they ended. Namespaces are never labels; per-namespace tokens are in
 * extractionStatus and the audit log.
 */
interface ExtractionMetrics {
  calls: Counter<'outcome'>;
  tokens: Counter<'direction'>;
  jobs: Counter<'outcome'>;
}

const byRegistry = new WeakMap<Registry, ExtractionMetrics>();

function metrics(): ExtractionMetrics | null {
  const registry = activeMetrics()?.registry;
  if (!registry) return null;
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
        help: 'Tokens sent to (in) and received from (out) the extraction model',
        labelNames: ['direction'],
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

export function countCall(outcome: string, tokensIn: number, tokensOut: number): void {
  const m = metrics();
  if (!m) return;
  m.calls.inc({ outcome: /^[a-z_]{1,20}$/.test(outcome) ? outcome : 'other' });
  if (tokensIn > 0) m.tokens.inc({ direction: 'in' }, tokensIn);
  if (tokensOut > 0) m.tokens.inc({ direction: 'out' }, tokensOut);
}

export function countJobs(outcome: 'done' | 'retry' | 'dead', n: number): void {
  metrics()?.jobs.inc({ outcome }, n);
}
