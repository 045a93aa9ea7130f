import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';
import * as ops from './generated/graphql.js';

export type * from './generated/graphql.js';

/**
 * A typed memgate client: one method per operation in client/operations (explore, context,
 * provenance, writes), each returning its root field with the type the schema gives it.
 * `request` runs any other typed document.
 */
export interface MemgateClientOptions {
  /** The GraphQL endpoint, e.g. http://127.0.0.1:4000/graphql. */
  url: string;
  /** Bearer token (needed whenever the gateway has a tokens file). */
  token?: string;
  headers?: Record<string, string>;
  fetch?: typeof fetch;
}

export interface MemgateErrorBody {
  message: string;
  path?: (string | number)[];
  extensions?: { code?: string } & Record<string, unknown>;
}

/** The gateway answered with errors; `code` is the first error's `extensions.code`. */
export class MemgateRequestError extends Error {
  readonly code: string;
  constructor(
    readonly errors: MemgateErrorBody[],
    readonly status: number,
  ) {
    const first = errors[0];
    super(first ? first.message : `HTTP ${status}`);
    this.name = 'MemgateRequestError';
    this.code = first?.extensions?.code ?? 'INTERNAL_SERVER_ERROR';
  }
}

/** The value of an operation's single root field. */
type Root<R> = R[keyof R];

const printed = new WeakMap<object, string>();

function text(document: TypedDocumentNode<unknown, never>): string {
  let query = printed.get(document);
  if (query === undefined) {
    query = print(document);
    printed.set(document, query);
  }
  return query;
}

export function createMemgateClient(options: MemgateClientOptions) {
  const send = options.fetch ?? fetch;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/graphql-response+json, application/json',
    ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
    ...options.headers,
  };

  async function request<R, V>(document: TypedDocumentNode<R, V>, variables: V): Promise<R> {
    const response = await send(options.url, {
      method: 'POST',
      headers,
      body: JSON.stringify({ query: text(document as TypedDocumentNode<unknown, never>), variables }),
    });
    const body = (await response.json()) as { data?: R | null; errors?: MemgateErrorBody[] };
    if (body.errors?.length || !body.data) throw new MemgateRequestError(body.errors ?? [], response.status);
    return body.data;
  }

  const root =
    <R, V>(document: TypedDocumentNode<R, V>) =>
    async (variables: V): Promise<Root<R>> => {
      const data = await request(document, variables);
      return Object.values(data as object)[0] as Root<R>;
    };

  return {
    request,
    // explore
    entities: root(ops.EntitiesDocument),
    entity: root(ops.EntityDocument),
    neighbors: root(ops.NeighborsDocument),
    search: root(ops.SearchDocument),
    // context
    context: root(ops.ContextDocument),
    contextTrace: root(ops.ContextTraceDocument),
    // provenance
    provenance: root(ops.ProvenanceDocument),
    fact: root(ops.FactDocument),
    source: root(ops.SourceDocument),
    // writes
    upsertEntities: root(ops.UpsertEntitiesDocument),
    recordObservations: root(ops.RecordObservationsDocument),
    assertFacts: root(ops.AssertFactsDocument),
    supersedeFact: root(ops.SupersedeFactDocument),
    retractFact: root(ops.RetractFactDocument),
    retainDocuments: root(ops.RetainDocumentsDocument),
  };
}

export type MemgateClient = ReturnType<typeof createMemgateClient>;
