import { randomBytes } from 'node:crypto';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, propagation, trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { disableTracing, startOtlpTracing } from '../../src/observability/tracing.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';

describe('OTLP export when OTEL_EXPORTER_OTLP_ENDPOINT is set', () => {
  const received: { path: string; body: string }[] = [];
  let collector: Server;
  let tracing: { shutdown(): Promise<void> };
  let gw: TestGateway;

  beforeAll(async () => {
    // A collector stand-in on loopback: it keeps what the exporter posts.
    collector = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ path: req.url ?? '', body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
    tracing = await startOtlpTracing('memgate-test');
    gw = await startTestGateway();
  });

  afterAll(async () => {
    await gw?.close();
    disableTracing();
    trace.disable();
    context.disable();
    propagation.disable();
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    await new Promise<void>((resolve) => collector.close(() => resolve()));
  });

  const traceparent = (sampled: boolean) =>
    `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-${sampled ? '01' : '00'}`;
  const occurrences = (body: string, needle: string) => body.split(needle).length - 1;

  it("samples as shipped: a caller's sampled trace always, an unsampled one never, about one new trace in ten", async () => {
    for (let i = 0; i < 20; i++) {
      expect(
        (await gw.gql(`query Sampled { __typename }`, {}, { headers: { traceparent: traceparent(true) } }))
          .errors,
      ).toBeUndefined();
      expect(
        (await gw.gql(`query Unsampled { __typename }`, {}, { headers: { traceparent: traceparent(false) } }))
          .errors,
      ).toBeUndefined();
    }
    for (let i = 0; i < ROOT_REQUESTS; i++) await gw.gql(`query Root { __typename }`);
    await new Promise((r) => setTimeout(r, 20)); // the request span ends when the response closes
    await tracing.shutdown(); // flushes the batch
    expect(received.map((r) => r.path)).toContain('/v1/traces');
    const body = received.map((r) => r.body).join('\n');
    expect(occurrences(body, 'query.Sampled')).toBe(20);
    expect(occurrences(body, 'query.Unsampled')).toBe(0);
    // Binomial(300, 0.1): mean 30, sd 5.2; these bounds are more than 3.8 sd away.
    const roots = occurrences(body, 'query.Root');
    expect(roots).toBeGreaterThanOrEqual(10);
    expect(roots).toBeLessThanOrEqual(50);
    expect(body).toContain('POST /graphql');
    expect(body).toContain('memgate-test');
  });
});

const ROOT_REQUESTS = 300;
