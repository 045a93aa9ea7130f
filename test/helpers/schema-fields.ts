import { parse } from 'graphql';
import { schema } from '../../src/schema/index.js';

/**
 * The root fields an operation uses that the schema does not have. Suites that sweep every read
 * or write path assert this is empty for each row, so a renamed root field fails the sweep
 * instead of quietly dropping its rows.
 */
export function missingRootFields(query: string): string[] {
  const missing: string[] = [];
  for (const def of parse(query).definitions) {
    if (def.kind !== 'OperationDefinition') continue;
    const root = def.operation === 'mutation' ? schema.getMutationType() : schema.getQueryType();
    const fields = root?.getFields() ?? {};
    for (const selection of def.selectionSet.selections) {
      if (selection.kind !== 'Field') continue;
      const name = selection.name.value;
      if (!name.startsWith('__') && !(name in fields)) missing.push(`${def.operation}.${name}`);
    }
  }
  return missing;
}
