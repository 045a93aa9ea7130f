import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatLanguageReport, readLanguageSet, runLanguageEval } from '../../src/eval/languages.js';

// The language harness end to end on a two-question set, and the committed sets' shape.
describe('language evaluation harness', () => {
  const dir = mkdtempSync(join(tmpdir(), 'memgate-lang-eval-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads the committed sets', () => {
    const ru = readLanguageSet('eval/sets/ru.json');
    const en = readLanguageSet('eval/sets/en.json');
    expect([ru.documents.length + ru.observations.length, ru.questions.length]).toEqual([50, 99]);
    expect([en.documents.length + en.observations.length, en.questions.length]).toEqual([25, 25]);
    const ids = new Set([...ru.documents.map((d) => d.key), ...ru.observations.map((o) => o.id)]);
    expect(ru.questions.flatMap((q) => q.evidence).filter((e) => !ids.has(e))).toEqual([]);
  });

  it('scores a set per configuration: russian stems the inflected question, english does not', async () => {
    const file = join(dir, 'tiny.json');
    writeFileSync(
      file,
      JSON.stringify({
        language: 'ru',
        documents: [
          { key: 'pass', title: 'Пропуск', content: 'Гостевой пропуск оформляют по заявке.' },
          { key: 'vpn', title: 'Сеть', content: 'Для подключения к сети нужен клиент.' },
        ],
        observations: [
          { id: 'm1', occurredAt: '2026-03-02T09:00:00Z', content: 'Мария переехала в Казань.' },
        ],
        questions: [
          { question: 'гостевые пропуска', evidence: ['pass'] },
          { question: 'кто переезжал в Казань', evidence: ['m1'] },
        ],
      }),
    );
    const report = await runLanguageEval({
      files: [file],
      modes: ['LEXICAL'],
      textSearch: ['russian', 'english'],
      mixed: false,
      dataDir: dir,
      embedder: 'hashing:64',
    });
    const r10 = Object.fromEntries(report.runs.map((r) => [r.textSearch, r.overall.recall[10]]));
    expect(r10).toEqual({ russian: 1, english: 0.5 });
    const english = report.runs.find((r) => r.textSearch === 'english')!;
    expect(english.misses.map((m) => m.question)).toEqual(['гостевые пропуска']);
    expect(formatLanguageReport(report)).toMatch(
      /eval-ru-russian\s+russian\s+ru\s+LEXICAL\s+2\s+1\.000\s+1\.000/,
    );
  }, 120_000);
});
