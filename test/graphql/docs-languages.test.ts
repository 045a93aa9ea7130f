import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GqlResponse, type TestGateway, startTestGateway } from '../helpers/gateway.js';

// Every GraphQL example of docs/languages.md and of the README's Languages section runs here,
// in document order, against a real gateway; the answers the text promises are checked.

function graphqlBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/```graphql\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`no section ${heading}`);
  const end = markdown.indexOf('\n## ', start + 4);
  return markdown.slice(start, end < 0 ? undefined : end);
}

const docs = graphqlBlocks(readFileSync('docs/languages.md', 'utf8'));
const readme = graphqlBlocks(section(readFileSync('README.md', 'utf8'), 'Languages'));

describe('language examples in the docs', () => {
  let gw: TestGateway;
  const answers: GqlResponse[] = [];

  beforeAll(async () => {
    gw = await startTestGateway();
    for (const block of docs) answers.push(await gw.gql(block));
  });
  afterAll(async () => {
    await gw.close();
  });

  it('has the examples the text walks through', () => {
    expect(docs).toHaveLength(7);
    expect(readme).toHaveLength(1);
  });

  it('writes, sets russian, and finds the inflected question', () => {
    expect(answers[0]!.data).toEqual({ retainDocuments: { accepted: 2, rejected: 0 } });
    expect(answers[1]!.data).toEqual({
      setTextSearch: {
        textSearch: 'russian',
        configurations: [{ configuration: 'russian', chunks: 2 }],
        reindex: { state: 'DONE', progress: 1, done: 2, total: 2 },
      },
    });
    expect(answers[2]!.data).toEqual({ search: { hits: [{ chunk: { node: { key: 'guest-pass' } } }] } });
  });

  it('refuses an unknown configuration with BAD_USER_INPUT naming the known ones', () => {
    expect(answers[3]!.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(answers[3]!.errors?.[0]?.message).toContain('russian');
  });

  it('indexes each observation of an auto namespace in its own language', () => {
    expect(answers[4]!.data).toEqual({ setTextSearch: { textSearch: 'auto' } });
    expect(answers[5]!.data).toEqual({ recordObservations: { accepted: 2, rejected: 0 } });
    expect(answers[6]!.data).toEqual({
      textSearch: {
        textSearch: 'auto',
        inherited: false,
        configurations: expect.arrayContaining([
          { configuration: 'english', chunks: 1 },
          { configuration: 'russian', chunks: 1 },
        ]),
      },
    });
  });

  it('runs the README example', async () => {
    const res = await gw.gql(readme[0]!);
    expect(res.errors).toBeUndefined();
    expect(res.data).toEqual({
      setTextSearch: { textSearch: 'russian', reindex: { state: 'DONE', progress: 1 } },
    });
  });
});
