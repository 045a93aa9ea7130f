import type { RerankReport } from '../pipeline/search.js';
import { builder } from '../../../kernel/schema/builder.js';

export const RerankReportRef = builder.objectRef<RerankReport>('RerankReport').implement({
  description: 'Whether the LLM rerank ran; when it was asked for and not applied, why.',
  fields: (t) => ({
    requested: t.exposeBoolean('requested'),
    applied: t.exposeBoolean('applied'),
    reason: t.string({ nullable: true, resolve: (r) => r.reason }),
    ms: t.exposeFloat('ms'),
  }),
});
