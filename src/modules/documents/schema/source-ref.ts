import { builder } from '../../../kernel/schema/builder.js';

/** What a hit or citation points at: a node that can be opened with `source()`. */
export interface SourceRefShape {
  namespace: string;
  key: string;
  title: string;
  sourcePath: string | null;
}

export const SourceRefRef = builder.objectRef<SourceRefShape>('SourceRef').implement({
  description: 'A source behind a result: open it whole with `source(namespace, key)`.',
  fields: (t) => ({
    namespace: t.exposeString('namespace'),
    key: t.exposeString('key'),
    title: t.exposeString('title'),
    sourcePath: t.string({ nullable: true, resolve: (s) => s.sourcePath }),
  }),
});
