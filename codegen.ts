import type { CodegenConfig } from '@graphql-codegen/cli';

const scalars = { DateTime: 'string', JSON: 'unknown' };

/**
 * Typed documents from schema/schema.graphql: the client's operations (client/operations, the
 * journeys and the writes) and the tests' own. Each operation gets its result and variable
 * types; results are plain objects (no fragment masking).
 */
const config: CodegenConfig = {
  schema: 'schema/schema.graphql',
  ignoreNoDocuments: true,
  // NodeNext resolution needs explicit .js extensions in the generated imports.
  importExtension: '.js',
  generates: {
    'client/generated/': {
      documents: ['client/operations/**/*.graphql'],
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: { useTypeImports: true, enumsAsTypes: true, scalars },
    },
    // The explorer page's own operations, sent through the typed client.
    'explorer/generated/': {
      documents: ['explorer/operations/**/*.graphql'],
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: { useTypeImports: true, enumsAsTypes: true, scalars },
    },
    'test/generated/': {
      documents: ['test/operations/**/*.graphql'],
      preset: 'client',
      config: { useTypeImports: true, enumsAsTypes: true, scalars },
    },
  },
};

export default config;
