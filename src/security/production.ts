import { type ASTVisitor, GraphQLError, type ValidationContext } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/**
 * Production mode (`MEMGATE_PRODUCTION=1`): the schema is not discoverable. Introspection
 * (`__schema`, `__type`) is refused (`__typename` stays: clients need it), and validation
 * messages lose their "Did you mean …?" suggestions, which would otherwise spell out field
 * names one typo at a time. GraphiQL is off too (src/server.ts).
 */
export function useProductionHardening(): Plugin {
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(noIntrospection);
      return ({ result, setResult }) => {
        if (result.length > 0) setResult(result.map(withoutSuggestions));
      };
    },
  };
}

function noIntrospection(context: ValidationContext): ASTVisitor {
  return {
    Field(node) {
      const name = node.name.value;
      if (name === '__schema' || name === '__type') {
        context.reportError(
          new GraphQLError('Introspection is disabled on this gateway.', {
            nodes: [node],
            extensions: { code: 'FORBIDDEN' },
          }),
        );
      }
    },
  };
}

const SUGGESTION = / ?Did you mean .*\?$/s;

// Duck-typed: yoga and this module may load different copies of graphql.
function withoutSuggestions<E extends Error>(error: E): E | GraphQLError {
  if (error.name !== 'GraphQLError' || !SUGGESTION.test(error.message)) return error;
  const e = error as unknown as GraphQLError;
  return new GraphQLError(e.message.replace(SUGGESTION, ''), {
    nodes: e.nodes,
    source: e.source,
    positions: e.positions,
    path: e.path,
    originalError: e.originalError,
    extensions: e.extensions,
  });
}
