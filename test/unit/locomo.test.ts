import { describe, expect, it } from 'vitest';
import { conversationIdOf, locomoToObservations, parseLocomoDateTime } from '../../src/eval/locomo-jsonl.js';

describe('LoCoMo session times', () => {
  it('reads "h:mm am|pm on D Month, YYYY" as UTC', () => {
    expect(parseLocomoDateTime('1:47 pm on 18 May, 2023').toISOString()).toBe('2023-05-18T13:47:00.000Z');
    expect(parseLocomoDateTime('10:37 am on 27 June, 2023').toISOString()).toBe('2023-06-27T10:37:00.000Z');
    expect(parseLocomoDateTime('9:55 am on 22 October, 2023').toISOString()).toBe('2023-10-22T09:55:00.000Z');
  });

  it('puts 12 am at midnight and 12 pm at noon', () => {
    expect(parseLocomoDateTime('12:21 am on 27 June, 2023').toISOString()).toBe('2023-06-27T00:21:00.000Z');
    expect(parseLocomoDateTime('12:05 pm on 1 January, 2024').toISOString()).toBe('2024-01-01T12:05:00.000Z');
  });

  it('refuses what it cannot read or what cannot exist', () => {
    expect(() => parseLocomoDateTime('yesterday')).toThrow(/unrecognised/);
    expect(() => parseLocomoDateTime('13:10 pm on 1 May, 2023')).toThrow(/impossible/);
    expect(() => parseLocomoDateTime('1:10 pm on 31 June, 2023')).toThrow(/impossible/);
    expect(() => parseLocomoDateTime('1:10 pm on 3 Smarch, 2023')).toThrow(/impossible/);
  });
});

describe('LoCoMo conversation → observations', () => {
  const fixture = {
    speaker_a: 'Caroline',
    speaker_b: 'Melanie',
    session_2_date_time: '1:56 pm on 8 May, 2023',
    session_2: [
      { speaker: 'Melanie', dia_id: 'D2:1', text: 'Back again!' },
      {
        speaker: 'Caroline',
        dia_id: 'D2:2',
        text: 'Look at this.',
        img_url: ['https://example.org/x.jpg'],
        blip_caption: 'a photo of a dog on a beach',
      },
    ],
    session_1_date_time: '1:47 pm on 18 May, 2023',
    session_1: [{ speaker: 'Caroline', dia_id: 'D1:1', text: 'Hey Mel!' }],
    // A date without a session (the dataset has these) is not a session.
    session_3_date_time: '2:00 pm on 9 May, 2023',
    session_1_summary: 'not a session',
    qa: [],
  };

  it('makes one observation per turn, sessions in numeric order, one second apart within a session', () => {
    const obs = locomoToObservations(fixture, '26');
    expect(obs.map((o) => o.source.externalId)).toEqual(['D1:1', 'D2:1', 'D2:2']);
    expect(obs[0]).toEqual({
      source: { system: 'locomo', stream: '26', externalId: 'D1:1' },
      kind: 'message',
      occurredAt: '2023-05-18T13:47:00.000Z',
      actor: { type: 'person', id: 'Caroline' },
      content: 'Caroline: Hey Mel!',
      data: { sessionId: '26:session_1', diaId: 'D1:1', session: 1 },
    });
    expect(obs[1]!.occurredAt).toBe('2023-05-08T13:56:00.000Z');
    expect(obs[2]!.occurredAt).toBe('2023-05-08T13:56:01.000Z');
    expect(obs[2]!.content).toBe('Caroline: Look at this. [image: a photo of a dog on a beach]');
    // With no spacing a session's turns share its time, as minute-resolution exports send them.
    const equal = locomoToObservations(fixture, '26', 0);
    expect(equal.map((o) => o.occurredAt)).toEqual([
      '2023-05-18T13:47:00.000Z',
      '2023-05-08T13:56:00.000Z',
      '2023-05-08T13:56:00.000Z',
    ]);
    expect(obs[2]!.data).toEqual({ sessionId: '26:session_2', diaId: 'D2:2', session: 2 });
  });

  it('reads the nested shape of the full dataset and names the conversation by sample_id or file', () => {
    const nested = { sample_id: 'conv-26', conversation: fixture };
    expect(conversationIdOf(nested, '/data/26.json')).toBe('conv-26');
    expect(conversationIdOf(fixture, '/data/26.json')).toBe('26');
    expect(locomoToObservations(nested, 'conv-26')).toHaveLength(3);
  });

  it('fails loudly on a session without a time', () => {
    expect(() => locomoToObservations({ session_1: [] }, 'x')).toThrow(/session_1_date_time/);
  });
});
