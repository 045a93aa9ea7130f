import { type TimeWindow, extractTimeWindow } from './time-window.js';

/**
 * The deterministic, offline router: English and Russian cues classify a query
 * and extract entity hints, a time window and an attribute name. No model, no database, no
 * clock — the reference time comes from the caller.
 */

export const QUERY_TYPES = [
  'ENTITY_LOOKUP',
  'RELATIONSHIP',
  'TEMPORAL',
  'TEMPORAL_FACETS',
  'EXPLORATORY',
  'ASPECT',
  'NO_SEARCH',
] as const;
export type QueryType = (typeof QUERY_TYPES)[number];

export const LOOKUP_MODES = ['ATTRIBUTE', 'BROAD'] as const;
export type LookupMode = (typeof LOOKUP_MODES)[number];

export interface RouteDecision {
  queryType: QueryType;
  /** ENTITY_LOOKUP only. */
  lookupMode: LookupMode | null;
  entityHints: string[];
  /** Normalised attribute key asked for ("phone number" → "phone_number"), ENTITY_LOOKUP only. */
  attribute: string | null;
  timeWindow: TimeWindow | null;
  /** Which rule decided, for traces and tests. */
  reason: string;
}

const GREETING =
  /^\s*(?:hi|hello|hey|yo|hiya|thanks|thank you|thx|ok|okay|cool|great|bye|goodbye|good (?:morning|afternoon|evening|night)|привет|здравствуй(?:те)?|спасибо|пока|ок)(?:\s+(?:there|again|so much|a lot|you|all))*\s*[!.?)]*\s*$/iu;

// Capitalised words that start questions or are otherwise never entities.
const NOT_ENTITY = new Set(
  (
    'I Im Ive Id Ill Me My Mine We Our You Your He She It They Them Their His Her What Who Whom Whose When Where Why ' +
    'How Which Is Are Was Were Do Does Did Can Could Would Should Will Shall May Might Must Has Have Had Tell Show ' +
    'Give List Find Explain Describe The A An And Or But If In On At Of For To From With By About Any Some All ' +
    'This That These Those There Here Please Hi Hello Hey Thanks Yes No Not Last Past Next Since Before After Between ' +
    'Today Yesterday Tomorrow Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April ' +
    'June July August September October November December Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec ' +
    'Что Кто Где Когда Как Почему Какие Какой Какая Какое Каков Чей Чья Зачем Сколько Куда Откуда Расскажи Покажи ' +
    'Найди Напомни Скажи Подскажи Вчера Сегодня Завтра'
  ).split(' '),
);

const ENTITY_WORD = String.raw`[\p{Lu}][\p{L}\d'’.-]*`;

/** Names in a query: quoted strings, then runs of capitalised words (possessive stripped). */
export function extractEntityHints(query: string): string[] {
  const hints: string[] = [];
  const add = (raw: string) => {
    const value = raw
      .replace(/['’]s$/u, '')
      .replace(/[.,;:!?'’]+$/u, '')
      .trim();
    if (value.length < 2 || hints.some((h) => h.toLowerCase() === value.toLowerCase())) return;
    hints.push(value);
  };
  let rest = query;
  for (const m of query.matchAll(/["“«]([^"”»]{2,80})["”»]/gu)) {
    add(m[1]!);
    rest = rest.replace(m[0], ' , ');
  }
  const runs = rest.matchAll(new RegExp(String.raw`${ENTITY_WORD}(?:\s+${ENTITY_WORD})*`, 'gu'));
  for (const m of runs) {
    const words = m[0].split(/\s+/u).map((w) => w.replace(/['’]s$/u, '').replace(/[.,;:!?]+$/u, ''));
    // Drop leading/trailing function words ("What", "Did", "Caroline" → "Caroline").
    while (words.length > 0 && NOT_ENTITY.has(words[0]!)) words.shift();
    while (words.length > 0 && NOT_ENTITY.has(words[words.length - 1]!)) words.pop();
    if (words.length > 0) add(words.join(' '));
  }
  return hints;
}

const RELATIONSHIP =
  /\b(?:know each other|knows?\s+\S+|met\b|relationship (?:between|with|to)|related to|connected to|connection between|link between|relation between|in common|how (?:is|are|was|were) .+ (?:related|connected|linked))/iu;
// JavaScript's \b knows ASCII letters only, so Russian cues start after a non-letter instead.
const RELATIONSHIP_RU =
  /(?<!\p{L})(?:как (?:связаны|связан[аоы]?|относятся|познакомились)|связь между|чем связаны|знаком[аы]? ли|что общего (?:у|между)|какие отношения)(?!\p{L})/iu;
const FACETS =
  /\b(?:what (?:topics|subjects|themes|things|people)|which (?:topics|subjects|people|projects|entities|things)|who did (?:i|we) (?:talk|speak|chat|meet)|what (?:did|have) (?:i|we) (?:talk|talked|discuss|discussed|chat|chatted|speak|spoke) about|what (?:was|were) (?:i|we) (?:talking|discussing)|what came up|summar(?:y|ise|ize)|digest|recap|overview|briefing)\b|о ч[её]м (?:я |мы )?(?:говорил|обсуждал|писал)|какие темы|с кем (?:я )?(?:говорил|общался|встречался)/iu;
const EXPLORATORY =
  /^(?:explain|describe|explore|walk me through|give me an overview|tell me everything|what do (?:i|we|you) know about|how does .+ work|how do .+ work|what is known about)\b|^(?:расскажи (?:всё|все)|что (?:известно|мы знаем)) (?:о|об|про)(?!\p{L})/iu;
const BROAD_LOOKUP =
  /^(?:who (?:is|was|are)|tell me about|what about|info(?:rmation)? (?:on|about))\b|^(?:кто так(?:ой|ая|ие)|расскажи (?:о|об|про)|что (?:с|у|нового у))(?!\p{L})/iu;
// "what is John's phone number", "John's email?", "what's the address of Acme"
const POSSESSIVE_ATTRIBUTE = new RegExp(
  String.raw`(${ENTITY_WORD}(?:\s+${ENTITY_WORD})*)['’]s\s+((?:[\p{Ll}\d_-]+)(?:\s+[\p{Ll}\d_-]+){0,2})`,
  'u',
);
// "What is the role of Bob Okafor?" (a question starts with a capital: the case of the
// question word must not matter, while entity words stay capitalised).
const OF_ATTRIBUTE = new RegExp(
  String.raw`\b(?:[Ww]hat|[Ww]hich)(?:['’]s| is| was| are)\s+(?:the\s+)?((?:[\p{Ll}\d_-]+)(?:\s+[\p{Ll}\d_-]+){0,2})\s+(?:of|for)\s+((?:the\s+)?${ENTITY_WORD}(?:\s+${ENTITY_WORD})*)`,
  'u',
);
// "What role does Bob Okafor have?"
const HAS_ATTRIBUTE = new RegExp(
  String.raw`\b(?:[Ww]hat|[Ww]hich)\s+((?:[\p{Ll}\d_-]+)(?:\s+[\p{Ll}\d_-]+){0,2})\s+(?:does|did)\s+(${ENTITY_WORD}(?:\s+${ENTITY_WORD})*)\s+have\b`,
  'u',
);
// "Where is Priya based?", "Where does Sam live?": the canonical "What is Priya's location?".
const WHERE_BASED = new RegExp(
  String.raw`^\s*[Ww]here\s+(?:is|was|are|does|did)\s+(${ENTITY_WORD}(?:\s+${ENTITY_WORD})*)\s+(?:based|located|living|live|lives|staying|stay|working from|work from|reside|resides)\b`,
  'u',
);
/** Attribute words asked for under another name: "Priya's city" asks for her location. */
const ATTRIBUTE_ALIASES: Readonly<Record<string, string>> = {
  city: 'location',
  town: 'location',
  whereabouts: 'location',
  home_city: 'location',
  base: 'location',
  hometown: 'location',
};
// Words that end an attribute phrase, or mean the "attribute" is really a verb phrase.
const ATTRIBUTE_STOP = new Set(
  'and or in on at to from with about for of is was are were do does did has have had now then currently these days right ago'.split(
    ' ',
  ),
);
const NOT_ATTRIBUTE = new Set(
  'favorite favourite opinion thoughts feelings view views plans plan idea ideas experience story life'.split(
    ' ',
  ),
);

/**
 * «какой телефон у Ивана Петрова», «какая почта у Анны», «адрес у „Восхода“», «телефон Ивана».
 * The name comes in the genitive; entity resolution is by trigram similarity, which tolerates it.
 */
/** A name after the attribute: capitalised words, or a quoted «name». */
const RU_NAME = String.raw`[«"“][^»"”]{2,80}[»"”]|${ENTITY_WORD}(?:\s+${ENTITY_WORD})*`;
const RU_ATTRIBUTE_AT = new RegExp(
  String.raw`(?<!\p{L})(?:(?:как(?:ой|ая|ое|ие)|каков[аоы]?|чей|чья)\s+)?((?:[\p{Ll}-]+)(?:\s+[\p{Ll}-]+){0,2}?)\s+у\s+(${RU_NAME})`,
  'u',
);
const RU_ATTRIBUTE_OF = new RegExp(
  String.raw`(?<!\p{L})(?:(?:как(?:ой|ая|ое|ие)|каков[аоы]?)\s+)?(телефон|номер телефона|почта|электронная почта|email|e-mail|имейл|адрес|день рождения|дата рождения|должность|паспорт|инн|снилс)\s+(${RU_NAME})`,
  'iu',
);
/** Russian attribute words → the keys attributes are usually stored under. */
const RU_ATTRIBUTE_KEYS: ReadonlyArray<[RegExp, string]> = [
  [/^(?:номер\s+)?телефон/u, 'phone'],
  [/^(?:электронн\p{L}*\s+)?почт|^e-?mail$|^имейл/u, 'email'],
  [/^адрес/u, 'address'],
  [/^(?:день|дата)\s+рождения/u, 'birthday'],
  [/^должност/u, 'role'],
  [/^паспорт/u, 'passport'],
  [/^инн$/u, 'inn'],
  [/^снилс$/u, 'snils'],
];
const RU_NOT_ATTRIBUTE = new Set(
  'было есть будет был была были случилось произошло нового новое дела планы'.split(' '),
);

function russianAttribute(phrase: string): string | null {
  const p = phrase.toLowerCase().trim();
  const known = RU_ATTRIBUTE_KEYS.find(([re]) => re.test(p));
  if (known) return known[1];
  if (RU_NOT_ATTRIBUTE.has(p.split(/\s+/u)[0] ?? '')) return null;
  return normaliseAttribute(p);
}

export function normaliseAttribute(phrase: string): string | null {
  const words: string[] = [];
  for (const w of phrase.toLowerCase().split(/\s+/u)) {
    if (ATTRIBUTE_STOP.has(w)) break;
    words.push(w.replace(/[^\p{L}\d_-]/gu, ''));
  }
  const key = words.filter(Boolean).join('_');
  if (!key || NOT_ATTRIBUTE.has(words[0] ?? '')) return null;
  return ATTRIBUTE_ALIASES[key] ?? key;
}

function attributeLookup(query: string): { entity: string; attribute: string } | null {
  const w = WHERE_BASED.exec(query);
  if (w) {
    const entity = extractEntityHints(w[1]!)[0];
    if (entity) return { entity, attribute: 'location' };
  }
  const p = POSSESSIVE_ATTRIBUTE.exec(query);
  if (p) {
    const entity = extractEntityHints(p[1]!)[0];
    const attribute = normaliseAttribute(p[2]!);
    if (entity && attribute) return { entity, attribute };
  }
  const o = OF_ATTRIBUTE.exec(query);
  if (o) {
    const entity = extractEntityHints(o[2]!.replace(/^the\s+/u, ''))[0];
    const attribute = normaliseAttribute(o[1]!);
    if (entity && attribute) return { entity, attribute };
  }
  const h = HAS_ATTRIBUTE.exec(query);
  if (h) {
    const entity = extractEntityHints(h[2]!)[0];
    const attribute = normaliseAttribute(h[1]!);
    if (entity && attribute) return { entity, attribute };
  }
  for (const re of [RU_ATTRIBUTE_OF, RU_ATTRIBUTE_AT]) {
    const r = re.exec(query);
    if (!r) continue;
    const entity = extractEntityHints(r[2]!)[0];
    const attribute = russianAttribute(r[1]!);
    if (entity && attribute) return { entity, attribute };
  }
  return null;
}

export function routeByRules(query: string, reference: Date): RouteDecision {
  const text = query.trim();
  const base = { lookupMode: null, attribute: null } as const;
  if (text === '' || GREETING.test(text)) {
    return {
      ...base,
      queryType: 'NO_SEARCH',
      entityHints: [],
      timeWindow: null,
      reason: 'greeting or empty',
    };
  }
  const entityHints = extractEntityHints(text);
  const timeWindow = extractTimeWindow(text, reference);

  if (timeWindow && FACETS.test(text)) {
    return {
      ...base,
      queryType: 'TEMPORAL_FACETS',
      entityHints,
      timeWindow,
      reason: 'enumeration over a window',
    };
  }
  if (entityHints.length >= 2 && (RELATIONSHIP.test(text) || RELATIONSHIP_RU.test(text))) {
    return {
      ...base,
      queryType: 'RELATIONSHIP',
      entityHints,
      timeWindow,
      reason: 'two entities and a connection cue',
    };
  }
  const attribute = timeWindow ? null : attributeLookup(text);
  if (attribute) {
    const hints = [
      attribute.entity,
      ...entityHints.filter((h) => h.toLowerCase() !== attribute.entity.toLowerCase()),
    ];
    return {
      queryType: 'ENTITY_LOOKUP',
      lookupMode: 'ATTRIBUTE',
      attribute: attribute.attribute,
      entityHints: hints,
      timeWindow,
      reason: 'attribute of a named entity',
    };
  }
  if (timeWindow) {
    return {
      ...base,
      queryType: 'TEMPORAL',
      entityHints,
      timeWindow,
      reason: `time window "${timeWindow.phrase}"`,
    };
  }
  if (EXPLORATORY.test(text)) {
    return { ...base, queryType: 'EXPLORATORY', entityHints, timeWindow, reason: 'exploratory cue' };
  }
  if (entityHints.length >= 1 && BROAD_LOOKUP.test(text)) {
    return {
      queryType: 'ENTITY_LOOKUP',
      lookupMode: 'BROAD',
      attribute: null,
      entityHints,
      timeWindow,
      reason: 'about a named entity',
    };
  }
  return { ...base, queryType: 'ASPECT', entityHints, timeWindow, reason: 'default' };
}
