import { describe, expect, it } from 'vitest';
import type { ChatMessage, Llm } from '../../src/providers/llm.js';
import { LlmError } from '../../src/providers/llm.js';
import {
  extractEntityHints,
  extractTimeWindow,
  refineRoute,
  routeByRules,
} from '../../src/modules/retrieval/router/index.js';

// A Wednesday, mid-afternoon UTC: every window below is computed from this, never the clock.
const REF = new Date('2024-03-13T15:30:00.000Z');
const iso = (d: Date | null) => d?.toISOString() ?? null;
const DAY = 86_400_000;

describe('router rules: query types', () => {
  it.each([
    ['hello!', 'NO_SEARCH'],
    ['thanks so much', 'NO_SEARCH'],
    ['Привет', 'NO_SEARCH'],
    ['   ', 'NO_SEARCH'],
    ["What is John's phone number?", 'ENTITY_LOOKUP'],
    ['what is the email of Acme Corp?', 'ENTITY_LOOKUP'],
    ['Who is Melanie?', 'ENTITY_LOOKUP'],
    ['Tell me about Project Atlas', 'ENTITY_LOOKUP'],
    ['How do John and Mike know each other?', 'RELATIONSHIP'],
    ['What is the relationship between Caroline and Melanie?', 'RELATIONSHIP'],
    ['What happened with the CORE project last week?', 'TEMPORAL'],
    ['What did Caroline do in May 2023?', 'TEMPORAL'],
    ['What topics did I talk about last week?', 'TEMPORAL_FACETS'],
    ['Who did I talk to yesterday?', 'TEMPORAL_FACETS'],
    ['О чём я говорил на прошлой неделе?', 'TEMPORAL_FACETS'],
    ['Explain how the search pipeline works', 'EXPLORATORY'],
    ['how does billing work', 'EXPLORATORY'],
    ['What are my fitness goals?', 'ASPECT'],
    ['What does Caroline like to paint?', 'ASPECT'],
  ])('%s → %s', (query, type) => {
    expect(routeByRules(query, REF).queryType).toBe(type);
  });

  it('attribute lookups extract the entity and a normalised attribute key', () => {
    const possessive = routeByRules("What is John's phone number?", REF);
    expect(possessive).toMatchObject({
      lookupMode: 'ATTRIBUTE',
      attribute: 'phone_number',
      entityHints: ['John'],
    });
    const of = routeByRules('what is the email of Acme Corp?', REF);
    expect(of).toMatchObject({ lookupMode: 'ATTRIBUTE', attribute: 'email', entityHints: ['Acme Corp'] });
  });

  // Paraphrases of one attribute question route alike: same type, mode and attribute key, and
  // the entity is the one named (first name or full name).
  it.each([
    {
      asks: 'role of Bob Okafor',
      paraphrases: [
        'What is the role of Bob Okafor?',
        "What is Bob's role?",
        "What's Bob Okafor's role?",
        "Bob Okafor's role?",
        'what is the role of Bob',
        "What's the role of Bob Okafor?",
        'What’s the role of Bob?',
        'What role does Bob Okafor have?',
        'Which role does Bob have?',
      ],
      attribute: 'role',
      entity: /^Bob( Okafor)?$/,
    },
    {
      asks: 'phone number of Acme',
      paraphrases: [
        'What is the phone number of Acme?',
        "What's Acme's phone number?",
        'What phone number does Acme have?',
        'what is the phone number for Acme',
      ],
      attribute: 'phone_number',
      entity: /^Acme$/,
    },
    {
      asks: 'location of Priya Nair',
      paraphrases: [
        "What is Priya's location?",
        'What is the location of Priya Nair?',
        'Where is Priya based?',
        'Where is Priya Nair located?',
        'Where does Priya live?',
        "What is Priya's city?",
        "Priya's city?",
        'Which city does Priya have?',
      ],
      attribute: 'location',
      entity: /^Priya( Nair)?$/,
    },
    {
      asks: 'email address of Bob Okafor',
      paraphrases: ["What is Bob Okafor's email address?", 'What is the email address of Bob Okafor?'],
      attribute: 'email_address',
      entity: /^Bob Okafor$/,
    },
  ])('paraphrases of the $asks question get the same route', ({ paraphrases, attribute, entity }) => {
    for (const query of paraphrases) {
      const route = routeByRules(query, REF);
      expect({ query, type: route.queryType, mode: route.lookupMode, attribute: route.attribute }).toEqual({
        query,
        type: 'ENTITY_LOOKUP',
        mode: 'ATTRIBUTE',
        attribute,
      });
      expect(route.entityHints[0], query).toMatch(entity);
    }
  });

  it('a question about a person without an attribute is a broad lookup', () => {
    expect(routeByRules('Who is Melanie?', REF)).toMatchObject({ lookupMode: 'BROAD', attribute: null });
  });

  it('a possessive followed by an opinion word is not an attribute lookup', () => {
    expect(routeByRules("What is Caroline's favorite book?", REF).queryType).toBe('ASPECT');
  });

  it('relationship questions carry both entities', () => {
    expect(routeByRules('How do John and Mike know each other?', REF).entityHints).toEqual(['John', 'Mike']);
  });
});

describe('router rules: entity hints', () => {
  it('drops question words, months and possessives; keeps multi-word and quoted names', () => {
    expect(extractEntityHints('What did Caroline tell Melanie in May about "the blue house"?')).toEqual([
      'the blue house',
      'Caroline',
      'Melanie',
    ]);
    expect(extractEntityHints("Where is Acme Corp's office?")).toEqual(['Acme Corp']);
    expect(extractEntityHints('what did i do today')).toEqual([]);
  });
});

describe('router rules: time windows against a reference time', () => {
  it('yesterday and today are UTC days', () => {
    const y = extractTimeWindow('what did I do yesterday', REF)!;
    expect([y.kind, iso(y.since), iso(y.until)]).toEqual([
      'RANGE',
      '2024-03-12T00:00:00.000Z',
      '2024-03-13T00:00:00.000Z',
    ]);
    const t = extractTimeWindow('сегодня', REF)!;
    expect(iso(t.since)).toBe('2024-03-13T00:00:00.000Z');
  });

  it('last week / past N days are rolling windows ending at the reference', () => {
    const w = extractTimeWindow('topics from last week', REF)!;
    expect([w.kind, w.since!.getTime(), w.until!.getTime()]).toEqual([
      'RANGE',
      REF.getTime() - 7 * DAY,
      REF.getTime(),
    ]);
    const n = extractTimeWindow('in the past 3 days', REF)!;
    expect(n.since!.getTime()).toBe(REF.getTime() - 3 * DAY);
    const ru = extractTimeWindow('на прошлой неделе', REF)!;
    expect(ru.since!.getTime()).toBe(REF.getTime() - 7 * DAY);
  });

  it('this week starts on Monday', () => {
    const w = extractTimeWindow('what happened this week', REF)!;
    expect(iso(w.since)).toBe('2024-03-11T00:00:00.000Z');
  });

  it('recently is a RECENT window of 14 days', () => {
    const w = extractTimeWindow('what has Mike been up to lately?', REF)!;
    expect(w.kind).toBe('RECENT');
    expect(w.since!.getTime()).toBe(REF.getTime() - 14 * DAY);
  });

  it('named months, days and years are ranges', () => {
    const m = extractTimeWindow('What did Caroline do in May 2023?', REF)!;
    expect([iso(m.since), iso(m.until)]).toEqual(['2023-05-01T00:00:00.000Z', '2023-06-01T00:00:00.000Z']);
    const d = extractTimeWindow('what happened on 8 May 2023', REF)!;
    expect([iso(d.since), iso(d.until)]).toEqual(['2023-05-08T00:00:00.000Z', '2023-05-09T00:00:00.000Z']);
    const y = extractTimeWindow('trips in 2022', REF)!;
    expect([iso(y.since), iso(y.until)]).toEqual(['2022-01-01T00:00:00.000Z', '2023-01-01T00:00:00.000Z']);
    const b = extractTimeWindow('between 2023-01-05 and March 3, 2023', REF)!;
    expect([iso(b.since), iso(b.until)]).toEqual(['2023-01-05T00:00:00.000Z', '2023-03-04T00:00:00.000Z']);
  });

  it('days without a year and weeks of a month are ranges too (the latest such days by the reference)', () => {
    // REF is 2024-03-13: October 12–16 without a year is the last one, 2023.
    const b = extractTimeWindow('What changed between October 12 and October 16?', REF)!;
    expect([b.kind, iso(b.since), iso(b.until)]).toEqual([
      'RANGE',
      '2023-10-12T00:00:00.000Z',
      '2023-10-17T00:00:00.000Z',
    ]);
    const m = extractTimeWindow('what happened between 1 March and 10 March', REF)!;
    expect([iso(m.since), iso(m.until)]).toEqual(['2024-03-01T00:00:00.000Z', '2024-03-11T00:00:00.000Z']);
    const w = extractTimeWindow('What did we decide in the last week of October?', REF)!;
    expect([iso(w.since), iso(w.until)]).toEqual(['2023-10-25T00:00:00.000Z', '2023-11-01T00:00:00.000Z']);
    const f = extractTimeWindow('the first week of May 2024', REF)!;
    expect([iso(f.since), iso(f.until)]).toEqual(['2024-05-01T00:00:00.000Z', '2024-05-08T00:00:00.000Z']);
    // Routed like their ISO forms.
    const iso12 = routeByRules('What changed between 2023-10-12 and 2023-10-16?', REF);
    const named = routeByRules('What changed between October 12 and October 16?', REF);
    expect(named.queryType).toBe(iso12.queryType);
    expect([iso(named.timeWindow!.since), iso(named.timeWindow!.until)]).toEqual([
      iso(iso12.timeWindow!.since),
      iso(iso12.timeWindow!.until),
    ]);
  });

  it('before and after are open windows', () => {
    const b = extractTimeWindow('what did she say before June 2023?', REF)!;
    expect([b.kind, b.since, iso(b.until)]).toEqual(['BEFORE', null, '2023-06-01T00:00:00.000Z']);
    const a = extractTimeWindow('anything after 2023-06-10?', REF)!;
    expect([a.kind, iso(a.since), a.until]).toEqual(['AFTER', '2023-06-11T00:00:00.000Z', null]);
    const s = extractTimeWindow('since May 2023', REF)!;
    expect(iso(s.since)).toBe('2023-05-01T00:00:00.000Z');
  });

  it('N units ago centres a window on that point', () => {
    const w = extractTimeWindow('the trip two weeks ago', REF)!;
    const centre = Date.UTC(2024, 1, 28);
    expect([w.since!.getTime(), w.until!.getTime()]).toEqual([centre - 7 * DAY, centre + 7 * DAY]);
  });

  it('no window without a time cue; the same query is stable for a different reference', () => {
    expect(extractTimeWindow('What are my fitness goals?', REF)).toBeNull();
    const other = new Date('2020-01-01T00:00:00Z');
    expect(extractTimeWindow('yesterday', other)!.since!.toISOString()).toBe('2019-12-31T00:00:00.000Z');
  });
});

function fakeLlm(reply: () => Promise<string>): Llm & { calls: ChatMessage[][] } {
  const calls: ChatMessage[][] = [];
  return {
    name: 'openai:fake',
    available: true,
    calls,
    chat: (messages) => {
      calls.push(messages);
      return reply();
    },
  };
}

describe('router LLM refinement', () => {
  const query = 'What has Mike been working on?';
  const rules = routeByRules(query, REF);

  it('accepts a valid reply that picks only candidate entities', async () => {
    const llm = fakeLlm(async () =>
      JSON.stringify({
        queryType: 'ENTITY_LOOKUP',
        lookupMode: 'BROAD',
        entityHints: ['mike ross'],
        attribute: null,
      }),
    );
    const refined = await refineRoute(llm, query, rules, ['Mike Ross', 'Caroline']);
    expect(refined.source).toBe('LLM');
    expect(refined.decision).toMatchObject({
      queryType: 'ENTITY_LOOKUP',
      lookupMode: 'BROAD',
      entityHints: ['Mike Ross'],
    });
    expect(llm.calls).toHaveLength(1);
  });

  it.each([
    ['an unknown label', { queryType: 'SOMETHING', entityHints: [] }],
    ['an invented entity', { queryType: 'ENTITY_LOOKUP', entityHints: ['Nobody'] }],
    ['a relationship with one entity', { queryType: 'RELATIONSHIP', entityHints: ['Caroline'] }],
    ['a temporal type without a window', { queryType: 'TEMPORAL', entityHints: [] }],
  ])('falls back to the rules on %s', async (_label, reply) => {
    const refined = await refineRoute(
      fakeLlm(async () => JSON.stringify(reply)),
      query,
      rules,
      ['Mike Ross', 'Caroline'],
    );
    expect(refined.source).toBe('RULES');
    expect(refined.decision).toBe(rules);
    expect(refined.fallbackReason).toMatch(/^malformed/);
  });

  it('falls back on prose, errors and timeouts', async () => {
    const prose = await refineRoute(
      fakeLlm(async () => 'I think it is a lookup'),
      query,
      rules,
      [],
    );
    expect(prose.fallbackReason).toMatch(/^malformed/);
    const failing = await refineRoute(
      fakeLlm(async () => {
        throw new LlmError('http', 'HTTP 500');
      }),
      query,
      rules,
      [],
    );
    expect(failing).toMatchObject({ source: 'RULES', fallbackReason: 'http: HTTP 500' });
    const slow = await refineRoute(
      fakeLlm(() => new Promise<string>(() => {})),
      query,
      rules,
      [],
      30,
    );
    expect(slow.source).toBe('RULES');
    expect(slow.fallbackReason).toMatch(/^timeout/);
  });

  it('does not call an unavailable model', async () => {
    const llm = { ...fakeLlm(async () => '{}'), available: false };
    const refined = await refineRoute(llm, query, rules, []);
    expect(refined).toEqual({ decision: rules, source: 'RULES', fallbackReason: null });
    expect(llm.calls).toHaveLength(0);
  });
});

describe('router handlers: pure parts', () => {
  it('finds an attribute by key, case and separators aside, then by containment', async () => {
    const { findAttribute } = await import('../../src/modules/retrieval/router/handlers/index.js');
    const attrs = { Phone_Number: '555', email: 'a@b.c', home_city: 'Boston', empty: '' };
    expect(findAttribute(attrs, 'phone number')).toEqual(['Phone_Number', '555']);
    expect(findAttribute(attrs, 'city')).toEqual(['home_city', 'Boston']);
    expect(findAttribute(attrs, 'phone')).toEqual(['Phone_Number', '555']);
    expect(findAttribute(attrs, 'empty')).toBeNull();
    expect(findAttribute(attrs, 'shoe_size')).toBeNull();
  });

  it('builds an extractive session summary: short messages whole, long ones by first and change sentences', async () => {
    const { extractiveSummary, COMPACT_MAX_CHARS } = await import(
      '../../src/modules/retrieval/session-summary.js'
    );
    const at = (d: string) => new Date(`${d}T10:00:00Z`);
    const filler =
      'The weekly sync covered the usual backlog items and nothing else of note came up. '.repeat(3);
    const summary = extractiveSummary('s1', [
      { content: 'We talked about hiking. Then lunch.', occurredAt: at('2023-05-01') },
      { content: '  Melanie   painted a lake!  More text here.', occurredAt: at('2023-05-02') },
      {
        content: `Org change: Marco moves to the platform team. ${filler}Lena takes over as Falcon lead.`,
        occurredAt: at('2023-05-03'),
      },
    ]);
    expect(summary).toBe(
      [
        'Session s1: 3 messages, 2023-05-01 – 2023-05-03.',
        '- We talked about hiking. Then lunch.',
        '- Melanie painted a lake! More text here.',
        '- Org change: Marco moves to the platform team. Lena takes over as Falcon lead.',
      ].join('\n'),
    );
    const long = extractiveSummary(
      's2',
      Array.from({ length: 100 }, (_, i) => ({
        content: i === 70 ? 'The launch moved to November 3.' : `Message number ${i} says something.`,
        occurredAt: at('2023-05-01'),
      })),
    );
    expect(long.length).toBeLessThanOrEqual(COMPACT_MAX_CHARS);
    // Over the cap, the line that states a change stays; plain lines go, the latest first.
    expect(long).toContain('- The launch moved to November 3.');
    expect(long).toContain('- Message number 0 says something.');
    expect(long).not.toContain('Message number 99 ');
  });

  it('cuts a long sentence at a word, never inside one', async () => {
    const { extractiveSummary } = await import('../../src/modules/retrieval/session-summary.js');
    const words = Array.from({ length: 80 }, (_, i) => `technician_region${i}`).join(' ');
    const summary = extractiveSummary('s', [
      { content: `${words}.`, occurredAt: new Date('2023-05-01T00:00:00Z') },
    ]);
    const line = summary.split('\n')[1]!;
    expect(line.endsWith('…')).toBe(true);
    const lastWord = line.slice(2, -1).split(' ').pop()!;
    expect(words.split(' ')).toContain(lastWord);
  });

  it('fits a compact by whole lines, keeping the ones that answer the query and state a change longest', async () => {
    const { fitSummary } = await import('../../src/modules/retrieval/session-summary.js');
    const summary = [
      'Session team: 5 messages, 2024-10-01 – 2024-10-14.',
      '- Standup notes: the build is green.',
      '- Org change: Marco moves to the platform team.',
      '- Lena takes over as Falcon lead from Monday.',
      '- Lunch is at noon on Friday.',
      '- The Harbor launch is on October 20.',
    ].join('\n');
    const fits = (max: number) => (text: string) => text.length <= max;
    expect(fitSummary(summary, 'Who leads Falcon?', fits(10_000))).toBe(summary);
    const tight = fitSummary(summary, 'Who leads Falcon?', fits(150))!;
    expect(tight.split('\n')).toEqual([
      'Session team: 5 messages, 2024-10-01 – 2024-10-14.',
      '- Org change: Marco moves to the platform team.',
      '- Lena takes over as Falcon lead from Monday.',
    ]);
    expect(fitSummary(summary, 'When is the Harbor launch?', fits(110))!.split('\n')).toEqual([
      'Session team: 5 messages, 2024-10-01 – 2024-10-14.',
      '- The Harbor launch is on October 20.',
    ]);
    expect(fitSummary(summary, 'anything', fits(20))).toBeNull();
  });
});
