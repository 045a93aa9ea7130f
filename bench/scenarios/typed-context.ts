import { RELATIONS } from '../generate.js';
import { SkipScenario, type ReadScenario } from './types.js';

/** The synthetic domain as a domain pack: the generator's kinds and relations. */
export function benchDomainPack(): Record<string, unknown> {
  // document and episode are built-in kinds: a pack may relate them but not redefine them.
  const kinds = new Set<string>(['person', 'project', 'service', 'team', 'topic', 'ticket']);
  const relations = new Map<string, { from: Set<string>; to: Set<string>; one: boolean }>();
  for (const [from, list] of Object.entries(RELATIONS)) {
    for (const r of list) {
      const entry = relations.get(r.predicate) ?? { from: new Set(), to: new Set(), one: Boolean(r.single) };
      entry.from.add(from);
      entry.to.add(r.to);
      relations.set(r.predicate, entry);
    }
  }
  return {
    name: 'bench',
    version: '1.0.0',
    kinds: [...kinds].map((kind) => ({ kind })),
    // LINKS_TO between documents is a built-in relation.
    relations: [...relations].map(([relation, r]) => ({
      relation,
      fromKinds: [...r.from],
      toKinds: [...r.to],
      temporal: true,
      cardinality: r.one ? 'one' : 'many',
    })),
  };
}

const REGISTER = `mutation BenchRegisterPack($pack: JSON!) { registerDomainPack(pack: $pack) }`;
const CONFIGURE = `mutation BenchConfigure($ns: String!, $packs: [String!]!) {
  configureNamespace(namespace: $ns, packs: $packs, strict: false)
}`;

/**
 * Deterministic typed traversal: from a person, the projects they work on, then two hops of
 * the services those projects depend on, as of now.
 */
export const typedContext: ReadScenario = {
  kind: 'read',
  name: 'typedContext',
  title: 'typedContext (person → works_on → depends_on ×2)',
  document: `query BenchTyped($input: TypedContextInput!) {
  typedContext(input: $input) {
    anchors unresolved sections traceId
    facts { factId predicate subject { key } object { key } }
  }
}`,
  setupDocuments: [REGISTER, CONFIGURE],
  variables: (ds, i) => ({
    input: {
      namespaces: [ds.namespace],
      anchors: [{ kind: 'person', value: ds.anchorOfKind('person', i % 256) }],
      traverse: [
        { relation: 'works_on', direction: 'OUT', depth: 1, limit: 50 },
        { relation: 'depends_on', direction: 'OUT', depth: 2, limit: 50, from: 'previous' },
      ],
    },
  }),
  async setup(ctx) {
    const registered = await ctx.gql(REGISTER, { pack: benchDomainPack() });
    if (registered.errors?.length)
      throw new SkipScenario(`registerDomainPack: ${registered.errors[0]!.message}`);
    const configured = await ctx.gql(CONFIGURE, { ns: ctx.ds.namespace, packs: ['bench@1.0.0'] });
    if (configured.errors?.length)
      throw new SkipScenario(`configureNamespace: ${configured.errors[0]!.message}`);
    return undefined;
  },
};
