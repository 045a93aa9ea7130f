import { describe, expect, it } from 'vitest';
import { salientLine } from '../../src/domain/salient-text.js';
import { extractiveSummary } from '../../src/modules/retrieval/session-summary.js';
import { draftSummaries } from '../../src/modules/summaries/summary-builder.js';
import { summaryClasses } from '../../src/modules/summaries/summary-classes.js';
import type {
  SummaryFact,
  SummaryMaterial,
  SummaryNote,
} from '../../src/modules/summaries/summary-material.js';
import { acceptReply, taggedStatements } from '../../src/modules/summaries/summary-model.js';
import { SUMMARY_MAX_CHARS, summaryText } from '../../src/modules/summaries/summary-text.js';

const AS_OF = new Date('2024-10-12T00:00:00Z');

const fact = (id: string, over: Partial<SummaryFact> = {}): SummaryFact => ({
  factId: id,
  entity: 'project:falcon',
  predicate: 'AUTH_PROVIDER',
  outgoing: true,
  otherKey: 'service:supabase',
  otherTitle: 'Supabase',
  validFrom: '2024-10-10T09:00:00Z',
  conflict: false,
  evidence: 'ASSERTED',
  visibility: [],
  otherVisibility: [],
  otherPii: false,
  otherPiiCategories: [],
  ...over,
});

const note = (
  id: string,
  occurredAt: string,
  content: string,
  over: Partial<SummaryNote> = {},
): SummaryNote => ({
  observationId: id,
  entity: 'project:falcon',
  content,
  occurredAt,
  actor: 'lena',
  visibility: [],
  pii: false,
  piiCategories: [],
  ...over,
});

const material = (over: Partial<SummaryMaterial> = {}): SummaryMaterial => ({
  entity: {
    namespace: 'ns',
    key: 'project:falcon',
    kind: 'project',
    title: 'Project Falcon',
    visibility: [],
    scopes: [],
    attributes: { status: 'building', budget: '120k' },
    pii: false,
    piiCategories: [],
  },
  facts: [
    fact('f-auth'),
    fact('f-lead', {
      predicate: 'LEADS',
      outgoing: false,
      otherKey: 'person:lena',
      otherTitle: 'Lena Ortiz',
      validFrom: '2024-10-08T09:00:00Z',
    }),
  ],
  notes: [
    note('o2', '2024-10-09T09:00:00Z', 'Lena takes over Falcon from Marco. The launch moved to November 10.'),
    note('o1', '2024-10-02T09:00:00Z', 'Kickoff went well.'),
  ],
  ...over,
});

describe('the extractive summary rule', () => {
  it('states attributes by name, facts grouped by direction and predicate, then dated notes newest first', () => {
    const draft = summaryText(material(), AS_OF)!;
    expect(draft.text).toBe(
      [
        'Project Falcon (project), as of 2024-10-12:',
        '- budget: 120k',
        '- status: building',
        '- AUTH_PROVIDER: Supabase (since 2024-10-10)',
        '- Lena Ortiz LEADS Project Falcon (since 2024-10-08)',
        'Latest notes:',
        '- 2024-10-09 (lena): Lena takes over Falcon from Marco. The launch moved to November 10.',
        '- 2024-10-02 (lena): Kickoff went well.',
      ].join('\n'),
    );
    expect(draft.sources).toEqual({ facts: ['f-auth', 'f-lead'], observations: ['o2', 'o1'] });
  });

  it('is deterministic and says nothing when nothing is known', () => {
    expect(summaryText(material(), AS_OF)).toEqual(summaryText(material(), AS_OF));
    const empty = material({ facts: [], notes: [] });
    empty.entity.attributes = null;
    expect(summaryText(empty, AS_OF)).toBeNull();
  });

  it('marks a fact in conflict, and keeps the cap by dropping the oldest notes first', () => {
    const conflicted = summaryText(material({ facts: [fact('f1', { conflict: true })] }), AS_OF)!;
    expect(conflicted.text).toContain('Supabase (in conflict with another version)');
    const long = 'Falcon '.repeat(60);
    const many = material({
      notes: Array.from({ length: 5 }, (_, i) =>
        note(`n${i}`, `2024-10-0${9 - i}T09:00:00Z`, `${long}${i}.`),
      ),
    });
    many.entity.attributes = Object.fromEntries(
      Array.from({ length: 6 }, (_, i) => [`note${i}`, 'long value '.repeat(12)]),
    );
    const capped = summaryText(many, AS_OF)!;
    expect(capped.text.length).toBeLessThanOrEqual(SUMMARY_MAX_CHARS);
    expect(capped.text).toContain('- note5: long value');
    expect(capped.sources.observations[0]).toBe('n0');
    expect(capped.sources.observations.length).toBeLessThan(5);
  });

  it('keeps of a long note the sentences that name the entity or state a change', () => {
    const text = `${'Unrelated chatter about lunch. '.repeat(10)}Falcon ships on Friday. The venue changed to Lisbon.`;
    expect(salientLine(text, 220, ['Falcon'])).toBe('Falcon ships on Friday. The venue changed to Lisbon.');
  });
});

describe('session compacts use the same rule', () => {
  it('keep of a long message the sentences that carry a decision or a change, not only the first', () => {
    const long = `${'We went through the open tickets one by one and talked about the backlog. '.repeat(3)}We decided to ship on Friday.`;
    const compact = extractiveSummary('s1', [
      { content: long, occurredAt: new Date('2024-10-01T09:00:00Z') },
    ]);
    expect(compact).toContain('We decided to ship on Friday.');
    expect(compact.split('\n')[1]!.startsWith('- We went through the open tickets')).toBe(true);
  });
});

describe('visibility classes', () => {
  it('builds a public class from public rows and one per scope from the rows that scope admits', () => {
    const m = material({
      facts: [fact('public'), fact('hr-only', { visibility: ['workspace:hr'] })],
      notes: [
        note('shared', '2024-10-09T09:00:00Z', 'Falcon news.', {
          visibility: ['workspace:hr', 'workspace:ops'],
        }),
      ],
    });
    const classes = summaryClasses(m);
    expect(classes.map((c) => c.visibility)).toEqual([[], ['workspace:hr'], ['workspace:ops']]);
    expect(classes[0]!.material.facts.map((f) => f.factId)).toEqual(['public']);
    expect(classes[0]!.material.notes).toEqual([]);
    expect(classes[1]!.material.facts.map((f) => f.factId)).toEqual(['public', 'hr-only']);
    expect(classes[2]!.material.notes.map((n) => n.observationId)).toEqual(['shared']);
  });

  it('shares one summary between scopes that admit the same rows, and gives a hidden entity no public one', () => {
    const m = material({
      notes: [note('n', '2024-10-09T09:00:00Z', 'x', { visibility: ['workspace:a', 'workspace:b'] })],
    });
    expect(summaryClasses(m).map((c) => c.visibility)).toEqual([[], ['workspace:a', 'workspace:b']]);
    const hidden = material();
    hidden.entity = { ...hidden.entity, visibility: ['workspace:a'] };
    expect(summaryClasses(hidden).map((c) => c.visibility)).toEqual([['workspace:a']]);
  });

  it('a fact is admitted only when its other endpoint is too', () => {
    const m = material({ facts: [fact('f', { otherVisibility: ['workspace:x'] })], notes: [] });
    const [pub, x] = summaryClasses(m);
    expect(pub!.material.facts).toEqual([]);
    expect(x!.material.facts.map((f) => f.factId)).toEqual(['f']);
  });

  it('drafts one summary per class, ordered -1, -2 …, personal data marked from what it states', () => {
    const m = material({
      notes: [
        note('p', '2024-10-09T09:00:00Z', 'Call Falcon at +49 30 1234567.', {
          pii: true,
          piiCategories: ['phone'],
          visibility: ['workspace:hr'],
        }),
      ],
    });
    const drafted = draftSummaries([m], AS_OF);
    expect(drafted.map((d) => [d.order, d.visibility, d.pii.pii])).toEqual([
      [-1, [], false],
      [-2, ['workspace:hr'], true],
    ]);
  });
});

describe('a model-written summary', () => {
  const m = material();
  const draft = summaryText(m, AS_OF)!;
  const statements = taggedStatements(m, draft);

  it('offers the draft statements tagged A, F, N', () => {
    expect(statements.map((s) => s.tag)).toEqual(['A1', 'A2', 'F1', 'F2', 'N1', 'N2']);
    expect(statements.find((s) => s.tag === 'F2')!.text).toBe(
      'Lena Ortiz LEADS Project Falcon (since 2024-10-08)',
    );
  });

  it('rests on exactly what it cites', () => {
    const reply = JSON.stringify({
      summary: 'Lena Ortiz leads Falcon [F2]; it is still being built [A2].',
      cites: [],
    });
    const { cited } = acceptReply(reply, statements);
    expect(cited.map((c) => c.tag)).toEqual(['F2', 'A2']);
  });

  it('refuses a reply that cites nothing, cites an unknown tag, or is not JSON', () => {
    expect(() => acceptReply(JSON.stringify({ summary: 'Falcon is fine.', cites: [] }), statements)).toThrow(
      /cites nothing/,
    );
    expect(() => acceptReply(JSON.stringify({ summary: 'x [F9]', cites: ['F9'] }), statements)).toThrow(
      /unknown/,
    );
    expect(() => acceptReply('no json here', statements)).toThrow();
  });
});
