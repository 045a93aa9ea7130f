/**
 * A bounded closed-loop load generator on loopback: `concurrency` workers, each sending its
 * next request when the previous answer arrived, until `requests` were sent or `maxMs` passed.
 * Bodies differ per request (each scenario picks its own query or anchor per index), which is
 * why this is not autocannon's fixed-request mode. Every answer is parsed: GraphQL errors are
 * counted, and `extensions.sql` gives the SQL statements per request.
 */
import { Agent, request } from 'node:http';

export interface LoadOptions {
  url: string;
  concurrency: number;
  requests: number;
  maxMs: number;
  /** The JSON body of request `i` (a GraphQL operation with its variables). */
  body: (i: number) => string;
}

export interface LoadResult {
  latencies: number[];
  statements: number[];
  sqlMs: number[];
  errors: number;
  errorSamples: string[];
  wallMs: number;
}

export interface GqlAnswer {
  status: number;
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
  extensions?: { sql?: { statements: number; ms: number } };
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency });
  const result: LoadResult = {
    latencies: [],
    statements: [],
    sqlMs: [],
    errors: 0,
    errorSamples: [],
    wallMs: 0,
  };
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < options.requests && performance.now() - started < options.maxMs) {
      const i = next++;
      const t = performance.now();
      let answer: GqlAnswer;
      try {
        answer = await post(options.url, options.body(i), agent);
      } catch (error) {
        answer = { status: 0, errors: [{ message: error instanceof Error ? error.message : String(error) }] };
      }
      result.latencies.push(performance.now() - t);
      if (answer.extensions?.sql) {
        result.statements.push(answer.extensions.sql.statements);
        result.sqlMs.push(answer.extensions.sql.ms);
      }
      if (answer.status !== 200 || answer.errors?.length) {
        result.errors++;
        if (result.errorSamples.length < 3) result.errorSamples.push(describeError(answer));
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  result.wallMs = performance.now() - started;
  agent.destroy();
  return result;
}

export function describeError(answer: GqlAnswer): string {
  const first = answer.errors?.[0];
  if (!first) return `HTTP ${answer.status}`;
  const code = first.extensions?.code ? `${String(first.extensions.code)}: ` : '';
  return `${code}${first.message}`.slice(0, 300);
}

const sharedAgent = new Agent({ keepAlive: true, maxSockets: 4 });

/** One GraphQL request over HTTP (a long one, such as an index build, may ask for more time). */
export function gql(
  url: string,
  query: string,
  variables: Record<string, unknown> = {},
  timeoutMs = 120_000,
): Promise<GqlAnswer> {
  return post(url, JSON.stringify({ query, variables }), sharedAgent, timeoutMs);
}

export function closeSharedAgent(): void {
  sharedAgent.destroy();
}

function post(url: string, body: string, agent: Agent, timeoutMs = 120_000): Promise<GqlAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          accept: 'application/graphql-response+json, application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          try {
            resolve({ ...(JSON.parse(text) as GqlAnswer), status: res.statusCode ?? 0 });
          } catch {
            resolve({
              status: res.statusCode ?? 0,
              errors: [{ message: `non-JSON answer: ${text.slice(0, 200)}` }],
            });
          }
        });
        res.on('error', reject);
      },
    );
    req.setTimeout(timeoutMs, () =>
      req.destroy(new Error(`request timed out after ${Math.round(timeoutMs / 1000)} s`)),
    );
    req.on('error', reject);
    req.end(body);
  });
}
