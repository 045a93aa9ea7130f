import { builder } from '../../../kernel/schema/builder.js';
import { EntityInputRef } from '../../entities/schema/index.js';
import { EpisodeInputRef } from './episode-input.js';
import { FactInputRef } from '../../facts/schema/index.js';

export const AssertionInputRef = builder.inputType('AssertionInput', {
  description:
    "One structured statement of an observation, projected in the observation's transaction. Exactly one field is set.",
  fields: (t) => ({
    entity: t.field({ type: EntityInputRef }),
    fact: t.field({ type: FactInputRef }),
    episode: t.field({ type: EpisodeInputRef }),
  }),
});
