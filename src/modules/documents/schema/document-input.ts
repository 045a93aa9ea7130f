import { builder } from '../../../kernel/schema/builder.js';

export const DocumentInputRef = builder.inputType('DocumentInput', {
  description:
    'A document to retain: kept whole for `source()`, chunked by headings for search, linked to existing keys.',
  fields: (t) => ({
    key: t.string({
      required: true,
      description: 'Natural key, e.g. a path or URL; writing it again rewrites.',
    }),
    title: t.string({ required: true }),
    content: t.string({ required: true, description: 'Markdown or plain text, at most 5 MiB.' }),
    kind: t.string({ defaultValue: 'document', description: 'Entity kind, [a-z0-9][a-z0-9._-]{0,127}.' }),
    sourcePath: t.string({ description: 'Where a citation points: file path, URI.' }),
    meta: t.field({
      type: 'JSON',
      description: 'Tags (an object) copied to every chunk for search filters.',
    }),
    scopes: t.stringList({ description: 'At most 20 type:id labels.' }),
    links: t.stringList({
      description:
        'Keys this document links to (at most 500). Existing ones become LINKS_TO facts; the others are ' +
        "reported in the item's message.",
    }),
    provenance: t.field({
      type: 'JSON',
      description: "The caller's provenance (an object): repository, commit, path, author…",
    }),
    occurredAt: t.field({
      type: 'DateTime',
      description:
        'When the document was written (default: now). A back-filled document is dated so: `asOf` reads see its ' +
        'sections from then on, and its links hold from then (unless validFrom says otherwise).',
    }),
    validFrom: t.field({
      type: 'DateTime',
      description: 'When its links (LINKS_TO facts) start to hold (default: occurredAt, else now).',
    }),
  }),
});
