import { describe, expect, it } from 'vitest';
import { detectEntityNames } from '../../src/modules/retrieval/compiler/multi-hop.js';

// Multi-hop entity detection on Russian text: Cyrillic names, sentence starters, inflection.
describe('multi-hop entity names in Russian', () => {
  const texts = [
    'Игорь работает с Мариной над проектом «Аврора».',
    'Марина переехала в Новосибирск. Потом Игорем занялся отдел кадров.',
    'Когда Марина вернётся, Ольга передаст ей задачи.',
  ];

  it('finds capitalised Cyrillic names by frequency, without sentence starters', () => {
    expect(detectEntityNames(texts, 'Над чем работают?', 3)).toEqual(['Марина', 'Аврора', 'Игорем']);
  });

  it('leaves out the names the query already holds, in any case form', () => {
    const names = detectEntityNames(texts, 'С кем работает Игорь?', 10);
    expect(names).not.toContain('Игорь');
    expect(names).not.toContain('Игорем');
    expect(names).toContain('Ольга');
    expect(detectEntityNames(texts, 'Куда переехала Марина?', 10)).not.toContain('Мариной');
  });
});
