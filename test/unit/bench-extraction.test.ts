import { describe, expect, it } from 'vitest';
import { type SizeSpec, Dataset } from '../../bench/generate.js';
import { standInReply } from '../../bench/model-stand-in.js';
import { BENCH_TEAM_PACK, extractionObservation } from '../../bench/scenarios/extraction.js';
import { observationInput } from '../../bench/scenarios/ingest.js';
import { TextModel } from '../../bench/text-model.js';
import { compilePack, domainPackSchema } from '../../src/domain/domain-pack.js';
import { applyExtractors } from '../../src/modules/extraction/rules.js';

const letters = 'abcdefghijklmnopqrstuvwxyz';
const vocabulary = Array.from({ length: 3000 }, (_, i) =>
  [letters[i % 26], letters[Math.floor(i / 26) % 26], letters[Math.floor(i / 676) % 26], 'x'].join(''),
);
const tiny: SizeSpec = { name: 'quick', chunks: 500, entities: 600, facts: 3000 };
const ds = new Dataset(tiny, 7, new TextModel(vocabulary, 7));
const extractors = compilePack(domainPackSchema.parse(BENCH_TEAM_PACK)).extractors;

describe('benchmark: extraction scenarios', () => {
  const batch = Array.from({ length: 300 }, (_, i) => extractionObservation(ds, 2, i, 'r', 20_000_000));

  it("one message in three states what the pack's extractors read, the others nothing", () => {
    const read = batch.map((o) => applyExtractors(extractors, o.content));
    expect(read.filter((m) => m.length > 0)).toHaveLength(100);
    expect(read.map((m) => m.length > 0)).toEqual(batch.map((_, i) => i % 3 === 0));
    const kinds = new Set(read.flat().map((m) => m.predicate ?? m.attribute));
    expect(kinds).toEqual(new Set(['works_on', 'leads', 'uses', 'role']));
  });

  it("keeps the plain scenario's text lengths and draws texts of its own", () => {
    const plain = Array.from({ length: 300 }, (_, i) => observationInput(ds, 2, i, false));
    const mean = (texts: { content: string }[]) => texts.reduce((a, o) => a + o.content.length, 0) / 300;
    expect(Math.abs(mean(batch) / mean(plain) - 1)).toBeLessThan(0.05);
    const shared = batch.filter((o, i) => o.content === plain[i]!.content);
    expect(shared).toHaveLength(0);
  });

  it("the model stand-in answers the prompt's works_on statements with the message they came from", () => {
    const prompt = [
      '<message n="1" at="2025-01-01T00:00:00.000Z">\nZen works on Orbit. more text\n</message>',
      '<message n="2" at="2025-01-01T00:01:00.000Z">\nnothing here\n</message>',
    ].join('\n');
    expect(standInReply(prompt)).toEqual({
      facts: [
        {
          message: 1,
          subject: 'Zen',
          subjectKind: 'person',
          predicate: 'works_on',
          object: 'Orbit',
          objectKind: 'project',
          confidence: 0.7,
        },
      ],
      attributes: [],
    });
  });
});
