/**
 * Domain packs: versioned JSON documents that teach a namespace its own world — entity kinds
 * (natural key, key aliases, kind synonyms, id-extraction patterns, attribute schema) and
 * relations (from/to kinds, temporal, cardinality). Pure: parsing, normalising, compiling and
 * merging packs; storage and access live in the store and service.
 *
 * - `naturalKey` is a key template (`service:{name}`, `<method> <path>`) or a JSON Schema for
 *   the key string.
 * - `aliases` are templates of alternative forms of the key; their placeholders come from the
 *   natural key template or from the entity's attributes (a bare name `x` is short for `{x}`).
 *   Typed traversal resolves anchors through them.
 * - `idPatterns` are regular expressions that find identifiers of the kind in free text (the
 *   named group `id`, else the first group, else the whole match). Each is checked for
 *   catastrophic backtracking before the pack is accepted.
 * - Built-in kinds always exist and cannot be redefined; the pack name `default` is reserved.
 */
import { z } from 'zod';
import { canonicalJson, sha256Hex } from './ids.js';
import { type Validator, compileJsonSchema } from './json-schema.js';
import { type KeyTemplate, parseTemplate } from './key-template.js';
import { type UserPattern, checkRegexSafety, compilePattern } from './regex-safety.js';

export const BUILTIN_KINDS = ['document', 'entity', 'fact', 'episode'] as const;
/** Edges the gateway itself writes (document links, traces, derivations): allowed in strict mode. */
export const BUILTIN_RELATIONS = ['LINKS_TO', 'IN_TRACE', 'DERIVED_FROM'] as const;
export const RESERVED_PACK_NAMES = ['default'] as const;

const KIND = /^[a-z0-9][a-z0-9._-]{0,127}$/;
const NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const VERSION = /^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$/;
const RELATION = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
const BARE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const kindName = z.string().regex(KIND, 'a kind matches [a-z0-9][a-z0-9._-]{0,127}');
const jsonSchemaValue = z.union([z.record(z.string(), z.unknown()), z.boolean()]);

const idPatternSchema = z.union([
  z.string(),
  z.object({ pattern: z.string(), flags: z.string().default('') }).strict(),
]);

const kindSchema = z
  .object({
    kind: kindName,
    description: z.string().max(2000).optional(),
    naturalKey: z.union([z.string().min(1).max(512), z.record(z.string(), z.unknown())]).optional(),
    aliases: z.array(z.string().min(1).max(512)).max(32).default([]),
    kindAliases: z.array(kindName).max(32).default([]),
    idPatterns: z.array(idPatternSchema).max(32).default([]),
    attributes: jsonSchemaValue.optional(),
  })
  .strict();

/**
 * A rule that reads facts out of free text at write time (evidence EXTRACTED): a pattern whose
 * named groups give the subject (`subject`) and the object (`object`, with `predicate`) or a
 * value (`value`, with `attribute`). Patterns pass the same safety checks as idPatterns.
 */
const extractorSchema = z
  .object({
    name: z.string().regex(NAME, 'an extractor name matches [a-z0-9][a-z0-9._-]{0,63}'),
    pattern: z.string().min(1).max(512),
    flags: z.string().default(''),
    predicate: z.string().regex(RELATION, 'a predicate matches [A-Za-z0-9][A-Za-z0-9_.:-]{0,127}').optional(),
    attribute: z.string().regex(BARE_NAME, 'an attribute is a bare name such as `role`').optional(),
    subjectKind: kindName,
    objectKind: kindName.optional(),
    confidence: z.number().min(0).max(1).default(0.7),
  })
  .strict();

const relationSchema = z
  .object({
    relation: z.string().regex(RELATION, 'a relation matches [A-Za-z0-9][A-Za-z0-9_.:-]{0,127}'),
    description: z.string().max(2000).optional(),
    fromKinds: z.array(kindName).min(1, 'fromKinds lists at least one kind').max(64),
    toKinds: z.array(kindName).min(1, 'toKinds lists at least one kind').max(64),
    temporal: z.boolean().default(true),
    cardinality: z.enum(['one', 'many']).default('many'),
  })
  .strict();

/** The zod model of a pack; `superRefine` adds the cross-field and safety checks. */
export const domainPackSchema = z
  .object({
    name: z
      .string()
      .regex(NAME, 'a pack name matches [a-z0-9][a-z0-9._-]{0,63}')
      .refine((n) => !(RESERVED_PACK_NAMES as readonly string[]).includes(n), {
        message: 'the pack name "default" is reserved (built-in kinds document, entity, fact, episode)',
      }),
    version: z.string().regex(VERSION, 'a version matches [0-9A-Za-z][0-9A-Za-z.+_-]{0,63} (e.g. 1.0.0)'),
    description: z.string().max(4000).optional(),
    kinds: z.array(kindSchema).max(500).default([]),
    relations: z.array(relationSchema).max(1000).default([]),
    // Optional without a default: packs registered before extractors keep their body hash.
    extractors: z.array(extractorSchema).max(200).optional(),
  })
  .strict()
  .superRefine((pack, ctx) => {
    const seen = new Map<string, string>();
    const claim = (name: string, what: string, path: (string | number)[]) => {
      if ((BUILTIN_KINDS as readonly string[]).includes(name)) {
        ctx.addIssue({
          code: 'custom',
          path,
          message: `"${name}" is a built-in kind and cannot be redefined`,
        });
      } else if (seen.has(name)) {
        ctx.addIssue({ code: 'custom', path, message: `"${name}" is already declared as ${seen.get(name)}` });
      } else {
        seen.set(name, what);
      }
    };
    for (const [i, k] of pack.kinds.entries()) claim(k.kind, `kind "${k.kind}"`, ['kinds', i, 'kind']);
    for (const [i, k] of pack.kinds.entries()) {
      for (const [j, a] of k.kindAliases.entries()) {
        claim(a, `a synonym of kind "${k.kind}"`, ['kinds', i, 'kindAliases', j]);
      }
    }
    pack.kinds.forEach((k, i) => {
      for (const issue of kindIssues(k))
        ctx.addIssue({ code: 'custom', path: ['kinds', i, ...issue.path], message: issue.message });
    });
    (pack.extractors ?? []).forEach((x, i) => {
      for (const issue of extractorIssues(x))
        ctx.addIssue({ code: 'custom', path: ['extractors', i, ...issue.path], message: issue.message });
    });
    const relations = new Set<string>();
    pack.relations.forEach((r, i) => {
      if (relations.has(r.relation)) {
        ctx.addIssue({
          code: 'custom',
          path: ['relations', i, 'relation'],
          message: `relation "${r.relation}" is declared twice`,
        });
      }
      relations.add(r.relation);
    });
  });

export type DomainPack = z.output<typeof domainPackSchema>;
export type KindDefinition = DomainPack['kinds'][number];
export type RelationDefinition = DomainPack['relations'][number];
export type ExtractorDefinition = NonNullable<DomainPack['extractors']>[number];

function extractorIssues(x: ExtractorDefinition): { path: (string | number)[]; message: string }[] {
  const issues: { path: (string | number)[]; message: string }[] = [];
  if ((x.predicate === undefined) === (x.attribute === undefined)) {
    issues.push({ path: [], message: 'an extractor names exactly one of predicate and attribute' });
  }
  const verdict = checkRegexSafety(x.pattern, x.flags);
  if (!verdict.ok) {
    issues.push({ path: ['pattern'], message: `rejected (${verdict.rule}): ${verdict.message}` });
    return issues;
  }
  const groups = namedGroupsOf(compilePattern(x.pattern, x.flags));
  const needed = ['subject', x.predicate !== undefined ? 'object' : 'value'];
  for (const group of needed) {
    if (!groups.has(group))
      issues.push({ path: ['pattern'], message: `the pattern needs a named group (?<${group}>…)` });
  }
  return issues;
}

/** The named groups a compiled pattern declares (read from an empty-string exec shape). */
function namedGroupsOf(re: UserPattern): Set<string> {
  const names = new Set<string>();
  for (const m of re.source.matchAll(/\(\?<([A-Za-z_][A-Za-z0-9_]*)>/g)) names.add(m[1]!);
  return names;
}

function kindIssues(k: KindDefinition): { path: (string | number)[]; message: string }[] {
  const issues: { path: (string | number)[]; message: string }[] = [];
  if (typeof k.naturalKey === 'string') {
    try {
      const t = parseTemplate(k.naturalKey);
      if (t.placeholders.length === 0) {
        issues.push({
          path: ['naturalKey'],
          message: 'a naturalKey template needs at least one <name> or {name} placeholder',
        });
      }
    } catch (error) {
      issues.push({ path: ['naturalKey'], message: (error as Error).message });
    }
  } else if (k.naturalKey !== undefined) {
    try {
      compileJsonSchema(k.naturalKey);
    } catch (error) {
      issues.push({ path: ['naturalKey'], message: `invalid JSON Schema: ${(error as Error).message}` });
    }
  }
  k.aliases.forEach((alias, j) => {
    try {
      const t = parseTemplate(BARE_NAME.test(alias) ? `{${alias}}` : alias);
      if (t.placeholders.length === 0) {
        issues.push({
          path: ['aliases', j],
          message: 'an alias is a template with at least one placeholder (or a bare attribute name)',
        });
      }
    } catch (error) {
      issues.push({ path: ['aliases', j], message: (error as Error).message });
    }
  });
  k.idPatterns.forEach((p, j) => {
    const { pattern, flags } = typeof p === 'string' ? { pattern: p, flags: '' } : p;
    const verdict = checkRegexSafety(pattern, flags);
    if (!verdict.ok) {
      issues.push({ path: ['idPatterns', j], message: `rejected (${verdict.rule}): ${verdict.message}` });
    }
  });
  if (k.attributes !== undefined) {
    try {
      compileJsonSchema(k.attributes);
    } catch (error) {
      issues.push({ path: ['attributes'], message: `invalid JSON Schema: ${(error as Error).message}` });
    }
  }
  return issues;
}

/** The stored body: defaults applied, id patterns in object form, so equal packs hash equally. */
export function normalisePack(pack: DomainPack): DomainPack {
  return {
    ...pack,
    kinds: pack.kinds.map((k) => ({
      ...k,
      idPatterns: k.idPatterns.map((p) => (typeof p === 'string' ? { pattern: p, flags: '' } : p)),
    })),
  };
}

export function packBodyHash(pack: DomainPack): string {
  return sha256Hex(canonicalJson(pack));
}

/** `name@version`, how namespaces refer to a pack. */
export function packRef(name: string, version: string): string {
  return `${name}@${version}`;
}

export function parsePackRef(ref: string): { name: string; version: string } | null {
  const at = ref.lastIndexOf('@');
  if (at <= 0) return null;
  const name = ref.slice(0, at);
  const version = ref.slice(at + 1);
  return NAME.test(name) && VERSION.test(version) ? { name, version } : null;
}

// ------------------------------------------------------------------ compiled form

export interface CompiledIdPattern {
  source: string;
  flags: string;
  re: UserPattern;
}

export interface CompiledKind {
  kind: string;
  pack: string;
  kindAliases: string[];
  naturalKey: { template: KeyTemplate } | { schema: Validator } | null;
  naturalKeySource: unknown;
  aliases: KeyTemplate[];
  idPatterns: CompiledIdPattern[];
  attributes: Validator | null;
}

export interface CompiledRelation extends RelationDefinition {
  pack: string;
}

export interface CompiledExtractor extends Omit<ExtractorDefinition, 'pattern' | 'flags'> {
  pack: string;
  source: string;
  /** Run with findAll over text pieces of at most MAX_MATCH_INPUT (linear-time engine). */
  re: UserPattern;
}

export interface CompiledPack {
  ref: string;
  kinds: CompiledKind[];
  relations: CompiledRelation[];
  extractors: CompiledExtractor[];
}

/**
 * Compiles a stored (already validated) pack. Patterns were checked at registration, so they
 * are only compiled here; versions are immutable, so callers may cache by ref and body hash.
 */
export function compilePack(pack: DomainPack): CompiledPack {
  const ref = packRef(pack.name, pack.version);
  return {
    ref,
    kinds: pack.kinds.map((k) => ({
      kind: k.kind,
      pack: ref,
      kindAliases: k.kindAliases,
      naturalKey:
        typeof k.naturalKey === 'string'
          ? { template: parseTemplate(k.naturalKey) }
          : k.naturalKey !== undefined
            ? { schema: compileJsonSchema(k.naturalKey, '', { checkPatterns: false }) }
            : null,
      naturalKeySource: k.naturalKey ?? null,
      aliases: k.aliases.map((a) => parseTemplate(BARE_NAME.test(a) ? `{${a}}` : a)),
      idPatterns: k.idPatterns.flatMap((p) => {
        const { pattern, flags } = typeof p === 'string' ? { pattern: p, flags: '' } : p;
        // A stored pattern the engine refuses (registered under older rules) extracts nothing.
        if (!checkRegexSafety(pattern, flags).ok) return [];
        return [{ source: pattern, flags, re: compilePattern(pattern, flags) }];
      }),
      attributes:
        k.attributes !== undefined ? compileJsonSchema(k.attributes, '', { checkPatterns: false }) : null,
    })),
    relations: pack.relations.map((r) => ({ ...r, pack: ref })),
    // A stored extractor the engine refuses (registered under older rules) extracts nothing.
    extractors: (pack.extractors ?? []).flatMap(({ pattern, flags, ...rest }) =>
      checkRegexSafety(pattern, flags).ok
        ? [{ ...rest, pack: ref, source: pattern, re: compilePattern(pattern, flags) }]
        : [],
    ),
  };
}

/** What a namespace's enabled packs declare, merged; the input of every strict-mode check. */
export interface NamespaceSchema {
  namespace: string;
  strict: boolean;
  packs: string[];
  /** By kind name and by every kind synonym. */
  kinds: Map<string, CompiledKind>;
  relations: Map<string, CompiledRelation>;
  /** Every enabled pack's extractors, in pack order. */
  extractors?: CompiledExtractor[];
}

export interface MergeConflict {
  name: string;
  packs: [string, string];
  what: 'kind' | 'relation';
}

/**
 * Merges packs in the order given. Two packs declaring the same kind (or synonym) or relation
 * conflict: the first keeps it and the conflict is reported (configureNamespace refuses them).
 */
export function mergePacks(
  namespace: string,
  strict: boolean,
  packs: CompiledPack[],
): { schema: NamespaceSchema; conflicts: MergeConflict[] } {
  const kinds = new Map<string, CompiledKind>();
  const relations = new Map<string, CompiledRelation>();
  const conflicts: MergeConflict[] = [];
  for (const pack of packs) {
    for (const k of pack.kinds) {
      for (const name of [k.kind, ...k.kindAliases]) {
        const existing = kinds.get(name);
        if (existing) conflicts.push({ name, packs: [existing.pack, pack.ref], what: 'kind' });
        else kinds.set(name, k);
      }
    }
    for (const r of pack.relations) {
      const existing = relations.get(r.relation);
      if (existing) conflicts.push({ name: r.relation, packs: [existing.pack, pack.ref], what: 'relation' });
      else relations.set(r.relation, r);
    }
  }
  const extractors = packs.flatMap((p) => p.extractors);
  return {
    schema: { namespace, strict, packs: packs.map((p) => p.ref), kinds, relations, extractors },
    conflicts,
  };
}

export function isBuiltinKind(kind: string): boolean {
  return (BUILTIN_KINDS as readonly string[]).includes(kind);
}

export function isBuiltinRelation(relation: string): boolean {
  return (BUILTIN_RELATIONS as readonly string[]).includes(relation);
}

/** The declared kind a name refers to (itself or a synonym), or null. */
export function canonicalKind(schema: NamespaceSchema, kind: string): string | null {
  if (isBuiltinKind(kind)) return kind;
  return schema.kinds.get(kind)?.kind ?? null;
}

/** Every spelling of a kind: the canonical name and its synonyms (just the name when undeclared). */
export function kindSpellings(schema: NamespaceSchema, kind: string): string[] {
  const k = schema.kinds.get(kind);
  return k ? [k.kind, ...k.kindAliases].sort() : [kind];
}
