import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  combinePii,
  detectPii,
  detectPiiInJson,
  innValid,
  luhnValid,
  maskJson,
  maskPii,
  mayHoldPii,
  mergeExplicit,
  scanPii,
  snilsValid,
} from '../../src/domain/pii.js';

const categories = (text: string) => detectPii(text).categories;

describe('detectPii', () => {
  it('returns spans with offsets into the text', () => {
    const text = 'mail ivan.petrov@example.ru now';
    expect(detectPii(text)).toEqual({
      pii: true,
      categories: ['email'],
      spans: [{ category: 'email', start: 5, end: 27 }],
    });
    expect(text.slice(5, 27)).toBe('ivan.petrov@example.ru');
  });

  it('reports nothing for text without personal data', () => {
    expect(detectPii('Deploy failed on step 3')).toEqual({ pii: false, categories: [], spans: [] });
  });
});

describe('email', () => {
  it('finds ordinary and internationalised addresses', () => {
    expect(maskPii('to ivan.petrov+kb@mail.example.co.uk, cc: мария@пример.рф')).toBe(
      'to [email], cc: [email]',
    );
  });

  it('ignores handles and file names', () => {
    expect(categories('@alice pushed config@v2 and logo@2x.png')).toEqual([]);
  });
});

describe('phone', () => {
  it.each([
    '+7 (916) 123-45-67',
    '+79161234567',
    '8 (916) 123-45-67',
    '8-916-123-45-67',
    '89161234567',
    '8 800 555 35 35',
    '+1 415 555 2671',
    '+1 (415) 555-2671',
    '(415) 555-2671',
    '415-555-2671',
    '+44 20 7946 0958',
    '+33 1 23 45 67 89',
    '415.555.0144',
    '1.415.555.0144',
    '+1.415.555.0144',
  ])('masks %s', (phone) => {
    expect(maskPii(`call ${phone} today`)).toBe('call [phone] today');
  });

  it('stops at the end of the number instead of swallowing the next one', () => {
    expect(maskPii('+7 916 123 45 67 2024')).toBe('[phone] 2024');
  });

  it.each([
    'in 2024 and 1999',
    'room 112, ext 4021',
    'on 2024-01-15',
    'at 2024-01-15T10:30:00Z',
    'on 15.01.2024 at 10:30',
    'version 1.2.3 / v10.24.1234',
    'build 20240115',
    'years 2019-2024',
    'ip 192.168.100.200',
    'uuid 550e8400-e29b-41d4-a716-446655440000',
    'price 1 000 000 000',
    'epoch 1700000000 and 1700000000000',
    '+7 alone, +12',
    'release 415.555.0144.2 and 1.415.555.0144.9',
    'ip 10.415.555.0144',
    'ratio 0.415.555.0144',
  ])('does not see a phone in "%s"', (text) => {
    expect(categories(text)).toEqual([]);
  });
});

describe('payment card', () => {
  it('accepts 13–19 digits with optional spaces or dashes when the Luhn check passes', () => {
    expect(maskPii('4111 1111 1111 1111')).toBe('[card]');
    expect(maskPii('5555-5555-5555-4444')).toBe('[card]');
    expect(maskPii('amex 378282246310005')).toBe('amex [card]');
    expect(maskPii('visa13 4222222222222')).toBe('visa13 [card]');
  });

  it('rejects a number whose Luhn check fails', () => {
    expect(luhnValid('4111111111111111')).toBe(true);
    expect(luhnValid('4111111111111112')).toBe(false);
    expect(categories('4111 1111 1111 1112')).toEqual([]);
  });

  it('does not mistake millisecond timestamps or long hex ids for cards', () => {
    expect(categories('at 1700000000000 ms, sha 4f3c2a1b9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b')).toEqual([]);
  });
});

describe('Russian passport', () => {
  it('finds series and number in the usual layouts', () => {
    expect(maskPii('паспорт 4510 123456, выдан')).toBe('паспорт [passport], выдан');
    expect(maskPii('серия 45 10 № 654321')).toBe('серия [passport]');
    expect(categories('4510 123456')).toEqual(['passport_rf']);
  });

  it('accepts ten bare digits only next to the word passport', () => {
    expect(maskPii('Паспорт: 4510123456')).toBe('Паспорт: [passport]');
    expect(categories('order 4510123457')).not.toContain('passport_rf');
  });
});

describe('SNILS', () => {
  it('validates the control number (sum below 100, and mod 101 above it)', () => {
    expect(snilsValid('112-233-445 95')).toBe(true);
    expect(snilsValid('987-654-321 83')).toBe(true);
    expect(snilsValid('112-233-445 96')).toBe(false);
    expect(snilsValid('987-654-321 84')).toBe(false);
  });

  it('masks valid SNILS and leaves invalid ones', () => {
    expect(maskPii('СНИЛС 112-233-445 95 и 112-233-445 96')).toBe('СНИЛС [snils] и 112-233-445 96');
    expect(maskPii('snils 112 233 445 95')).toBe('snils [snils]');
  });

  it('accepts eleven bare digits next to the word SNILS, or alone when the control number holds', () => {
    expect(maskPii('СНИЛС: 11223344595')).toBe('СНИЛС: [snils]');
    expect(maskPii('id 11223344595')).toBe('id [snils]');
    expect(categories('id 11223344596')).not.toContain('snils');
  });
});

describe('INN', () => {
  it('validates 10- and 12-digit control digits', () => {
    expect(innValid('7707083893')).toBe(true);
    expect(innValid('500100732259')).toBe(true);
    expect(innValid('7707083894')).toBe(false);
    expect(innValid('500100732258')).toBe(false);
    expect(innValid('0000000000')).toBe(false);
  });

  it('masks valid INNs only', () => {
    expect(maskPii('ИНН 7707083893, ИНН 500100732259, не ИНН 7707083894')).toBe(
      'ИНН [inn], ИНН [inn], не ИНН 7707083894',
    );
  });

  it('ignores a valid-looking run that is part of a longer token', () => {
    expect(categories('v7707083893 7707083893.5 item-7707083893 77070838931')).toEqual([]);
  });
});

describe('marks', () => {
  it('merges explicit marks such as fio into what was detected', () => {
    const detected = detectPii('ivan@example.com');
    expect(mergeExplicit(detected, ['FIO', ' pii ', ''])).toMatchObject({
      pii: true,
      categories: ['email', 'fio', 'pii'],
    });
    expect(mergeExplicit(detectPii('nothing here'), ['fio'])).toMatchObject({
      pii: true,
      categories: ['fio'],
    });
    expect(mergeExplicit(detectPii('nothing here'), [])).toMatchObject({ pii: false, categories: [] });
  });

  it('detects inside JSON string leaves and combines marks', () => {
    const data = { contact: { mail: 'a@b.io', phones: ['+7 916 123-45-67'] }, count: 89161234567 };
    expect(detectPiiInJson(data)).toEqual({ pii: true, categories: ['email', 'phone'] });
    expect(combinePii({ pii: false, categories: [] }, { pii: true, categories: ['inn'] })).toEqual({
      pii: true,
      categories: ['inn'],
    });
  });
});

describe('masking', () => {
  it('is deterministic and keeps the text around values', () => {
    const text = 'Клиент ivan@example.ru, тел. +7 916 123-45-67, карта 4111 1111 1111 1111, ИНН 7707083893.';
    const masked = 'Клиент [email], тел. [phone], карта [card], ИНН [inn].';
    expect(maskPii(text)).toBe(masked);
    expect(maskPii(text)).toBe(maskPii(text));
    expect(maskPii(masked)).toBe(masked);
  });

  it('masks every string leaf of JSON and keeps keys and other values', () => {
    const value = { email: 'a@b.io', nested: [{ note: 'call 8 916 123 45 67' }, 42, null, true] };
    expect(maskJson(value)).toEqual({ email: '[email]', nested: [{ note: 'call [phone]' }, 42, null, true] });
    expect(value.email).toBe('a@b.io');
  });
});

describe('mayHoldPii', () => {
  it('never screens out a text the detectors would find something in', () => {
    const alphabet = [...'0123456789 -()+.№@ax:/\n', '\u00a0'];
    const text = fc.array(fc.constantFrom(...alphabet), { maxLength: 40 }).map((cs) => cs.join(''));
    const shaped = fc.constantFrom(
      '+7 916 123-45-67',
      '8 (916) 123-45-67',
      '+44 20 7946 0958',
      '415.555.0144',
      '4111 1111 1111 1111',
      '112-233-445 95',
      'паспорт 4510 123456',
      '7707083893',
      'ivan@example.ru',
    );
    fc.assert(
      fc.property(text, shaped, text, (a, b, c) => {
        for (const t of [a, `${a}${b}${c}`, `${b}${c}`]) {
          if (!mayHoldPii(t)) expect(scanPii(t).spans).toEqual([]);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('lets through every example this file detects', () => {
    for (const t of ['+7 916 123-45-67', '4111 1111 1111 1111', 'a@b.ru', '7707083893']) {
      expect(mayHoldPii(t)).toBe(true);
      expect(detectPii(t)).toEqual(scanPii(t));
    }
    expect(mayHoldPii('Alice works_on Apollo (valid 2024-01-01 → 2025-03-01)')).toBe(false);
  });
});
