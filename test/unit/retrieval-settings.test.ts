import { describe, expect, it } from 'vitest';
import { candidatePool } from '../../src/modules/retrieval/pipeline/search.js';
import {
  fusionWeights,
  resolveSettings,
  vectorWeightFor,
} from '../../src/modules/retrieval/pipeline/settings.js';

describe('retrieval settings as data', () => {
  it('fits the vector weight to the embedder', () => {
    expect(vectorWeightFor('offline:wink-sg-100d-sif')).toBeLessThan(1);
    expect(vectorWeightFor('openai:text-embedding-3-small')).toBe(1);
    expect(resolveSettings({ embedderModel: 'openai:x' }).vector.weight).toBe(1);
    expect(resolveSettings({ embedderModel: 'offline:wink-sg-100d-sif' }).lexical.weight).toBe(1);
  });

  it('presets switch channels; request weights and rrfK override', () => {
    const semantic = resolveSettings({ preset: 'semantic' });
    expect([semantic.vector.enabled, semantic.lexical.enabled, semantic.exact.enabled]).toEqual([
      true,
      false,
      false,
    ]);
    const lexical = resolveSettings({ preset: 'lexical' });
    expect([lexical.vector.enabled, lexical.lexical.enabled, lexical.exact.enabled]).toEqual([
      false,
      true,
      true,
    ]);
    const custom = resolveSettings({ weights: { vector: 0.2, lexical: 2, graph: null }, rrfK: 10 });
    expect(fusionWeights(custom)).toEqual({ vector: 0.2, lexical: 2, exact: 1, graph: 0.7 });
    expect(custom.rrfK).toBe(10);
  });

  it('rejects impossible values', () => {
    expect(() => resolveSettings({ weights: { vector: -1 } })).toThrow();
    expect(() => resolveSettings({ rrfK: -5 })).toThrow();
  });

  it('widens the candidate pool with k and the number of namespaces', () => {
    expect(candidatePool(8, 1)).toBe(20);
    expect(candidatePool(16, 1)).toBe(32);
    expect(candidatePool(8, 4)).toBe(32);
  });
});
