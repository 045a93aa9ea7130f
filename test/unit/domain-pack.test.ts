import { describe, expect, it } from 'vitest';
import {
  canonicalKind,
  compilePack,
  domainPackSchema,
  kindSpellings,
  mergePacks,
  normalisePack,
  packBodyHash,
  parsePackRef,
} from '../../src/domain/domain-pack.js';
import { fillTemplate, likePattern, matchTemplate, parseTemplate } from '../../src/domain/key-template.js';
import { checkFactKinds } from '../../src/modules/domain-packs/schema-policy.js';

const services = {
  name: 'services',
  version: '1.0.0',
  kinds: [
    {
      kind: 'service',
      naturalKey: 'service:{name}',
      aliases: ['{name}'],
      kindAliases: ['svc'],
      attributes: { type: 'object', properties: { tier: { enum: ['gold', 'silver'] } } },
    },
    {
      kind: 'endpoint',
      naturalKey: 'endpoint:{service}:<method> <path>',
      aliases: ['<method> <path>', 'operationId'],
      idPatterns: ['(?<method>GET|POST|PUT|DELETE) (?<path>/\\S+)'],
    },
  ],
  relations: [
    { relation: 'exposes', fromKinds: ['service'], toKinds: ['endpoint'], cardinality: 'many' },
    { relation: 'owned_by', fromKinds: ['svc'], toKinds: ['team'], cardinality: 'one', temporal: false },
  ],
};

describe('key templates', () => {
  it('parses {name} and <name> placeholders and keeps nameless braces literal', () => {
    const t = parseTemplate('endpoint:{service}:<method> /runs/{}/x');
    expect(t.placeholders).toEqual(['service', 'method']);
    expect(t.literals).toEqual(['endpoint:', ':', ' /runs/{}/x']);
  });

  it('refuses adjacent and repeated placeholders', () => {
    expect(() => parseTemplate('{a}{b}')).toThrow(/separated/);
    expect(() => parseTemplate('{a}-{a}')).toThrow(/twice/);
  });

  it('matches without backtracking, leftmost literal first, last literal at the end', () => {
    const t = parseTemplate('endpoint:{service}:<method> <path>');
    expect(matchTemplate(t, 'endpoint:payments:GET /api/v1/runs/{}/checkpoints')).toEqual({
      service: 'payments',
      method: 'GET',
      path: '/api/v1/runs/{}/checkpoints',
    });
    expect(matchTemplate(t, 'endpoint::GET /x')).toBeNull(); // placeholders are non-empty
    expect(matchTemplate(t, 'service:payments')).toBeNull();
    expect(matchTemplate(parseTemplate('a{x}a'), 'a')).toBeNull();
    expect(matchTemplate(parseTemplate('{x}-{y}-'), 'a-b-c-')).toEqual({ x: 'a', y: 'b-c' });
    // A long adversarial value stays linear.
    const long = `${'-'.repeat(100_000)}x`;
    const started = performance.now();
    expect(matchTemplate(parseTemplate('{a}-{b}-{c}-{d}!'), long)).toBeNull();
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('fills and turns partial bindings into LIKE patterns', () => {
    const t = parseTemplate('endpoint:{service}:<method> <path>');
    expect(fillTemplate(t, { service: 'p', method: 'GET', path: '/a' })).toBe('endpoint:p:GET /a');
    expect(fillTemplate(t, { method: 'GET', path: '/a' })).toBeNull();
    expect(likePattern(t, { method: 'GET', path: '/a_b%' })).toBe('endpoint:_%:GET /a\\_b\\%');
  });
});

describe('domain pack model', () => {
  it('parses, applies defaults and normalises id patterns', () => {
    const pack = normalisePack(domainPackSchema.parse(services));
    expect(pack.relations[0]).toMatchObject({ temporal: true, cardinality: 'many' });
    expect(pack.kinds[1]!.idPatterns).toEqual([
      { pattern: '(?<method>GET|POST|PUT|DELETE) (?<path>/\\S+)', flags: '' },
    ]);
    expect(pack.kinds[1]!.kindAliases).toEqual([]);
  });

  it('the same pack written differently hashes the same', () => {
    const a = normalisePack(domainPackSchema.parse(services));
    const b = normalisePack(
      domainPackSchema.parse({
        ...services,
        relations: services.relations.map((r) => ({ temporal: true, ...r })),
        kinds: services.kinds.map((k) => ({
          ...k,
          idPatterns: (k.idPatterns ?? []).map((p) => ({ pattern: p })),
        })),
      }),
    );
    expect(packBodyHash(a)).toBe(packBodyHash(b));
    const c = normalisePack(domainPackSchema.parse({ ...services, relations: [services.relations[0]] }));
    expect(packBodyHash(c)).not.toBe(packBodyHash(a));
  });

  const issues = (raw: unknown) => {
    const r = domainPackSchema.safeParse(raw);
    return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  };

  it('reserves the name default and the built-in kinds', () => {
    expect(issues({ ...services, name: 'default' })).toEqual([
      expect.stringMatching(/^name: .*"default" is reserved/),
    ]);
    expect(issues({ ...services, kinds: [{ kind: 'document' }] })).toEqual([
      expect.stringMatching(/kinds.0.kind: "document" is a built-in kind/),
    ]);
  });

  it('refuses duplicates, unsafe id patterns, bad templates and bad schemas, naming the path', () => {
    const found = issues({
      name: 'bad',
      version: '1',
      kinds: [
        { kind: 'a', kindAliases: ['b'] },
        { kind: 'b', idPatterns: ['(x+)\\1y', { pattern: 'ok', flags: 'g' }] },
        { kind: 'c', naturalKey: '{x}{y}', aliases: ['literal only'], attributes: { anyOf: [] } },
      ],
      relations: [
        { relation: 'r', fromKinds: ['a'], toKinds: ['b'] },
        { relation: 'r', fromKinds: ['a'], toKinds: [] },
      ],
      extra: 1,
    });
    expect(found).toEqual(
      expect.arrayContaining([
        'kinds.0.kindAliases.0: "b" is already declared as kind "b"',
        'relations.1.relation: relation "r" is declared twice',
        expect.stringMatching(/^kinds.1.idPatterns.0: rejected \(backreference\)/),
        expect.stringMatching(/^kinds.1.idPatterns.1: rejected \(flags\)/),
        expect.stringMatching(/^kinds.2.naturalKey: placeholders must be separated/),
        expect.stringMatching(/^kinds.2.aliases.0: an alias is a template/),
        expect.stringMatching(/^kinds.2.attributes: invalid JSON Schema: .*unsupported keyword "anyOf"/),
        expect.stringMatching(/^relations.1.toKinds: toKinds lists at least one kind/),
        ': Unrecognized key: "extra"',
      ]),
    );
  });

  it('parses pack references', () => {
    expect(parsePackRef('services@1.0.0')).toEqual({ name: 'services', version: '1.0.0' });
    expect(parsePackRef('services')).toBeNull();
    expect(parsePackRef('@1')).toBeNull();
  });
});

describe('merged namespace schema', () => {
  const pack = compilePack(normalisePack(domainPackSchema.parse(services)));
  const teams = compilePack(
    normalisePack(domainPackSchema.parse({ name: 'teams', version: '2', kinds: [{ kind: 'team' }] })),
  );

  it('resolves synonyms and reports conflicting declarations', () => {
    const { schema, conflicts } = mergePacks('ns', true, [pack, teams]);
    expect(conflicts).toEqual([]);
    expect(canonicalKind(schema, 'svc')).toBe('service');
    expect(canonicalKind(schema, 'document')).toBe('document');
    expect(canonicalKind(schema, 'nope')).toBeNull();
    expect(kindSpellings(schema, 'svc')).toEqual(['service', 'svc']);
    const again = mergePacks('ns', true, [
      pack,
      compilePack(normalisePack(domainPackSchema.parse({ ...services, version: '2' }))),
    ]);
    expect(again.conflicts.map((c) => `${c.what}:${c.name}`)).toEqual([
      'kind:service',
      'kind:svc',
      'kind:endpoint',
      'relation:exposes',
      'relation:owned_by',
    ]);
  });

  it('checks relations against from/to kinds, synonyms included', () => {
    const { schema } = mergePacks('ns', true, [pack, teams]);
    expect(
      checkFactKinds(schema, { predicate: 'exposes', subjectKind: 'svc', objectKind: 'endpoint' }),
    ).toBeNull();
    expect(checkFactKinds(schema, { predicate: 'exposes', subjectKind: null, objectKind: null })).toBeNull();
    expect(checkFactKinds(schema, { predicate: 'LINKS_TO', subjectKind: 'x', objectKind: 'y' })).toBeNull();
    expect(
      checkFactKinds(schema, { predicate: 'owned_by', subjectKind: 'service', objectKind: 'team' }),
    ).toBeNull();
    expect(
      checkFactKinds(schema, {
        predicate: 'exposes',
        subject: 'team:a',
        subjectKind: 'team',
        objectKind: 'endpoint',
      }),
    ).toMatchObject({
      rule: 'relation-from-kinds',
      message: expect.stringContaining('subject "team:a" is of kind "team"'),
    });
    expect(
      checkFactKinds(schema, { predicate: 'exposes', subjectKind: 'service', objectKind: 'service' }),
    ).toMatchObject({
      rule: 'relation-to-kinds',
    });
    expect(
      checkFactKinds(schema, { predicate: 'calls', subjectKind: 'service', objectKind: 'service' }),
    ).toMatchObject({
      rule: 'relation-declared',
    });
    const lax = mergePacks('ns', false, [pack]).schema;
    expect(
      checkFactKinds(lax, { predicate: 'calls', subjectKind: 'service', objectKind: 'service' }),
    ).toBeNull();
  });
});
