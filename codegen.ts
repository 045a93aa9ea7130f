import type { CodegenConfig } from '@graphql-codegen/cli';

/**
 * Typed documents for the tests and for TypeScript clients: operations written with
 * `graphql(...)` from test/generated get their result and variable types from the schema.
 */
const config: CodegenConfig = {
  schema: 'schema/schema.graphql',
  documents: ['test/operations/**/*.graphql'],
  ignoreNoDocuments: true,
  // NodeNext resolution needs explicit .js extensions in the generated imports.
  importExtension: '.js',
  generates: {
    'test/generated/': {
      preset: 'client',
      config: { useTypeImports: true, enumsAsTypes: true, scalars: { DateTime: 'string', JSON: 'unknown' } },
    },
  },
};

export default config;
