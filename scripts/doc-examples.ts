/**
 * The runnable examples of the Markdown docs: every fenced `graphql` block and every `sh`/`bash`
 * block that calls `curl`. The doc-example test (test/docs/examples.test.ts) and the Node 24
 * smoke run (scripts/smoke.ts) execute them in order against a real server, so docs cannot rot.
 *
 * A block that demonstrates an error says so on the line before its fence:
 *   <!-- expect-error: BAD_USER_INPUT -->
 * and then must fail with exactly that `extensions.code`.
 *
 * Ids the server makes up (trace ids, fact ids, Relay ids, cursors) cannot be written in a
 * doc. A GraphQL example refers to one as "<fieldName>" — the value of that field in the
 * latest earlier response that has it (see {@link DocSession}), which is what a reader pastes.
 */
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';

export interface DocExample {
  kind: 'graphql' | 'curl';
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  text: string;
  expectError?: string;
}

const FENCE = /^(\s*)```(\w*)\s*$/;
const EXPECT = /<!--\s*expect-error:\s*([A-Z_]+)\s*-->/;

export function extractExamples(markdown: string, file: string): DocExample[] {
  const lines = markdown.split('\n');
  const examples: DocExample[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    const [, indent = '', language = ''] = open;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !new RegExp(`^${indent}\`\`\`\\s*$`).test(lines[j]!); j++) {
      body.push(lines[j]!.startsWith(indent) ? lines[j]!.slice(indent.length) : lines[j]!);
    }
    const text = body.join('\n');
    const expectError = EXPECT.exec(lines[i - 1] ?? '')?.[1] ?? EXPECT.exec(lines[i - 2] ?? '')?.[1];
    const kind =
      language === 'graphql'
        ? 'graphql'
        : ['sh', 'bash', 'shell'].includes(language) && /\bcurl\s/.test(text)
          ? 'curl'
          : null;
    if (kind) examples.push({ kind, file, line: i + 1, text, ...(expectError ? { expectError } : {}) });
    i = j;
  }
  return examples;
}

/** README.md first, then docs/ depth-first in name order: the order a reader meets them. */
export function docFiles(root: string): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir)
      .sort()
      .flatMap((name) => {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) return walk(path);
        return name.endsWith('.md') ? [path] : [];
      });
  return [join(root, 'README.md'), ...walk(join(root, 'docs'))].map((path) => relative(root, path));
}

export function allExamples(root: string, files = docFiles(root)): DocExample[] {
  return files.flatMap((file) => extractExamples(readFileSync(join(root, file), 'utf8'), file));
}

interface GraphQLBody {
  data?: unknown;
  errors?: { message: string; extensions?: { code?: string } }[];
}

const run = promisify(execFile);
const PLACEHOLDER = /"<([A-Za-z][A-Za-z0-9]*)>"/g;

/** Runs examples in order, remembering the string fields of each response for placeholders. */
export class DocSession {
  private readonly remembered = new Map<string, string>();

  /** `token`, when given, is sent as a bearer token (a gateway with a tokens file wants one). */
  constructor(
    private readonly graphqlUrl: string,
    private readonly token?: string,
  ) {}

  async run(example: DocExample): Promise<GraphQLBody> {
    const where = `${example.file}:${example.line}`;
    const text = example.text.replace(PLACEHOLDER, (_m, name: string) => {
      const value = this.remembered.get(name);
      if (value === undefined) throw new Error(`${where}: no earlier response has a field "${name}"`);
      return JSON.stringify(value);
    });
    const body = await runExample({ ...example, text }, this.graphqlUrl, this.token);
    // The first occurrence in this response wins over older ones.
    const seen = new Set<string>();
    const walk = (value: unknown): void => {
      if (Array.isArray(value)) value.forEach(walk);
      else if (value && typeof value === 'object') {
        for (const [key, inner] of Object.entries(value)) {
          if (typeof inner === 'string' && !seen.has(key)) {
            seen.add(key);
            this.remembered.set(key, inner);
          }
          walk(inner);
        }
      }
    };
    walk(body.data);
    return body;
  }
}

/**
 * Runs one example against the gateway at `graphqlUrl` and returns the parsed response; throws
 * with the file and line when it errs (or, for an expect-error block, when it does not).
 * curl examples address the documented default port; they are pointed at `graphqlUrl`'s.
 * With a `token`, every request carries it as `Authorization: Bearer …` (curl's too).
 */
export async function runExample(
  example: DocExample,
  graphqlUrl: string,
  token?: string,
): Promise<GraphQLBody> {
  const where = `${example.file}:${example.line}`;
  let status: number;
  let body: GraphQLBody;
  if (example.kind === 'graphql') {
    const response = await fetch(graphqlUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify({ query: example.text }),
    });
    status = response.status;
    body = (await response.json()) as GraphQLBody;
  } else {
    const { host } = new URL(graphqlUrl);
    let command = example.text.replace(/(?:https?:\/\/)?(?:localhost|127\.0\.0\.1):4000/g, `http://${host}`);
    if (token) {
      if (!/^[A-Za-z0-9_-]+$/.test(token)) throw new Error('a bearer token is letters, digits, _ and -');
      command = command.replace(/\bcurl\s/g, `curl -H 'authorization: Bearer ${token}' `);
    }
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', `${command}\n`], { timeout: 60_000 });
    status = 200;
    // A scrape example prints Prometheus text, not GraphQL: it must show the exposition format.
    if (/\/metrics\b/.test(command)) {
      if (!/^# (HELP|TYPE) memgate_/m.test(stdout))
        throw new Error(`${where}: the scrape printed no memgate metrics:\n${stdout.slice(0, 500)}`);
      return {};
    }
    try {
      body = JSON.parse(stdout) as GraphQLBody;
    } catch {
      throw new Error(`${where}: curl printed something other than one JSON response:\n${stdout}`);
    }
  }
  const codes = (body.errors ?? []).map((e) => e.extensions?.code ?? 'NO_CODE');
  if (example.expectError) {
    if (!codes.includes(example.expectError)) {
      throw new Error(`${where}: expected ${example.expectError}, got ${JSON.stringify(body)}`);
    }
  } else if (codes.length || status >= 400) {
    throw new Error(`${where}: HTTP ${status}, errors ${JSON.stringify(body.errors ?? body)}`);
  }
  return body;
}
