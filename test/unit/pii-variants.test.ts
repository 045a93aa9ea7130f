import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { maskPii, normaliseForDetection } from '../../src/domain/pii.js';

/**
 * Generated disguises of personal data: the same value written with other separators, other
 * digit scripts, invisible characters and obfuscated `@`. Masking must see through every one:
 * no digits of the value and no address survive.
 */

const ZERO = {
  ascii: 0x30,
  fullwidth: 0xff10,
  arabicIndic: 0x0660,
  extendedArabic: 0x06f0,
  devanagari: 0x0966,
};
const INVISIBLES = ['\u00ad', '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff'];
const SEPARATORS = [' ', '-', '.', '/', '·', ' . ', ' / ', '\u00a0', '\u202f'];

const script = fc.constantFrom(...(Object.values(ZERO) as number[]));
const separator = fc.constantFrom(...SEPARATORS);

/** Digits in another script, groups joined by one separator. */
function spell(groups: string[], zero: number, sep: string): string {
  const digits = (g: string) => [...g].map((d) => String.fromCodePoint(zero + Number(d))).join('');
  return groups.map(digits).join(sep);
}

/** Invisible characters sprinkled at the given positions. */
function sprinkle(text: string, at: number[], invisible: string): string {
  const chars = [...text];
  for (const i of at) chars.splice(i % (chars.length + 1), 0, invisible);
  return chars.join('');
}

const invisibles = fc.tuple(fc.array(fc.nat(40), { maxLength: 3 }), fc.constantFrom(...INVISIBLES));

const phone = fc
  .tuple(
    fc.constantFrom<string[]>(['415', '555', '0144'], ['212', '736', '1234'], ['650', '253', '0000']),
    script,
    separator,
    fc.constantFrom('', '+1 ', '1 '),
  )
  .map(([groups, zero, sep, prefix]) => ({
    text: prefix + spell(groups, zero, sep),
    digits: groups.join(''),
  }));

const card = fc
  .tuple(
    fc.constantFrom('4111111111111111', '5500000000000004', '4012888888881881', '6011111111111117'),
    script,
    separator,
  )
  .map(([number, zero, sep]) => ({
    text: spell(number.match(/\d{4}/g)!, zero, sep),
    digits: number,
  }));

const email = fc
  .tuple(
    fc.constantFrom('alice', 'bob.smith', 'c_d+tag'),
    fc.constantFrom('@', '(at)', '[at]', ' (at) ', '＠'),
    fc.constantFrom('example.com', 'mail.example.org', 'localhost', '[127.0.0.1]'),
  )
  .map(([local, at, domain]) => ({ text: `${local}${at}${domain}`, digits: '', local }));

const value = fc.oneof(phone, card, email);

describe('PII masking sees through disguises', () => {
  it('masks every generated variant of a phone, a card or an address', () => {
    fc.assert(
      fc.property(
        value,
        invisibles,
        fc.constantFrom('note: ', 'Call ', '(', '— '),
        (v, [at, invisible], lead) => {
          const disguised = sprinkle(v.text, at, invisible);
          const masked = maskPii(`${lead}${disguised} thanks`);
          expect(masked, JSON.stringify(disguised)).toMatch(/\[(phone|card|email|snils|inn|passport)\]/);
          const seen = normaliseForDetection(masked).text;
          if (v.digits)
            expect(seen.replace(/\D/g, ''), JSON.stringify(disguised)).not.toContain(v.digits.slice(-7));
          if ('local' in v) expect(seen, JSON.stringify(disguised)).not.toContain(`${v.local}@`);
          expect(masked.endsWith(' thanks'), masked).toBe(true);
        },
      ),
      { numRuns: 1500 },
    );
  });

  it('keeps the text around a value as written (offsets map back through the normalisation)', () => {
    expect(maskPii('ali\u00adce@example.com, ４１５-５５５-０１４４!')).toBe('[email], [phone]!');
  });
});
