import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { z } from 'zod';

/**
 * Persisted operations (`MEMGATE_PERSISTED_OPERATIONS=path.json`): the gateway executes only
 * the documents listed in the file. A client sends the document's id — `documentId` (GraphQL
 * over HTTP) or `extensions.persistedQuery.sha256Hash` (Apollo) — or the exact text of a
 * listed document. Anything else is refused before it is parsed.
 *
 * The file is either a map `{ "<id>": "<document>" }` (what GraphQL Code Generator's client
 * preset writes with `persistedDocuments`) or an Apollo persisted-query manifest
 * `{ "format": "apollo-persisted-query-manifest", "operations": [{ "id", "body" }] }`.
 */
export interface PersistedOperations {
  byId: Map<string, string>;
  /** SHA-256 hex of every listed document's text. */
  textHashes: Set<string>;
}

const mapSchema = z.record(z.string().min(1), z.string().min(1));
const manifestSchema = z.object({
  format: z.literal('apollo-persisted-query-manifest'),
  operations: z.array(z.object({ id: z.string().min(1), body: z.string().min(1) }).passthrough()),
});

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export function parsePersistedOperations(raw: unknown, path: string): PersistedOperations {
  const entries: [string, string][] = [];
  const manifest = manifestSchema.safeParse(raw);
  if (manifest.success) {
    for (const op of manifest.data.operations) entries.push([op.id, op.body]);
  } else {
    const map = mapSchema.safeParse(raw);
    if (!map.success) {
      throw new Error(`${path}: expected { "<id>": "<document>" } or an apollo-persisted-query-manifest`);
    }
    entries.push(...Object.entries(map.data));
  }
  const byId = new Map<string, string>();
  for (const [id, body] of entries) byId.set(normaliseId(id), body);
  return { byId, textHashes: new Set([...byId.values()].map(sha256Hex)) };
}

export function loadPersistedOperations(path: string): PersistedOperations {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`cannot read persisted operations ${path}: ${(error as Error).message}`);
  }
  return parsePersistedOperations(raw, path);
}

function normaliseId(id: string): string {
  return id.startsWith('sha256:') ? id.slice('sha256:'.length) : id;
}

function refusal(code: string, message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code, http: { status: 400 } } });
}

export function usePersistedOperations(operations: PersistedOperations): Plugin {
  return {
    // Refusals are thrown: that stops the remaining onParams hooks (yoga's own parameter check
    // would otherwise answer first), and yoga turns the error into a coded 400.
    onParams({ params, setParams }) {
      const extensions = params.extensions as { persistedQuery?: { sha256Hash?: unknown } } | undefined;
      const rawId = (params as { documentId?: unknown }).documentId ?? extensions?.persistedQuery?.sha256Hash;
      if (typeof rawId === 'string' && rawId.length > 0) {
        const document = operations.byId.get(normaliseId(rawId));
        if (!document) {
          throw refusal(
            'PERSISTED_QUERY_NOT_FOUND',
            'Unknown persisted operation id: only listed operations run here.',
          );
        }
        const { documentId: _id, ...rest } = params as typeof params & { documentId?: unknown };
        setParams({ ...rest, query: document });
        return;
      }
      if (typeof params.query === 'string' && params.query.length > 0) {
        if (!operations.textHashes.has(sha256Hex(params.query))) {
          throw refusal(
            'PERSISTED_QUERY_ONLY',
            'This gateway runs persisted operations only: send the id of a listed operation.',
          );
        }
      }
    },
  };
}
