import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config.js';

describe('configuration from the environment', () => {
  it('has working defaults: loopback, port 4000, embedded database in ./.memgate', () => {
    const config = parseConfig({});
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 4000,
      dataDir: './.memgate',
      embedder: 'offline',
    });
    expect(config.databaseUrl).toBeUndefined();
    expect(config.traceSql).toBe(false);
  });

  it('lists every problem at once', () => {
    try {
      parseConfig({ MEMGATE_PORT: 'eighty', DATABASE_URL: 'mysql://x', MEMGATE_LOG_LEVEL: 'loud' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const problems = (error as ConfigError).problems.join('\n');
      expect(problems).toMatch(/MEMGATE_PORT/);
      expect(problems).toMatch(/DATABASE_URL/);
      expect(problems).toMatch(/MEMGATE_LOG_LEVEL/);
    }
  });

  it('treats empty variables as unset and parses flags', () => {
    const config = parseConfig({ DATABASE_URL: '', MEMGATE_TRACE_SQL: '1', MEMGATE_PORT: '0' });
    expect(config.databaseUrl).toBeUndefined();
    expect(config.traceSql).toBe(true);
    expect(config.port).toBe(0);
  });

  it('has metrics on unless MEMGATE_METRICS=0, and OTLP tracing only with an OTLP endpoint', () => {
    expect(parseConfig({})).toMatchObject({ metrics: true, otlpTracing: false });
    expect(parseConfig({ MEMGATE_METRICS: '0' }).metrics).toBe(false);
    expect(parseConfig({ MEMGATE_METRICS: '1' }).metrics).toBe(true);
    expect(parseConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).otlpTracing).toBe(true);
    expect(parseConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' }).otlpTracing).toBe(
      true,
    );
    expect(() => parseConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector' })).toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT/,
    );
  });
});
