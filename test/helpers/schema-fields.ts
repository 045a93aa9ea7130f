import { parse } from 'graphql';
import { schema } from '../../src/schema/index.js';

/**
 * Whether every root field an operation uses exists in the schema. Suites that sweep every
 * read path use it to cover the paths that exist and pick up new ones as they land.
 */
export function rootFieldsPresent(query: string): boolean {
  const document = parse(query);
  for (const def of document.definitions) {
    if (def.kind !== 'OperationDefinition') continue;
    const root = def.operation === 'mutation' ? schema.getMutationType() : schema.getQueryType();
    const fields = root?.getFields() ?? {};
    for (const selection of def.selectionSet.selections) {
      if (
        selection.kind === 'Field' &&
        !selection.name.value.startsWith('__') &&
        !(selection.name.value in fields)
      ) {
        return false;
      }
    }
  }
  return true;
}
