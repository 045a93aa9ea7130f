import { describe, expect, it } from 'vitest';
import { BONUS } from '../../src/modules/retrieval/pipeline/fusion.js';
import { matchWords, textSignals } from '../../src/modules/retrieval/pipeline/text-signals.js';

describe('textSignals', () => {
  const items = [
    {
      title: 'message · Caroline · 2023-05-08 13:47 UTC',
      text: 'Caroline: I went to a support group yesterday.',
    },
    {
      title: 'message · Melanie · 2023-05-08 13:48 UTC',
      text: 'Melanie: That sounds powerful, tell me more!',
    },
    {
      title: 'Deploy guide',
      heading: 'Rollback',
      text: 'Run the rollback script, then the support checklist.',
    },
  ];

  it('the label bonus is one rank step when the title or heading holds a query word', () => {
    const [caroline, melanie, guide] = textSignals('When did Caroline go to the support group?', items);
    expect(caroline!.label).toBe(BONUS.labelMatch);
    expect(melanie!.label).toBe(0);
    expect(guide!.label).toBe(0);
    expect(textSignals('how do I roll back? rollback', items)[2]!.label).toBe(BONUS.labelMatch);
    expect(BONUS.labelMatch).toBeCloseTo(1 / 61 - 1 / 62, 12);
  });

  it('numbers in a title (its timestamp) are no label match', () => {
    expect(textSignals('what happened in 2023', items).map((s) => s.label)).toEqual([0, 0, 0]);
  });

  it('own terms: the share of the query words, weighed by rarity among the items, the own text holds', () => {
    const [caroline, melanie, guide] = textSignals('support group', items);
    // "group" is rarer among the items than "support": Caroline holds both, the guide one.
    expect(caroline!.terms).toBeCloseTo(BONUS.ownTermsMax, 12);
    expect(melanie!.terms).toBe(0);
    expect(guide!.terms).toBeGreaterThan(0);
    expect(guide!.terms).toBeLessThan(BONUS.ownTermsMax / 2);
  });

  it('asking: a penalty of two rank steps when the own text ends with a question', () => {
    const asking = (text: string) => textSignals('support', [{ title: null, text }])[0]!.asking;
    expect(asking('Melanie: How was the support group?')).toBe(-BONUS.askingPenalty);
    expect(asking('Она спросила: «Где пропуск?»')).toBe(-BONUS.askingPenalty);
    expect(asking('你去了支持小组吗？')).toBe(-BONUS.askingPenalty);
    expect(asking('Is it fixed? Yes, the support script ran.')).toBe(0);
    expect(BONUS.askingPenalty).toBeCloseTo(2 * (1 / 61 - 1 / 62), 12);
  });

  it('nothing to compare: all 0', () => {
    expect(textSignals('?? ok', items)).toEqual(items.map(() => ({ label: 0, terms: 0, asking: 0 })));
    expect(textSignals('support', [])).toEqual([]);
  });

  it('own terms count whole words only: a query word inside a longer word is not held', () => {
    const held = (text: string) =>
      textSignals('port', [
        { title: null, text },
        { title: null, text: 'x' },
      ])[0]!.terms;
    expect(held('The PORT opened.')).toBeGreaterThan(0);
    expect(held('support, passport, portal, port_2, 𐐨port')).toBe(0);
    expect(held('Ｐｏｒｔ: ready')).toBeGreaterThan(0);
  });

  it('words are case-folded runs of three letters or digits or more, in any script', () => {
    expect([...matchWords('Пароль от VPN: ok, A-142!')]).toEqual(['пароль', 'vpn', '142']);
  });
});
