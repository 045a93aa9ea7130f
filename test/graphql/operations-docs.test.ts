import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTokenCommand } from '../../src/cli/token-command.js';
import { disableMetrics } from '../../src/observability/metrics.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';
import { writeTokensFile } from '../helpers/principals.js';

// docs/operations.md, run: the token command, the scrape, and every metric it names.
const root = join(import.meta.dirname, '..', '..');
const doc = readFileSync(join(root, 'docs', 'operations.md'), 'utf8');
const dashboard = JSON.parse(readFileSync(join(root, 'examples', 'grafana-dashboard.json'), 'utf8')) as {
  panels: { title: string; targets: { expr: string }[] }[];
};
const scrapeConfig = readFileSync(join(root, 'examples', 'prometheus.yml'), 'utf8');

const METRIC = /\b(?:memgate|graphql|process|nodejs)_[a-z0-9_]+/g;
const SUFFIX = /_(?:bucket|sum|count)$/;

/** Metric names the docs' tables list (first column). */
function documentedMetrics(): string[] {
  return doc
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .map((l) => /^\| `([a-z0-9_]+)`/.exec(l)?.[1])
    .filter((m): m is string => m !== undefined && /^(memgate|graphql)_/.test(m));
}

describe('docs/operations.md', () => {
  let gw: TestGateway;
  let token: string;
  let scraped: Set<string>;

  beforeAll(async () => {
    const { path } = writeTokensFile([{ id: 'writer', write: ['ops'] }]);
    // `npx memgate token create --id prometheus --admin`, as the docs say.
    const out: string[] = [];
    const code = runTokenCommand(['create', '--id', 'prometheus', '--admin'], {
      env: { MEMGATE_TOKENS_FILE: path },
      out: (t) => out.push(t),
      err: () => undefined,
    });
    expect(code).toBe(0);
    token = out.join('').trim();
    gw = await startTestGateway({ MEMGATE_TOKENS_FILE: path, MEMGATE_METRICS: '1' });
  });
  afterAll(async () => {
    await gw?.close();
    disableMetrics();
  });

  const scrape = async () => {
    // curl -s -H "authorization: Bearer $TOKEN" http://127.0.0.1:4000/metrics
    const res = await fetch(gw.url.replace('/graphql', '/metrics'), {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    return new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!));
  };

  it('the admin-only token from `token create --admin` scrapes /metrics; the scrape config matches', async () => {
    scraped = await scrape();
    expect(scraped.size).toBeGreaterThan(10);
    expect(doc).toContain(scrapeConfig.trim());
    expect(scrapeConfig).toMatch(/metrics_path: \/metrics/);
    expect(scrapeConfig).toMatch(/credentials_file: /);
  });

  it('lists exactly the metrics memgate serves', async () => {
    // Every metric is declared up front, so even unused ones appear (with # TYPE, no samples).
    scraped = await scrape();
    const served = [...scraped].filter((m) => /^(memgate|graphql)_/.test(m));
    const backendOnly =
      gw.db.backend === 'pglite'
        ? [
            'memgate_db_pool_clients',
            'memgate_db_listener_up',
            'memgate_db_listener_reconnects',
            'memgate_db_replica_up',
            'memgate_db_replica_lag_bytes',
            'memgate_db_replica_lag_seconds',
          ]
        : ['memgate_pglite_queue_depth', 'memgate_pglite_queue_wait_seconds'];
    const documented = documentedMetrics().filter((m) => !backendOnly.includes(m));
    expect(served.sort()).toEqual(documented.sort());
  });

  it('every query in the docs and the Grafana dashboard names a served metric', () => {
    const exprs = [
      ...dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr)),
      ...[...doc.matchAll(/```promql\n([\s\S]*?)```/g)].flatMap((m) =>
        m[1]!.split('\n').filter((l) => l && !l.startsWith('#')),
      ),
    ];
    expect(exprs.length).toBeGreaterThan(10);
    const backendOnly = gw.db.backend === 'pglite' ? 'memgate_db_pool_clients' : 'memgate_pglite_';
    for (const expr of exprs) {
      for (const name of expr.match(METRIC) ?? []) {
        if (name.startsWith(backendOnly)) continue;
        expect(scraped, `${name} in ${expr}`).toContain(name.replace(SUFFIX, ''));
      }
    }
  });
});
