import { type MemgateClient, MemgateRequestError, createMemgateClient } from '../../client/index.js';

/**
 * Who the page is talking as. The bearer token lives in this object only: never in storage,
 * the URL or a cookie, so closing the tab forgets it.
 */
export interface Session {
  client: MemgateClient;
  namespace: string;
  token: string;
  endpoint: string;
}

export function openSession(namespace: string, token: string): Session {
  const endpoint = new URL('/graphql', window.location.href).toString();
  return {
    client: createMemgateClient({ url: endpoint, token: token || undefined }),
    namespace,
    token,
    endpoint,
  };
}

/** What to tell a person when a request fails: the gateway's code and message. */
export function describeError(error: unknown): string {
  if (error instanceof MemgateRequestError) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}
