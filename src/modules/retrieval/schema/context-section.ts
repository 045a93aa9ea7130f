import { SECTION_KINDS } from '../compiler/candidates.js';
import type { PackSectionValue } from '../compiler/compile.js';
import { builder } from '../../../kernel/schema/builder.js';
import { ContextItemRef } from './context-item.js';

// The section vocabulary belongs to this type.
export const SectionKindEnum = builder.enumType('SectionKind', {
  description: 'Sections of a pack, in this order.',
  values: SECTION_KINDS,
});

export const ContextSectionRef = builder.objectRef<PackSectionValue>('ContextSection').implement({
  description: 'A non-empty section of a pack; items in the order they were packed (by score).',
  fields: (t) => ({
    kind: t.field({ type: SectionKindEnum, resolve: (s) => s.kind }),
    items: t.field({ type: [ContextItemRef], resolve: (s) => s.items }),
  }),
});
