/**
 * docs/import.md documents one JSON Schema per line kind and an example file. The schemas must
 * be valid (in the subset memgate validates), the example's lines must be the kind the importer
 * takes them for and match that kind's schema, and the example must import without a rejection.
 */
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_PRINCIPAL } from '../../src/auth/principal.js';
import { compileJsonSchema, formatIssues } from '../../src/domain/json-schema.js';
import { parseImportLine } from '../../src/modules/portability/import-service.js';
import { importJsonl } from '../../src/cli/local-import.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';

const page = readFileSync('docs/import.md', 'utf8');

/** The fenced block right after `<!-- marker -->`. */
function blockAfter(marker: string): string {
  const at = page.indexOf(`<!-- ${marker} -->`);
  if (at < 0) throw new Error(`docs/import.md has no <!-- ${marker} -->`);
  const match = /```\w*\n([\s\S]*?)\n```/.exec(page.slice(at));
  if (!match) throw new Error(`no fenced block after <!-- ${marker} -->`);
  return match[1]!;
}

const validators = {
  observation: compileJsonSchema(JSON.parse(blockAfter('json-schema: observation'))),
  document: compileJsonSchema(JSON.parse(blockAfter('json-schema: document'))),
};
const exampleLines = blockAfter('import-example').split('\n');

describe('docs/import.md', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => gw?.close());

  it('each example line matches the schema of the kind the importer takes it for', () => {
    const kinds = exampleLines.map((line) => {
      const parsed = parseImportLine(line);
      if (parsed.type === 'error') throw new Error(`${line}: ${parsed.message}`);
      const issues = validators[parsed.type](JSON.parse(line));
      expect(formatIssues(issues), line).toBe('');
      return parsed.type;
    });
    expect(kinds).toEqual(['observation', 'observation', 'document']);
  });

  it('each schema refuses what the importer refuses', () => {
    const document = JSON.parse(exampleLines[2]!) as Record<string, unknown>;
    // A document line with a source is read as an observation, and is not a valid one.
    const withSource = { ...document, source: { system: 'x' } };
    expect(parseImportLine(JSON.stringify(withSource)).type).toBe('observation');
    expect(validators.observation(withSource).length).toBeGreaterThan(0);
    expect(validators.document({ ...document, content: '   ' }).length).toBeGreaterThan(0);
    const observation = JSON.parse(exampleLines[1]!) as Record<string, unknown>;
    expect(validators.observation({ ...observation, occurredAt: '2024-05-02' }).length).toBeGreaterThan(0);
    expect(validators.observation({ ...observation, kind: 'Bad Kind' }).length).toBeGreaterThan(0);
  });

  it('the example file imports without a rejection', async () => {
    const summary = await importJsonl(
      gw.app.deps,
      LOCAL_PRINCIPAL,
      Readable.from([exampleLines.join('\n')]),
      {
        namespace: 'import-doc',
      },
    );
    expect(summary).toMatchObject({
      lines: 3,
      observations: 2,
      documents: 1,
      accepted: 3,
      partial: 0,
      rejected: 0,
    });
  });

  it('the example file imports the same way through the bulk path', async () => {
    const summary = await importJsonl(
      gw.app.deps,
      LOCAL_PRINCIPAL,
      Readable.from([exampleLines.join('\n')]),
      { namespace: 'import-doc-bulk', bulk: { expectedLines: exampleLines.length } },
    );
    expect(summary).toMatchObject({
      lines: 3,
      observations: 2,
      documents: 1,
      accepted: 3,
      rejected: 0,
      vectorIndex: { plan: 'KEEP', finish: 'READY' },
    });
    const facts = await gw.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM facts WHERE namespace = 'import-doc-bulk' AND predicate = 'HAS_ISSUE'`,
    );
    expect(facts.rows[0]!.n).toBe(1);
  });
});
