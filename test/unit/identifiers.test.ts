import { describe, expect, it } from 'vitest';
import { extractIdentifiers, isIdentifierLike } from '../../src/modules/retrieval/pipeline/identifiers.js';

describe('identifier-like tokens of a query', () => {
  it.each([
    ['error E1234 in the deploy', ['E1234']],
    ['commit 3f2a9c1d broke it', ['3f2a9c1d']],
    ['uuid 123e4567-e89b-12d3-a456-426614174000?', ['123e4567-e89b-12d3-a456-426614174000']],
    ['see foo_bar.ts and src/app/main.ts.', ['foo_bar.ts', 'src/app/main.ts']],
    ['why does parseConfig throw ERR_CONN_RESET', ['parseConfig', 'ERR_CONN_RESET']],
    ['HTTP-504 from gpt-4o on node v20.1.0', ['HTTP-504', 'gpt-4o', 'v20.1.0']],
    ['who is person:alice', ['person:alice']],
    ['"index.js" (`config.yaml`)', ['index.js', 'config.yaml']],
  ])('%s', (query, expected) => {
    expect(extractIdentifiers(query)).toEqual(expected);
  });

  it('leaves prose, numbers, quantities, ordinals and clock times alone', () => {
    expect(
      extractIdentifiers(
        'When did Caroline go to the LGBTQ support group on the 1st, at 10:30, in 2023, 90s, 5km?',
      ),
    ).toEqual([]);
    for (const t of [
      'hello',
      'LGBTQ',
      '2023',
      '10:30',
      '1st',
      '90s',
      'long-term',
      'e.g',
      'i.e.',
      'U.S.A',
      'ab',
    ]) {
      expect(isIdentifierLike(t), t).toBe(false);
    }
  });

  it('deduplicates without case and caps the count', () => {
    expect(extractIdentifiers('E1234 e1234 E1234')).toEqual(['E1234']);
    expect(extractIdentifiers('a1b b2c c3d d4e e5f', 3)).toEqual(['a1b', 'b2c', 'c3d']);
  });
});
