import { type WritePayload, type WriteResult, rejected } from '../kernel/batch.js';
import type { ImportFinish, ImportPlan } from '../modules/portability/index.js';
import type { ImportWriter } from '../modules/portability/index.js';

/**
 * `memgate import --url`: the same batches, sent as GraphQL mutations to a running gateway.
 * A batch the server refuses as a whole (an item whose shape does not coerce to the input type)
 * is retried item by item, so the summary still names each rejected line.
 */
const RESULT_FIELDS =
  'accepted partial rejected results { index status id key code message assertions { index kind status code message } }';
const MUTATIONS = {
  recordObservations: `mutation Import($namespace: String!, $items: [ObservationInput!]!) {
    recordObservations(namespace: $namespace, observations: $items) { ${RESULT_FIELDS} } }`,
  retainDocuments: `mutation Import($namespace: String!, $items: [DocumentInput!]!) {
    retainDocuments(namespace: $namespace, documents: $items) { ${RESULT_FIELDS} } }`,
  importObservations: `mutation Import($namespace: String!, $items: [ObservationInput!]!) {
    importObservations(namespace: $namespace, observations: $items) { ${RESULT_FIELDS} } }`,
} as const;

const BEGIN = `mutation BeginImport($namespace: String!, $observations: Int!, $vectorIndex: VectorIndexPlan) {
  beginImport(namespace: $namespace, observations: $observations, vectorIndex: $vectorIndex) {
    vectorIndex indexedChunks } }`;
const FINISH = `mutation FinishImport($namespace: String!) {
  finishImport(namespace: $namespace) { vectorIndex ms } }`;

type Field = keyof typeof MUTATIONS;

interface GraphQLBody {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

export class RemoteImportError extends Error {}

export function remoteImportWriter(url: string, token: string | undefined): ImportWriter {
  const post = async (query: string, variables: Record<string, unknown>): Promise<GraphQLBody> => {
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/graphql-response+json, application/json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify({ query, variables }),
      });
    } catch (error) {
      throw new RemoteImportError(
        `cannot reach ${url}: ${(error as Error).cause ?? (error as Error).message}`,
      );
    }
    const text = await res.text();
    let body: GraphQLBody;
    try {
      body = JSON.parse(text) as GraphQLBody;
    } catch {
      throw new RemoteImportError(`${url} answered HTTP ${res.status} without a GraphQL response`);
    }
    return body;
  };

  const write = async (field: Field, namespace: string, items: unknown[]): Promise<WritePayload> => {
    const body = await post(MUTATIONS[field], { namespace, items });
    const payload = body.data?.[field] as WritePayload | undefined;
    if (payload) return payload;
    const error = body.errors?.[0];
    const code = error?.extensions?.code ?? 'ERROR';
    // Only a coercion failure is the items' fault; anything else (auth, namespace) stops the import.
    if (code !== 'BAD_USER_INPUT' || items.length === 0) {
      throw new RemoteImportError(`${code}: ${error?.message ?? 'no data in the response'}`);
    }
    if (items.length === 1) {
      const problem = coercionProblem(error?.message ?? '');
      return { accepted: 0, partial: 0, rejected: 1, results: [rejected(0, code, problem)] };
    }
    const results: WriteResult[] = [];
    for (const [index, item] of items.entries()) {
      const one = await write(field, namespace, [item]);
      for (const r of one.results) results.push({ ...r, index });
    }
    const refused = results.filter((r) => r.status === 'REJECTED').length;
    const partial = results.filter((r) => r.status === 'PARTIAL').length;
    return { accepted: results.length - refused - partial, partial, rejected: refused, results };
  };

  /** beginImport / finishImport: any error stops the import. */
  const step = async <T>(field: string, query: string, variables: Record<string, unknown>): Promise<T> => {
    const body = await post(query, variables);
    const value = body.data?.[field];
    if (value) return value as T;
    const error = body.errors?.[0];
    throw new RemoteImportError(
      `${error?.extensions?.code ?? 'ERROR'}: ${error?.message ?? 'no data in the response'}`,
    );
  };

  return {
    recordObservations: (namespace, values) => write('recordObservations', namespace, values),
    retainDocuments: (namespace, values) => write('retainDocuments', namespace, values),
    importObservations: (namespace, values) => write('importObservations', namespace, values),
    beginImport: (namespace, observations, vectorIndex) =>
      step<ImportPlan>('beginImport', BEGIN, { namespace, observations, vectorIndex: vectorIndex ?? null }),
    finishImport: (namespace) => step<ImportFinish>('finishImport', FINISH, { namespace }),
  };
}

/**
 * graphql-js words a value that does not fit the input type as
 * `Variable "$items" got invalid value … at "items[0].assertions[0].fact"; Field "x" is not
 * defined by type "FactInput".` — internals of this writer's request. The same problem in the
 * terms of the line: `assertions[0].fact.x: not a field of FactInput`.
 */
export function coercionProblem(message: string): string {
  // Quotes inside the value are escaped (\"), so ` at "` starts the path, not part of a value.
  const match =
    /^Variable "\$\w+" got invalid value [\s\S]*? at "\w+(?:\[\d+\])?([^"]*)"; ([\s\S]*)$/.exec(message) ??
    /^Variable "\$\w+" got invalid value [\s\S]*?(); ([\s\S]*)$/.exec(message);
  if (!match) return message;
  const path = (match[1] ?? '').replace(/^\./, '');
  let problem = match[2]!.trim();
  let field = path;
  const unknown = /^Field "(\w+)" is not defined by type "(\w+)"\.(?: Did you mean (.*)\?)?$/.exec(problem);
  const missing = /^Field "(\w+)" of required type "([^"]+)" was not provided\.$/.exec(problem);
  if (unknown) {
    field = path ? `${path}.${unknown[1]}` : unknown[1]!;
    problem = `not a field of ${unknown[2]}${unknown[3] ? ` (did you mean ${unknown[3]}?)` : ''}`;
  } else if (missing) {
    field = path ? `${path}.${missing[1]}` : missing[1]!;
    problem = `missing, required (${missing[2]})`;
  } else {
    problem = problem.replace(/^Expected type "[^"]+"\. /, '').replace(/^DateTime: /, '');
  }
  return field ? `${field}: ${problem}` : problem;
}
