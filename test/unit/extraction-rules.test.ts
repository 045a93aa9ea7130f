import { describe, expect, it } from 'vitest';
import { compilePack, domainPackSchema } from '../../src/domain/domain-pack.js';
import {
  extractionPrompt,
  predicateOf,
  statementsOfReply,
} from '../../src/modules/extraction/model-prompt.js';
import { lowerName, resolveNames } from '../../src/modules/extraction/resolution.js';
import {
  applyExtractors,
  cleanName,
  placeholderKey,
  textPieces,
} from '../../src/modules/extraction/rules.js';
import type { JobSource } from '../../src/modules/extraction/store/source-store.js';
import { TEAM_PACK } from '../graphql/extraction-fixture.js';

const pack = compilePack(domainPackSchema.parse(TEAM_PACK));

describe('extraction rules (pure)', () => {
  it('spans point into the original text across lines', () => {
    const text = 'Hello.\nLater: Bruno works on Atlas.\nAnd Carla works on Vega.';
    const matches = applyExtractors(pack.extractors, text);
    expect(matches.map((m) => text.slice(m.span[0], m.span[1]))).toEqual([
      'Bruno works on Atlas',
      'Carla works on Vega',
    ]);
  });

  it('cuts long lines into pieces no longer than the safety bound', () => {
    const pieces = textPieces(`${'a'.repeat(9000)}\nb`);
    expect(pieces.map((p) => [p.offset, p.text.length])).toEqual([
      [0, 4096],
      [4096, 4096],
      [8192, 808],
      [9001, 1],
    ]);
  });

  it('names lose surrounding quotes and punctuation; keys fold case and punctuation', () => {
    expect(cleanName(' «Феникс»,')).toBe('Феникс');
    expect(placeholderKey('person', 'Anne-Marie  O’Neil')).toBe('person:anne-marie-o-neil');
    expect(placeholderKey('project', 'Феникс 2')).toBe('project:феникс-2');
    expect(lowerName('ЁЖ  Петров')).toBe('ёж петров');
  });

  it('resolution prefers the expected kind, then key over alias over title, then real over placeholder', () => {
    const resolved = resolveNames(
      [
        { name: 'Atlas', kind: 'project' },
        { name: 'Nobody', kind: 'person' },
      ],
      [
        { name: 'Atlas', key: 'atlas-book', kind: 'book', placeholder: false, via: 'key' },
        { name: 'Atlas', key: 'project:atlas', kind: 'project', placeholder: true, via: 'key' },
        { name: 'Atlas', key: 'atlas', kind: 'project', placeholder: false, via: 'title' },
      ],
    );
    expect(resolved.get('project\u0000Atlas')).toEqual({
      key: 'project:atlas',
      kind: 'project',
      created: false,
    });
    expect(resolved.get('person\u0000Nobody')).toEqual({
      key: 'person:nobody',
      kind: 'person',
      created: true,
    });
  });
});

describe('model prompt and answer (pure)', () => {
  const source = (text: string): JobSource => ({
    jobId: 'j',
    text,
    actor: 'Dana <dana@example.com>',
    scopes: ['workspace:a'],
    visibility: ['workspace:a'],
    occurredAt: new Date('2025-01-06T09:00:00Z'),
    observationId: 'obs-1',
    sourcePath: null,
  });
  const schema = {
    namespace: 'n',
    strict: false,
    packs: [],
    kinds: new Map(pack.kinds.map((k) => [k.kind, k])),
    relations: new Map(pack.relations.map((r) => [r.relation, r])),
  };

  it('masks personal data in texts and actors unless allowed, and numbers the messages', () => {
    const masked = extractionPrompt([source('Mail me at dana@example.com')], schema, { sendPii: false });
    expect(masked[1]!.content).toContain('<message n="1" from="Dana <[email]>"');
    expect(masked[1]!.content).not.toContain('dana@example.com');
    expect(extractionPrompt([source('dana@example.com')], schema, { sendPii: true })[1]!.content).toContain(
      'dana@example.com',
    );
    expect(masked[0]!.content).toContain('- leads: person → project (one at a time)');
  });

  it('keeps the valid items of a partial answer and counts the rest', () => {
    const { statements, dropped } = statementsOfReply(
      {
        facts: [
          {
            message: 1,
            subject: 'Dana',
            subjectKind: 'Person',
            predicate: 'Works On',
            object: 'Vega',
            confidence: 2,
          },
          { message: 1, subject: 'Dana', predicate: 'works_on', object: 'Vega', confidence: 0.4 },
          { message: 2, subject: 'X', predicate: 'p', object: 'Y' },
          'not an object',
        ],
        attributes: [{ message: 1, entity: 'Dana', attribute: 'role', value: 'designer' }],
      },
      [source('Dana works on Vega')],
      'm',
    );
    expect(dropped).toBe(3);
    expect(
      statements.map((s) => [s.subject.kind, s.predicate, s.object?.kind, s.confidence, s.attribute]),
    ).toEqual([
      ['entity', 'works_on', 'entity', 0.4, null],
      ['entity', null, undefined, 0.5, 'role'],
    ]);
    expect(statements[0]!.source).toMatchObject({ observationId: 'obs-1', scopes: ['workspace:a'] });
  });

  it('predicates are kept when well-formed, else snake-cased', () => {
    expect(predicateOf('leads')).toBe('leads');
    expect(predicateOf('works on')).toBe('works_on');
    expect(predicateOf('   ')).toBeNull();
  });
});
