import type { Gateway } from '../server.js';

export interface GraphQLErrorBody {
  message: string;
  extensions?: { code?: string } & Record<string, unknown>;
}

export interface GraphQLResult {
  data?: Record<string, unknown> | null;
  errors?: GraphQLErrorBody[];
}

/** Runs one operation for an MCP caller; the caller's credentials are bound in. */
export type RunGraphQL = (
  document: string,
  variables: Record<string, unknown>,
  operationName: string,
) => Promise<GraphQLResult>;

/**
 * Operations go through the gateway's whole request pipeline (authentication, persisted
 * operations, limits, PII masking and its audit, error masking) exactly as an HTTP client's
 * would; only the socket is skipped. `authorization` is the header the MCP caller presented
 * (or the stdio token), so the principal is resolved by the same authenticator.
 */
export function graphqlRunner(gateway: Gateway, authorization: string | null): RunGraphQL {
  return async (document, variables, operationName) => {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json, application/json',
    };
    if (authorization) headers.authorization = authorization;
    const response = await gateway.fetch('http://memgate.local/graphql', {
      method: 'POST',
      headers,
      body: JSON.stringify({ query: document, variables, operationName }),
    });
    const body = (await response.json()) as GraphQLResult;
    return body;
  };
}
