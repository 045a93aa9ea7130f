import { type Tracer, type TracerProvider, context, propagation, trace } from '@opentelemetry/api';
import {
  AlwaysOffSampler,
  InMemorySpanExporter,
  NodeTracerProvider,
  ParentBasedSampler,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { disableTracing, enableTracing } from '../../src/observability/tracing.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { retainDocuments } from '../helpers/seed-context.js';

const NS = 'traced-ns';
const QUERY_TEXT = 'quarterly roadmap owner';
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

const PACK = `query Pack($ns: String!, $q: String!) {
  context(input: { namespaces: [$ns], query: $q, budgetTokens: 400 }) { text warnings }
}`;

type Span = ReturnType<InMemorySpanExporter['getFinishedSpans']>[number];

describe('OpenTelemetry spans for a context request', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  let gw: TestGateway;
  let spans: Span[];
  let statements: number;

  beforeAll(async () => {
    provider.register();
    enableTracing(provider);
    gw = await startTestGateway();
    await retainDocuments(gw, NS, [
      { key: 'roadmap', title: 'Roadmap', content: `# Roadmap\n\nDana is the ${QUERY_TEXT}.` },
      { key: 'notes', title: 'Notes', content: '# Notes\n\nThe roadmap review is on Friday.' },
    ]);
    exporter.reset();
    const res = await gw.gql(
      PACK,
      { ns: NS, q: QUERY_TEXT },
      {
        headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
      },
    );
    expect(res.errors).toBeUndefined();
    statements = res.extensions?.sql?.statements ?? 0;
    // The request span ends when the response is closed, just after the body arrives.
    for (let i = 0; i < 50 && !exporter.getFinishedSpans().some((s) => s.name === 'POST /graphql'); i++)
      await new Promise((r) => setTimeout(r, 10));
    spans = exporter.getFinishedSpans();
  });

  afterAll(async () => {
    await gw.close();
    disableTracing();
    await provider.shutdown();
    trace.disable();
    context.disable();
    propagation.disable();
  });

  const named = (name: string) => spans.filter((s) => s.name === name);
  const one = (name: string) => {
    const found = named(name);
    expect(found, name).toHaveLength(1);
    return found[0]!;
  };
  const parentOf = (s: Span) => spans.find((p) => p.spanContext().spanId === s.parentSpanContext?.spanId);

  it("continues the caller's W3C trace", () => {
    const request = one('POST /graphql');
    expect(request.parentSpanContext?.spanId).toBe(CALLER_SPAN);
    for (const s of spans) expect(s.spanContext().traceId).toBe(CALLER_TRACE);
  });

  it('nests request → operation → root field', () => {
    const operation = one('query.Pack');
    expect(parentOf(operation)?.name).toBe('POST /graphql');
    expect(parentOf(one('Query.context'))?.name).toBe('query.Pack');
  });

  it('has one span per compiler stage, under the root field', () => {
    for (const stage of [
      'plan',
      'query_channels',
      'anchored_channels',
      'hydrate',
      'score',
      'pack',
      'expand',
      'assemble',
      'trace',
    ]) {
      expect(parentOf(one(`stage ${stage}`))?.name).toBe('Query.context');
    }
    expect(parentOf(one('channel lexical'))?.name).toBe('stage query_channels');
    expect(parentOf(one('channel vector'))?.name).toBe('stage query_channels');
    expect(parentOf(one('channel facts'))?.name).toBe('stage anchored_channels');
    expect(one('channel lexical').attributes['memgate.candidates']).toBeGreaterThan(0);
  });

  it('has one span per SQL statement, named by its queryName, with row counts', () => {
    const sql = spans.filter((s) => s.attributes['db.query.summary'] !== undefined);
    expect(statements).toBeGreaterThan(3);
    expect(sql).toHaveLength(statements);
    for (const s of sql) {
      expect(s.name).toMatch(/^[A-Za-z_][A-Za-z0-9_.:-]*$/);
      expect(typeof s.attributes['db.response.returned_rows']).toBe('number');
    }
    // The lexical statement runs for the query and again for the multi-hop expansion.
    const lexical = named('lexicalChannel').map((s) => parentOf(s)?.name);
    expect(lexical).toContain('channel lexical');
    expect(parentOf(one('insertContextTraces'))?.name).toBe('stage trace');
    const rows = named('lexicalChannel').map((s) => Number(s.attributes['db.response.returned_rows']));
    expect(Math.max(...rows)).toBeGreaterThan(0);
  });

  it('records no query text, namespace or document', () => {
    const dump = JSON.stringify(
      spans.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events })),
    );
    expect(dump).not.toContain(QUERY_TEXT);
    expect(dump).not.toContain(NS);
    expect(dump).not.toContain('budgetTokens');
  });
});

describe('OpenTelemetry with the request sampled out', () => {
  const exporter = new InMemorySpanExporter();
  // Callers that sample a share of traces: an unsampled request must cost no child span.
  const provider = new NodeTracerProvider({
    sampler: new ParentBasedSampler({ root: new AlwaysOffSampler() }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  let gw: TestGateway;
  // Spans asked of the tracer, recorded or not: the stages and statements must not even ask.
  let started = 0;
  const counting: TracerProvider = {
    getTracer(name, version, options) {
      const tracer = provider.getTracer(name, version, options);
      return new Proxy(tracer, {
        get(target, key, receiver) {
          if (key === 'startSpan')
            return (...args: Parameters<Tracer['startSpan']>) => {
              started++;
              return target.startSpan(...args);
            };
          return Reflect.get(target, key, receiver);
        },
      });
    },
  };

  beforeAll(async () => {
    provider.register();
    enableTracing(counting);
    gw = await startTestGateway();
    await retainDocuments(gw, NS, [
      { key: 'roadmap', title: 'Roadmap', content: `# Roadmap\n\n${QUERY_TEXT}.` },
    ]);
  });

  afterAll(async () => {
    await gw.close();
    disableTracing();
    await provider.shutdown();
    trace.disable();
    context.disable();
    propagation.disable();
  });

  it('records no span at all and still answers', async () => {
    exporter.reset();
    started = 0;
    const res = await gw.gql(
      PACK,
      { ns: NS, q: QUERY_TEXT },
      { headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-00` } },
    );
    expect(res.errors).toBeUndefined();
    expect(res.extensions?.sql?.statements ?? 0).toBeGreaterThan(3);
    await new Promise((r) => setTimeout(r, 50));
    expect(exporter.getFinishedSpans()).toHaveLength(0);
    // The request span and the GraphQL operation's: nothing per stage, channel or statement.
    expect(started).toBeLessThanOrEqual(2);
  });
});
