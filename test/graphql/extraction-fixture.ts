import { expect } from 'vitest';
import type { TestGateway } from '../helpers/gateway.js';

/** A team pack whose extractors read who leads what and who holds which role, in English and Russian. */
export const TEAM_PACK = {
  name: 'team',
  version: '1.0.0',
  kinds: [{ kind: 'person', aliases: ['name'] }, { kind: 'project' }, { kind: 'vendor' }],
  relations: [
    { relation: 'leads', fromKinds: ['person'], toKinds: ['project'], cardinality: 'one' },
    { relation: 'works_on', fromKinds: ['person'], toKinds: ['project'] },
    { relation: 'uses', fromKinds: ['project'], toKinds: ['vendor'] },
  ],
  extractors: [
    {
      name: 'leads-en',
      pattern:
        '(?<subject>\\p{Lu}\\p{Ll}{1,30}(?: \\p{Lu}\\p{Ll}{1,30})?) (?:now )?leads (?:project )?(?<object>\\p{Lu}[\\p{L}\\d]{1,40})',
      predicate: 'leads',
      subjectKind: 'person',
      objectKind: 'project',
      confidence: 0.8,
    },
    {
      name: 'leads-ru',
      pattern:
        '(?<subject>\\p{Lu}\\p{Ll}{1,30}(?: \\p{Lu}\\p{Ll}{1,30})?) (?:теперь )?руководит проектом (?<object>\\p{Lu}[\\p{L}\\d]{1,40})',
      predicate: 'leads',
      subjectKind: 'person',
      objectKind: 'project',
      confidence: 0.8,
    },
    {
      name: 'works-on-en',
      pattern: '(?<subject>\\p{Lu}\\p{Ll}{1,30}) works on (?<object>\\p{Lu}[\\p{L}\\d]{1,40})',
      predicate: 'works_on',
      subjectKind: 'person',
      objectKind: 'project',
    },
    {
      name: 'uses-en',
      pattern: '(?<subject>\\p{Lu}[\\p{L}\\d]{1,40}) (?:now )?uses (?<object>\\p{Lu}[\\p{L}\\d]{1,40})',
      predicate: 'uses',
      subjectKind: 'project',
      objectKind: 'vendor',
      confidence: 0.6,
    },
    {
      name: 'role-en',
      pattern: "(?<subject>\\p{Lu}\\p{Ll}{1,30})'s role is (?<value>\\p{L}{1,20}(?: \\p{L}{1,20})?)",
      attribute: 'role',
      subjectKind: 'person',
    },
  ],
};

export const REGISTER = /* GraphQL */ `
  mutation Register($pack: JSON!) { registerDomainPack(pack: $pack) }
`;
export const CONFIGURE = /* GraphQL */ `
  mutation Configure($ns: String!, $packs: [String!]!, $strict: Boolean!) {
    configureNamespace(namespace: $ns, packs: $packs, strict: $strict)
  }
`;
export const RECORD = /* GraphQL */ `
  mutation Record($ns: String!, $items: [ObservationInput!]!) {
    recordObservations(namespace: $ns, observations: $items) {
      accepted rejected results { key status code message }
    }
  }
`;
export const FACTS_OF = /* GraphQL */ `
  query FactsOf($ns: String!, $key: String!) {
    entity(namespace: $ns, key: $key) {
      key kind title placeholder attributes
      facts(first: 50, direction: OUT, includeHistory: true) {
        edges { node {
          factId predicate evidence confidence conflict status scopes attributes sourcePath
          subject { key } object { key kind placeholder title }
          observations { observationId content }
        } }
      }
    }
  }
`;

export interface FactView {
  factId: string;
  predicate: string;
  evidence: string;
  confidence: number;
  conflict: boolean;
  status: string;
  scopes: string[];
  attributes: { learned?: Record<string, unknown> } & Record<string, unknown>;
  sourcePath: string | null;
  subject: { key: string };
  object: { key: string; kind: string; placeholder: boolean; title: string };
  observations: { observationId: string; content: string }[];
}

export interface EntityView {
  key: string;
  kind: string;
  title: string;
  placeholder: boolean;
  attributes: Record<string, unknown> | null;
  facts: { edges: { node: FactView }[] };
}

export async function entityWithFacts(gw: TestGateway, ns: string, key: string): Promise<EntityView | null> {
  const res = await gw.gql<{ entity: EntityView | null }>(FACTS_OF, { ns, key });
  expect(res.errors).toBeUndefined();
  return res.data!.entity;
}

export async function factsOf(gw: TestGateway, ns: string, key: string): Promise<FactView[]> {
  return (await entityWithFacts(gw, ns, key))?.facts.edges.map((e) => e.node) ?? [];
}

let clock = 0;
/** A chat message in `stream`, one minute after the previous one. */
export function message(
  stream: string,
  content: string,
  actor = 'alice',
  extra: Record<string, unknown> = {},
) {
  clock += 1;
  return {
    source: { system: 'chat', stream, externalId: `${stream}-${clock}` },
    kind: 'message',
    occurredAt: new Date(Date.UTC(2025, 0, 6, 9, 0) + clock * 60_000).toISOString(),
    actor: { type: 'person', id: actor },
    content,
    ...extra,
  };
}

export async function setUpTeamNamespace(gw: TestGateway, ns: string, strict = false): Promise<void> {
  const reg = await gw.gql(REGISTER, { pack: TEAM_PACK });
  expect(reg.errors).toBeUndefined();
  const conf = await gw.gql(CONFIGURE, { ns, packs: ['team@1.0.0'], strict });
  expect(conf.errors).toBeUndefined();
}
