import type { EntityVersionModel } from '../graph-service.js';
import { builder } from '../../../kernel/schema/builder.js';
import { EntityRef } from '../../../kernel/schema/entity.js';

export const EntityVersionRef = builder.objectRef<EntityVersionModel>('EntityVersion').implement({
  description: "An entity's title and attributes as they were over an interval [validFrom, validTo).",
  fields: (t) => ({
    title: t.exposeString('title'),
    attributes: t.field({ type: 'JSON', resolve: (v) => v.attributes }),
    validFrom: t.field({ type: 'DateTime', resolve: (v) => v.validFrom }),
    validTo: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'Null while the version is the latest one.',
      resolve: (v) => v.validTo,
    }),
  }),
});

builder.objectFields(EntityRef, (t) => ({
  version: t.field({
    type: EntityVersionRef,
    nullable: true,
    description:
      'The title and attributes in force at asOf (default: now); null if none was (before the entity was ' +
      'first written, or while only facts have named it).',
    args: { asOf: t.arg({ type: 'DateTime' }) },
    resolve: (e, args, ctx) => ctx.services.graph.version(e, args.asOf),
  }),
}));
