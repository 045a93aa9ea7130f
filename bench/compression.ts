/**
 * `npx tsx bench/compression.ts`: bytes on the wire, from the built gateway (`node dist/main.js`,
 * embedded PGlite in a fresh folder), for GraphiQL (its page and the assets it names), the
 * explorer (page, script, stylesheet) and one `context` answer of a 2,000-token budget over
 * this repository's own documentation, retained as documents.
 *
 * Every resource is fetched three times on a fresh connection: `accept-encoding: identity` (the
 * bytes themselves: what every client got before compression), `gzip`, and `gzip, br` (what
 * browsers send). Figures are body bytes (the body as it travelled) and the bytes the socket
 * read (status line and headers too). GraphiQL's "before" is also render-graphiql's one inline
 * page, as the gateway served it until its assets became files. For the context answer, the
 * request's latency identity vs `gzip, br` (median of 21 alternating) and the CPU one
 * compression costs in-process (median of 50). Figures only; writes
 * bench/results/compression.json and .md.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GRAPHIQL_OPTIONS } from '../src/graphiql.js';
import { compress } from '../src/http-compression.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const entry = join(root, 'dist', 'main.js');
const ACCEPTS = { identity: 'identity', gzip: 'gzip', browser: 'gzip, br' } as const;
type Accept = keyof typeof ACCEPTS;

interface Fetched {
  status: number;
  encoding: string;
  /** The body as it travelled. */
  bodyBytes: number;
  /** Everything the socket read: status line, headers, body. */
  socketBytes: number;
  ms: number;
  body: Buffer;
}

interface Measured {
  name: string;
  path: string;
  identityBytes: number;
  gzipBytes: number;
  /** With `gzip, br`: the coding chosen and its bytes. */
  sentEncoding: string;
  sentBytes: number;
  identitySocketBytes: number;
  sentSocketBytes: number;
  cacheControl: string;
}

interface GraphQLRequest {
  method: 'POST';
  body: string;
}

function fetchRaw(
  base: string,
  path: string,
  accept: Accept,
  extra: Record<string, string> = {},
  gql?: GraphQLRequest,
): Promise<Fetched & { cacheControl: string }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      `${base}${path}`,
      {
        method: gql?.method ?? 'GET',
        agent: false,
        headers: {
          'accept-encoding': ACCEPTS[accept],
          connection: 'close',
          ...(gql ? { 'content-type': 'application/json', accept: 'application/graphql-response+json' } : {}),
          ...extra,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          resolve({
            status: res.statusCode ?? 0,
            encoding: res.headers['content-encoding'] ?? 'identity',
            bodyBytes: body.length,
            socketBytes: res.socket?.bytesRead ?? Number.NaN,
            ms: performance.now() - started,
            body,
            cacheControl: String(res.headers['cache-control'] ?? ''),
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(gql?.body);
  });
}

async function measure(
  base: string,
  name: string,
  path: string,
  extra: Record<string, string> = {},
  gql?: GraphQLRequest,
): Promise<Measured> {
  const identity = await fetchRaw(base, path, 'identity', extra, gql);
  const gzip = await fetchRaw(base, path, 'gzip', extra, gql);
  const sent = await fetchRaw(base, path, 'browser', extra, gql);
  for (const f of [identity, gzip, sent]) {
    if (f.status !== 200) throw new Error(`${path} answered ${f.status}: ${f.body.toString().slice(0, 200)}`);
  }
  return {
    name,
    path,
    identityBytes: identity.bodyBytes,
    gzipBytes: gzip.bodyBytes,
    sentEncoding: sent.encoding,
    sentBytes: sent.bodyBytes,
    identitySocketBytes: identity.socketBytes,
    sentSocketBytes: sent.socketBytes,
    cacheControl: sent.cacheControl,
  };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function waitReady(base: string, child: ChildProcess): Promise<void> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the gateway exited with code ${child.exitCode}`);
    try {
      if ((await fetch(`${base}/readyz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function graphql(base: string, query: string, variables: Record<string, unknown>): Promise<unknown> {
  const res = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data?: unknown; errors?: unknown };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

/** README.md and every Markdown page under docs/, as documents of the namespace `docs`. */
async function retainDocs(base: string): Promise<number> {
  const pages = ['README.md', ...markdownUnder('docs')];
  const documents = pages.map((path) => ({
    key: path,
    title: path,
    sourcePath: path,
    content: readFileSync(join(root, path), 'utf8'),
  }));
  await graphql(
    base,
    'mutation($d: [DocumentInput!]!) { retainDocuments(namespace: "docs", documents: $d) { accepted } }',
    { d: documents },
  );
  return documents.length;
}

function markdownUnder(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory()
        ? markdownUnder(`${dir}/${e.name}`)
        : e.name.endsWith('.md')
          ? [`${dir}/${e.name}`]
          : [],
    )
    .sort();
}

/** The explorer's context view asks for about this much: the text and every item with its signals. */
const CONTEXT_QUERY = `query Context($input: ContextInput!) {
  context(input: $input) {
    query tokenEstimate conflicts warnings emptyReason traceId text
    sections { kind items { kind id namespace text title sourcePath score tokenEstimate conflict
      signals { rrf exactId entity entities scope current evidence freshness label terms asking newer state
        channels { channel rank score } } } }
    sources { namespace key title sourcePath }
    budget { maxTokens used truncated dropped { id reason tokenEstimate } }
  }
}`;
const CONTEXT_VARIABLES = {
  input: {
    namespaces: ['docs'],
    query: 'How does the context compiler pack items under a token budget?',
    budgetTokens: 2000,
  },
};

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function contextTimings(base: string, gql: GraphQLRequest, identityBody: Buffer) {
  const latency: Record<'identity' | 'browser', number[]> = { identity: [], browser: [] };
  for (let i = 0; i < 21; i++) {
    for (const accept of ['identity', 'browser'] as const) {
      latency[accept].push((await fetchRaw(base, '/graphql', accept, {}, gql)).ms);
    }
  }
  const cpu: Record<'br' | 'gzip', number[]> = { br: [], gzip: [] };
  for (let i = 0; i < 50; i++) {
    for (const encoding of ['br', 'gzip'] as const) {
      const started = process.cpuUsage();
      await compress(encoding, identityBody);
      const used = process.cpuUsage(started);
      cpu[encoding].push((used.user + used.system) / 1000);
    }
  }
  const round = (ms: number) => Math.round(ms * 100) / 100;
  return {
    latencyMs: { identity: round(median(latency.identity)), gzipBr: round(median(latency.browser)) },
    compressCpuMs: { br: round(median(cpu.br)), gzip: round(median(cpu.gzip)) },
  };
}

async function measureAll(base: string) {
  const graphiqlPage = await measure(base, 'GraphiQL page', '/graphql', { accept: 'text/html' });
  const html = (await fetchRaw(base, '/graphql', 'identity', { accept: 'text/html' })).body.toString();
  const graphiqlAssets = [...html.matchAll(/(?:src|href)="(\/graphiql\/assets\/[^"]+)"/g)].map((m) => m[1]!);
  const explorerHtml = (await fetchRaw(base, '/explore/', 'identity')).body.toString();
  const explorerAssets = [...explorerHtml.matchAll(/(?:src|href)="(\/explore\/assets\/[^"]+)"/g)].map(
    (m) => m[1]!,
  );
  const documents = await retainDocs(base);
  const gql: GraphQLRequest = {
    method: 'POST',
    body: JSON.stringify({ query: CONTEXT_QUERY, variables: CONTEXT_VARIABLES }),
  };
  const context = await measure(base, 'context, budget 2,000 tokens', '/graphql', {}, gql);
  const identityContext = await fetchRaw(base, '/graphql', 'identity', {}, gql);
  const pack = (
    JSON.parse(identityContext.body.toString()) as { data: { context: { budget: { used: number } } } }
  ).data.context;
  return {
    graphiql: [
      graphiqlPage,
      ...(await Promise.all(graphiqlAssets.map((a) => measure(base, `GraphiQL ${a.split('/').pop()}`, a)))),
    ],
    explorer: [
      await measure(base, 'explorer page', '/explore/'),
      ...(await Promise.all(explorerAssets.map((a) => measure(base, `explorer ${a.split('/').pop()}`, a)))),
    ],
    context: {
      ...context,
      documents,
      tokensUsed: pack.budget.used,
      ...(await contextTimings(base, gql, identityContext.body)),
    },
  };
}

async function main(): Promise<void> {
  if (!existsSync(entry)) throw new Error('dist/main.js is missing: run `npm run build` first');
  const dataDir = mkdtempSync(join(tmpdir(), 'memgate-compression-'));
  const port = await freePort();
  const child = spawn(process.execPath, [entry], {
    env: { ...process.env, MEMGATE_DATA_DIR: dataDir, MEMGATE_PORT: String(port), MEMGATE_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitReady(base, child);
    const measured = await measureAll(base);
    const { renderGraphiQL } = await import('@graphql-yoga/render-graphiql');
    const summary = {
      date: new Date().toISOString(),
      node: process.version,
      cpus: cpus().length,
      loadAverage: loadavg()[0]!,
      gateway: 'node dist/main.js, embedded PGlite',
      graphiqlInlinePageBytes: Buffer.byteLength(renderGraphiQL(GRAPHIQL_OPTIONS)),
      ...measured,
    };
    const markdown = report(summary);
    process.stdout.write(markdown);
    const results = join(root, 'bench', 'results');
    mkdirSync(results, { recursive: true });
    writeFileSync(join(results, 'compression.json'), `${JSON.stringify(summary, null, 2)}\n`);
    writeFileSync(join(results, 'compression.md'), markdown);
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}

type Summary = Awaited<ReturnType<typeof measureAll>> & {
  date: string;
  node: string;
  cpus: number;
  loadAverage: number;
  gateway: string;
  graphiqlInlinePageBytes: number;
};

const n = (value: number) => value.toLocaleString('en-US');
const pct = (part: number, whole: number) => `${((100 * part) / whole).toFixed(1)}%`;

function rows(items: Measured[]): string[] {
  return items.map(
    (m) =>
      `| ${m.name} | ${n(m.identityBytes)} | ${n(m.gzipBytes)} | ${m.sentEncoding} ${n(m.sentBytes)} (${pct(m.sentBytes, m.identityBytes)}) | ${n(m.identitySocketBytes)} → ${n(m.sentSocketBytes)} | ${m.cacheControl || '—'} |`,
  );
}

function total(items: Measured[], key: 'identityBytes' | 'sentBytes'): number {
  return items.reduce((sum, m) => sum + m[key], 0);
}

function report(s: Summary): string {
  const [page] = s.graphiql;
  const explorerScript = s.explorer.find((m) => m.name.endsWith('.js'))!;
  return [
    `Bytes on the wire (${s.date}, Node ${s.node}, ${s.cpus} cores, load ${s.loadAverage.toFixed(2)}; ${s.gateway}). ` +
      'Before = `accept-encoding: identity`, the bytes every client got before responses were compressed; ' +
      'sent = what a client sending `accept-encoding: gzip, br` receives. Body bytes; the socket column counts status line and headers too.',
    '',
    '| resource | before (identity) | gzip | sent with `gzip, br` | socket bytes, identity → sent | cache-control |',
    '| --- | ---: | ---: | ---: | ---: | --- |',
    ...rows(s.graphiql),
    ...rows(s.explorer),
    ...rows([s.context]),
    '',
    `**GraphiQL.** Before, one inline page of ${n(s.graphiqlInlinePageBytes)} bytes on every visit. Now a first visit ` +
      `transfers ${n(total(s.graphiql, 'sentBytes'))} bytes (page and assets, identity ${n(total(s.graphiql, 'identityBytes'))}); ` +
      `a later one ${n(page!.sentBytes)} (the page: its assets are cached as immutable).`,
    '',
    `**Explorer.** The script: ${n(explorerScript.identityBytes)} bytes before, ${n(explorerScript.sentBytes)} sent (${explorerScript.sentEncoding}); ` +
      `page and assets: ${n(total(s.explorer, 'identityBytes'))} → ${n(total(s.explorer, 'sentBytes'))} bytes.`,
    '',
    `**Context.** \`context(budgetTokens: 2000)\` over ${s.context.documents} documents (README.md and docs/), ` +
      `${s.context.tokensUsed} tokens used, every item with its signals: ${n(s.context.identityBytes)} → ${n(s.context.sentBytes)} bytes (${s.context.sentEncoding}). ` +
      `Request latency on loopback, median of 21: ${s.context.latencyMs.identity} ms identity, ${s.context.latencyMs.gzipBr} ms with \`gzip, br\`; ` +
      `one compression of that body costs ${s.context.compressCpuMs.br} ms CPU in brotli (quality 4), ${s.context.compressCpuMs.gzip} ms in gzip (level 6), median of 50.`,
    '',
  ].join('\n');
}

await main();
