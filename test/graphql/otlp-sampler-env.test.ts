import { randomBytes } from 'node:crypto';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, propagation, trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { disableTracing, startOtlpTracing } from '../../src/observability/tracing.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';

describe('OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG choose the sampler', () => {
  const bodies: string[] = [];
  let collector: Server;
  let tracing: { shutdown(): Promise<void> };
  let gw: TestGateway;

  beforeAll(async () => {
    collector = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push(Buffer.concat(chunks).toString('utf8'));
        res.end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
    // Every new trace, and not a caller's unsampled one (parent-based).
    process.env.OTEL_TRACES_SAMPLER = 'parentbased_traceidratio';
    process.env.OTEL_TRACES_SAMPLER_ARG = '1';
    tracing = await startOtlpTracing('memgate-test');
    gw = await startTestGateway();
  });

  afterAll(async () => {
    await gw?.close();
    disableTracing();
    trace.disable();
    context.disable();
    propagation.disable();
    for (const v of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_TRACES_SAMPLER', 'OTEL_TRACES_SAMPLER_ARG'])
      delete process.env[v];
    await new Promise<void>((resolve) => collector.close(() => resolve()));
  });

  it('records every new trace at ratio 1, and still none of a caller that sampled its trace out', async () => {
    for (let i = 0; i < 20; i++) await gw.gql(`query Root { __typename }`);
    const unsampled = `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-00`;
    await gw.gql(`query Unsampled { __typename }`, {}, { headers: { traceparent: unsampled } });
    await new Promise((r) => setTimeout(r, 20));
    await tracing.shutdown();
    const body = bodies.join('\n');
    expect(body.split('query.Root').length - 1).toBe(20);
    expect(body).not.toContain('query.Unsampled');
  });
});
