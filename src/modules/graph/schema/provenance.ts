import type { Provenance, ProvenanceStep } from '../provenance-service.js';
import { builder } from '../../../kernel/schema/builder.js';
import { SourceIdentityRef } from '../../../kernel/schema/source-identity.js';

export const ProvenanceStepRef = builder.objectRef<ProvenanceStep>('ProvenanceStep').implement({
  description: 'One step of a provenance walk, in walk order (each step is followed by what it rests on).',
  fields: (t) => ({
    kind: t.exposeString('kind', { description: '"fact" | "chunk" | "entity" | "observation" | "source"' }),
    id: t.id({ nullable: true, resolve: (s) => s.id }),
    label: t.exposeString('label'),
    node: t.node({ id: (s) => s.id }),
    uri: t.string({
      nullable: true,
      description:
        'For a source: the caller-given provenance.uri, else memgate://<namespace>/observation/<id> (or ' +
        '/source/<key> for a document). Other steps: their memgate:// address.',
      resolve: (s) => s.uri,
    }),
    depth: t.exposeInt('depth', { description: '0 for the item asked about; evidence is one level deeper.' }),
    source: t.field({
      type: SourceIdentityRef,
      nullable: true,
      description: 'The outside source of an observation step or source step.',
      resolve: (s) => s.source,
    }),
    metadata: t.field({
      type: 'JSON',
      nullable: true,
      description: "The caller's provenance metadata (repository, commit, path, uri…) on a source step.",
      resolve: (s) => s.metadata ?? null,
    }),
    at: t.field({ type: 'DateTime', nullable: true, resolve: (s) => s.at }),
  }),
});

export const ProvenanceRef = builder.objectRef<Provenance>('Provenance').implement({
  description: 'A walk from an item down to the events it rests on.',
  fields: (t) => ({
    steps: t.field({ type: [ProvenanceStepRef], resolve: (p) => p.steps }),
    truncated: t.exposeBoolean('truncated', {
      description: 'True when an item had more evidence than a walk lists (20 per item).',
    }),
  }),
});

builder.queryFields((t) => ({
  provenance: t.field({
    type: ProvenanceRef,
    description:
      'The chain from a Fact, Chunk, Entity or Observation (by Relay id) down to observations, their source ' +
      'identity and URI.',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => ctx.services.provenance.provenance(String(args.id)),
  }),
}));
