import { describe, expect, it } from 'vitest';
import { extractTimeWindow, routeByRules } from '../../src/modules/retrieval/router/index.js';

// Russian cues of the offline router: attribute questions, relationships, time windows.
const REF = new Date('2026-03-20T12:00:00.000Z');
const iso = (d: Date | null | undefined) => d?.toISOString() ?? null;

describe('router rules in Russian', () => {
  it.each([
    ['Какой телефон у Ивана Петрова?', 'phone', 'Ивана Петрова'],
    ['какая почта у Анны?', 'email', 'Анны'],
    ['телефон Ивана', 'phone', 'Ивана'],
    ['Какая должность у Анны Кузнецовой?', 'role', 'Анны Кузнецовой'],
    ['Какой адрес у «Полярной звезды»?', 'address', 'Полярной звезды'],
  ])('%s → ENTITY_LOOKUP of %s', (query, attribute, entity) => {
    const d = routeByRules(query, REF);
    expect(d).toMatchObject({ queryType: 'ENTITY_LOOKUP', lookupMode: 'ATTRIBUTE', attribute });
    expect(d.entityHints[0]).toBe(entity);
  });

  it.each([
    ['Как связаны Тимур и Алина?', ['Тимур', 'Алина']],
    ['Что общего у Ольги и Павла?', ['Ольги', 'Павла']],
    ['Какая связь между «Авророй» и «Восходом»?', ['Авророй', 'Восходом']],
  ])('%s → RELATIONSHIP', (query, hints) => {
    expect(routeByRules(query, REF)).toMatchObject({ queryType: 'RELATIONSHIP', entityHints: hints });
  });

  it.each([
    ['Кто такая Мария Соколова?', 'ENTITY_LOOKUP'],
    ['Расскажи про Игоря', 'ENTITY_LOOKUP'],
    ['Расскажи всё о проекте «Аврора»', 'EXPLORATORY'],
    ['Что случилось вчера?', 'TEMPORAL'],
    ['Что было в марте?', 'TEMPORAL'],
    ['С кем я встречался на прошлой неделе?', 'TEMPORAL_FACETS'],
    ['Как получить гостевые пропуска?', 'ASPECT'],
    ['Что нового у Игоря и что было в Москве?', 'ENTITY_LOOKUP'],
  ])('%s → %s', (query, type) => {
    expect(routeByRules(query, REF).queryType).toBe(type);
  });
});

describe('Russian time windows', () => {
  it.each([
    ['вчера', '2026-03-19T00:00:00.000Z', '2026-03-20T00:00:00.000Z'],
    ['позавчера', '2026-03-18T00:00:00.000Z', '2026-03-19T00:00:00.000Z'],
    ['на прошлой неделе', '2026-03-13T12:00:00.000Z', '2026-03-20T12:00:00.000Z'],
    ['за последние 3 дня', '2026-03-17T12:00:00.000Z', '2026-03-20T12:00:00.000Z'],
    ['за последнюю неделю', '2026-03-13T12:00:00.000Z', '2026-03-20T12:00:00.000Z'],
    ['три дня назад', '2026-03-17T00:00:00.000Z', '2026-03-18T00:00:00.000Z'],
    // This year's March (it has begun); May not yet, so last year's.
    ['в марте', '2026-03-01T00:00:00.000Z', '2026-04-01T00:00:00.000Z'],
    ['что обсуждали в мае', '2025-05-01T00:00:00.000Z', '2025-06-01T00:00:00.000Z'],
    ['в декабре 2024', '2024-12-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z'],
    ['созвон 8 марта', '2026-03-08T00:00:00.000Z', '2026-03-09T00:00:00.000Z'],
    ['встреча 5 апреля 2025 года', '2025-04-05T00:00:00.000Z', '2025-04-06T00:00:00.000Z'],
  ])('%s', (query, since, until) => {
    const w = extractTimeWindow(query, REF);
    expect([iso(w?.since), iso(w?.until)]).toEqual([since, until]);
  });

  it('reads no window from words that only look like one', () => {
    expect(extractTimeWindow('Встреча в Москве', REF)).toBeNull();
    expect(extractTimeWindow('маяк на мысе', REF)).toBeNull();
    expect(extractTimeWindow('марка машины', REF)).toBeNull();
  });
});
