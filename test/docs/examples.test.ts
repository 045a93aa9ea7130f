/**
 * Every GraphQL and curl example in README.md and docs/ runs, in the order a reader meets them,
 * against one real gateway over HTTP; any error fails (blocks marked expect-error must fail
 * with their code). An example whose fields were renamed, or whose data an earlier example no
 * longer writes, breaks this test instead of a reader.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DocSession, allExamples, docFiles } from '../../scripts/doc-examples.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';

const root = process.cwd();
const examples = allExamples(root);

describe('documentation examples', () => {
  let gateway: TestGateway;
  let session: DocSession;
  beforeAll(async () => {
    gateway = await startTestGateway({ MEMGATE_TRACE_SQL: '0', MEMGATE_METRICS: '1' });
    session = new DocSession(gateway.url);
  });
  afterAll(async () => gateway?.close());

  it('finds the examples of every guide', () => {
    const files = docFiles(root);
    for (const page of ['README.md', 'docs/architecture.md', 'docs/import.md']) expect(files).toContain(page);
    expect(files.filter((f) => f.startsWith('docs/guide/')).length).toBeGreaterThanOrEqual(3);
    const withExamples = new Set(examples.map((e) => e.file));
    for (const file of files.filter((f) => f === 'README.md' || f.startsWith('docs/guide/'))) {
      expect(withExamples, `${file} has no runnable example`).toContain(file);
    }
    expect(examples.some((e) => e.kind === 'curl')).toBe(true);
  });

  for (const example of examples) {
    it(`${example.file}:${example.line} (${example.kind}${example.expectError ? `, fails with ${example.expectError}` : ''})`, async () => {
      await session.run(example);
    });
  }
});
