import { McpError, type ReadResourceResult, type ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import type { RunGraphQL } from './graphql-runner.js';

/** JSON-RPC code the MCP specification gives an unknown resource. */
const RESOURCE_NOT_FOUND = -32002;

/** Same addresses as provenance steps' `uri` (memgate://<namespace>/<what>/<id>). */
export const MCP_RESOURCE_TEMPLATES: readonly ResourceTemplate[] = [
  {
    uriTemplate: 'memgate://{namespace}/entity/{key}',
    name: 'entity',
    title: 'Entity',
    description: 'An entity with its current attributes and the facts it is an endpoint of (JSON).',
    mimeType: 'application/json',
  },
  {
    uriTemplate: 'memgate://{namespace}/source/{key}',
    name: 'source',
    title: 'Source document',
    description: 'A retained document whole: its text as written, or stitched from its chunks.',
    mimeType: 'text/markdown',
  },
];

const ENTITY = `query McpEntityResource($namespace: String!, $key: String!) {
  entity(namespace: $namespace, key: $key) {
    id namespace key kind title scopes stale attributes
    facts(first: 50) { edges { node { factId predicate subject { key } object { key title } validFrom validTo status } } }
  }
}`;

const SOURCE = `query McpSourceResource($namespace: String!, $key: String!) {
  source(namespace: $namespace, key: $key) { namespace key title kind content contentSource updatedAt }
}`;

const URI = /^memgate:\/\/([^/]+)\/(entity|source)\/(.+)$/;

export async function readResource(uri: string, run: RunGraphQL): Promise<ReadResourceResult> {
  const match = URI.exec(uri);
  if (!match) throw new McpError(RESOURCE_NOT_FOUND, 'Resource not found', { uri });
  const [, rawNamespace, what, rawKey] = match;
  let variables: { namespace: string; key: string };
  try {
    variables = { namespace: decodeURIComponent(rawNamespace!), key: decodeURIComponent(rawKey!) };
  } catch {
    throw new McpError(RESOURCE_NOT_FOUND, 'Resource not found', { uri });
  }
  const isEntity = what === 'entity';
  const result = await run(
    isEntity ? ENTITY : SOURCE,
    variables,
    isEntity ? 'McpEntityResource' : 'McpSourceResource',
  );
  const [error] = result.errors ?? [];
  // A namespace the caller may not read is FORBIDDEN, as over GraphQL; a hidden row is absent.
  if (error && error.extensions?.code !== 'NOT_FOUND') {
    throw new McpError(-32600, `${error.extensions?.code ?? 'INTERNAL_SERVER_ERROR'}: ${error.message}`, {
      code: error.extensions?.code,
    });
  }
  const value = result.data?.[isEntity ? 'entity' : 'source'] as Record<string, unknown> | null | undefined;
  if (!value) throw new McpError(RESOURCE_NOT_FOUND, 'Resource not found', { uri });
  if (isEntity) {
    const facts = (value.facts as { edges: { node: unknown }[] }).edges.map((e) => e.node);
    return {
      contents: [{ uri, mimeType: 'application/json', text: JSON.stringify({ ...value, facts }, null, 2) }],
    };
  }
  return { contents: [{ uri, mimeType: 'text/markdown', text: String(value.content) }] };
}
