import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config.js';
import {
  type LatinDetector,
  detectTextSearchConfig,
  dominantScript,
  normaliseTextSearch,
} from '../../src/domain/text-search.js';
import { loadLatinDetector } from '../../src/providers/language-detector.js';

// Per-chunk language detection for `auto` namespaces: script first, n-grams for Latin text.

const AVAILABLE = new Set([
  'english',
  'russian',
  'german',
  'french',
  'spanish',
  'serbian',
  'greek',
  'simple',
]);

describe('text search settings', () => {
  it('accepts auto and configuration names, case-insensitively, and nothing that is not a name', () => {
    expect(normaliseTextSearch(' Russian ')).toBe('russian');
    expect(normaliseTextSearch('AUTO')).toBe('auto');
    expect(normaliseTextSearch('pg_catalog.english')).toBe('pg_catalog.english');
    expect(normaliseTextSearch("russian'; drop table chunks")).toBeNull();
    expect(normaliseTextSearch('')).toBeNull();
  });
});

describe('MEMGATE_TEXT_SEARCH', () => {
  it('defaults to english and takes auto or a configuration name', () => {
    expect(parseConfig({}).textSearch).toBe('english');
    expect(parseConfig({ MEMGATE_TEXT_SEARCH: 'Russian' }).textSearch).toBe('russian');
    expect(parseConfig({ MEMGATE_TEXT_SEARCH: 'auto' }).textSearch).toBe('auto');
    expect(() => parseConfig({ MEMGATE_TEXT_SEARCH: 'rus sian' })).toThrow(ConfigError);
  });
});

describe('language detection per chunk', () => {
  let latin: LatinDetector;
  const detect = (text: string) =>
    detectTextSearchConfig(text, { available: AVAILABLE, fallback: 'english', detectLatin: latin });
  beforeAll(async () => {
    latin = await loadLatinDetector();
  });

  it('decides Cyrillic by script, even for one word, with Serbian only by its own letters', () => {
    expect(detect('телефон Ивана')).toBe('russian');
    expect(detect('Боб любит чай')).toBe('russian');
    expect(detect('настройка VPN для сотрудников')).toBe('russian');
    expect(detect('Аліса переїхала до Берліна')).toBe('russian');
    expect(detect('Љубав и њен живот')).toBe('serbian');
    expect(detect('Η συνάντηση μετακινήθηκε')).toBe('greek');
  });

  it('detects Latin-script languages with n-grams when the text is long enough', () => {
    expect(detect('the deploy failed again last night')).toBe('english');
    expect(detect('Das Passwort wurde gestern zurückgesetzt')).toBe('german');
    expect(detect('la réunion est reportée à mardi prochain')).toBe('french');
    expect(detect('la reunión se movió al martes por la tarde')).toBe('spanish');
  });

  it('falls back for short, symbol-only or unsupported text, and for configurations the database lacks', () => {
    expect(detect('Bob prefers tea')).toBe('english');
    expect(detect('INV-2041 ✓ 42')).toBe('english');
    expect(detect('会议改到星期二')).toBe('english');
    expect(
      detectTextSearchConfig('Das Passwort wurde gestern zurückgesetzt', {
        available: new Set(['english']),
        fallback: 'english',
        detectLatin: latin,
      }),
    ).toBe('english');
  });

  it('counts letters by script, ignoring digits and punctuation', () => {
    expect(dominantScript('VPN: подключение 2024')).toEqual({ script: 'cyrillic', letters: 14 });
    expect(dominantScript('12:30 — ok')).toEqual({ script: 'latin', letters: 2 });
  });
});
