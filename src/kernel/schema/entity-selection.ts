import {
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLResolveInfo,
  Kind,
  type SelectionSetNode,
  getArgumentValues,
  isObjectType,
} from 'graphql';
import type { EntityFactsArgs } from '../entity-facts.js';
import type { EntitySelection, FactsSelection } from '../nested-read.js';
import type { PageArgs } from '../pagination.js';

/**
 * Reads what the client selected under an Entity field into plain data for the nested-read
 * compiler: field names, and the `facts` page (arguments as GraphQL coerced them, defaults
 * applied) with the selection of its facts and their endpoints. Directives are ignored: a
 * field skipped by `@skip` is fetched and not returned, which is merely wasteful.
 */
export function entitySelection(info: GraphQLResolveInfo): EntitySelection | null {
  const read = new SelectionReader(info);
  return read.entity(info.fieldNodes);
}

/**
 * The fields the client selected of the nodes of an entity connection (`edges { node { … } }`,
 * through fragments); empty when it selects no node.
 */
export function connectionNodeFields(info: GraphQLResolveInfo): Set<string> {
  const edges = [...collect(info.fieldNodes, info.fragments).values()]
    .flat()
    .filter((f) => f.name.value === 'edges');
  const nodes = [...collect(edges, info.fragments).values()].flat().filter((f) => f.name.value === 'node');
  return new Set([...collect(nodes, info.fragments).values()].map((f) => f[0]!.name.value));
}

type Fragments = Record<string, FragmentDefinitionNode>;

class SelectionReader {
  constructor(private readonly info: GraphQLResolveInfo) {}

  entity(nodes: readonly FieldNode[]): EntitySelection {
    const fields = collect(nodes, this.info.fragments);
    const factNodes = [...fields].filter(([, f]) => f[0]!.name.value === 'facts');
    return {
      fields: new Set([...fields.values()].map((f) => f[0]!.name.value)),
      // One page per entity is compiled; several aliased pages resolve through the loaders.
      facts: factNodes.length === 1 ? this.facts(factNodes[0]![1]) : null,
    };
  }

  private facts(nodes: readonly FieldNode[]): FactsSelection | null {
    const def = this.fieldDef('Entity', 'facts');
    if (!def) return null;
    const args = getArgumentValues(def, nodes[0]!, this.info.variableValues) as EntityFactsArgs & PageArgs;
    const connection = collect(nodes, this.info.fragments);
    const edges = [...connection.values()].filter((f) => f[0]!.name.value === 'edges').flat();
    const node = [...collect(edges, this.info.fragments).values()]
      .filter((f) => f[0]!.name.value === 'node')
      .flat();
    const fact = collect(node, this.info.fragments);
    const endpoint = (side: 'subject' | 'object') => {
      const found = [...fact.values()].filter((f) => f[0]!.name.value === side).flat();
      return found.length ? this.entity(found) : null;
    };
    return {
      args: {
        asOf: args.asOf,
        predicates: args.predicates,
        direction: args.direction,
        includeHistory: args.includeHistory,
      },
      // As the resolver passes them (pageArgs): `last` wins over a defaulted `first`.
      page: {
        first: args.last != null ? null : args.first,
        after: args.after,
        last: args.last,
        before: args.before,
      },
      fields: new Set([...fact.values()].map((f) => f[0]!.name.value)),
      connectionFields: new Set([...connection.values()].map((f) => f[0]!.name.value)),
      subject: endpoint('subject'),
      object: endpoint('object'),
    };
  }

  private fieldDef(typeName: string, field: string) {
    const type = this.info.schema.getType(typeName);
    return isObjectType(type) ? type.getFields()[field] : undefined;
  }
}

/** Field nodes under these nodes by response key, through fragments and inline fragments. */
function collect(nodes: readonly FieldNode[], fragments: Fragments): Map<string, FieldNode[]> {
  const out = new Map<string, FieldNode[]>();
  const visit = (set: SelectionSetNode | undefined, seen: Set<string>) => {
    for (const s of set?.selections ?? []) {
      if (s.kind === Kind.FIELD) {
        const key = s.alias?.value ?? s.name.value;
        const list = out.get(key) ?? [];
        list.push(s);
        out.set(key, list);
      } else if (s.kind === Kind.INLINE_FRAGMENT) {
        visit(s.selectionSet, seen);
      } else if (!seen.has(s.name.value)) {
        seen.add(s.name.value);
        visit(fragments[s.name.value]?.selectionSet, seen);
      }
    }
  };
  for (const n of nodes) visit(n.selectionSet, new Set());
  return out;
}
