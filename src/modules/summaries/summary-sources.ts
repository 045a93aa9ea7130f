import type { SummarySources } from './summary-material.js';

/** The sources a stored summary's chunk meta names; empty lists when it names none. */
export function summarySourcesOf(meta: Record<string, unknown>): SummarySources {
  const sources = meta.sources as Partial<SummarySources> | undefined;
  const ids = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  return { facts: ids(sources?.facts), observations: ids(sources?.observations) };
}
