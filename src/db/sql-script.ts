import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';

/**
 * Splits a pg_dump plain-format script into statements, line by line (a dump may be larger than
 * any string): quotes, quoted identifiers, dollar quotes and comments are tracked across lines,
 * so a `;` inside a function body or a text value never ends a statement. psql meta-commands
 * (`\restrict`, `\connect`…) are dropped: they are instructions to psql, not SQL.
 * `COPY … FROM stdin` blocks are refused: backups are written with INSERTs (see DUMP_ARGS).
 */
export async function* sqlStatements(
  input: Readable,
  onBytes?: (bytes: number) => void,
): AsyncGenerator<string> {
  const lexer = new StatementLexer();
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) {
    onBytes?.(Buffer.byteLength(line) + 1);
    yield* lexer.feed(line);
  }
  const rest = lexer.finish();
  if (rest) yield rest;
}

type State = { kind: 'code' } | { kind: 'quote'; close: string } | { kind: 'dollar'; tag: string };

export class StatementLexer {
  private state: State = { kind: 'code' };
  private blockDepth = 0;
  private buffer: string[] = [];
  private meaningful = false;

  *feed(line: string): Generator<string> {
    if (this.state.kind === 'code' && this.blockDepth === 0 && !this.meaningful) {
      if (line.startsWith('\\')) return; // a psql meta-command between statements
      if (/^COPY\s.+FROM stdin;\s*$/i.test(line)) {
        throw new Error('COPY … FROM stdin blocks are not supported; make the dump with --inserts.');
      }
    }
    let start = 0;
    let i = 0;
    while (i < line.length) {
      const step = this.scan(line, i);
      if (step === 'end') {
        this.buffer.push(line.slice(start, i + 1));
        const statement = this.buffer.join('\n').trim();
        this.buffer = [];
        this.meaningful = false;
        if (statement) yield statement;
        start = i + 1;
        i += 1;
      } else if (step === 'comment') {
        i = line.length;
      } else i = step;
    }
    // Lines of only comments and blanks between statements are dropped, so a statement starts
    // with its first keyword.
    if (this.meaningful) this.buffer.push(line.slice(start));
    else this.buffer = [];
  }

  /** What is left when the input ends (a statement without its `;`), or null. */
  finish(): string | null {
    const rest = this.buffer.join('\n').trim();
    this.buffer = [];
    return this.meaningful && rest ? rest : null;
  }

  /** Advances over one token at `i`: the next index, 'end' at a statement's `;`, 'comment' for `--`. */
  private scan(line: string, i: number): number | 'end' | 'comment' {
    const c = line[i]!;
    if (this.blockDepth > 0) {
      if (c === '*' && line[i + 1] === '/') {
        this.blockDepth -= 1;
        return i + 2;
      }
      if (c === '/' && line[i + 1] === '*') {
        this.blockDepth += 1;
        return i + 2;
      }
      return i + 1;
    }
    const state = this.state;
    if (state.kind === 'quote') {
      if (line.startsWith(state.close, i)) {
        // A doubled quote is an escaped one, not the end.
        if (line.startsWith(state.close, i + 1)) return i + 2;
        this.state = { kind: 'code' };
      }
      return i + 1;
    }
    if (state.kind === 'dollar') {
      if (line.startsWith(state.tag, i)) {
        this.state = { kind: 'code' };
        return i + state.tag.length;
      }
      return i + 1;
    }
    if (c === '-' && line[i + 1] === '-') return 'comment';
    if (c === '/' && line[i + 1] === '*') {
      this.blockDepth = 1;
      return i + 2;
    }
    if (c === ';') return 'end';
    if (!/\s/.test(c)) this.meaningful = true;
    if (c === "'" || c === '"') {
      this.state = { kind: 'quote', close: c };
      return i + 1;
    }
    if (c === '$') {
      const tag = /^\$(?:[A-Za-z_][A-Za-z_0-9]*)?\$/.exec(line.slice(i))?.[0];
      // `$1` is a parameter and `a$b` part of a name, neither opens a dollar quote.
      if (tag && !/[A-Za-z_0-9]/.test(line[i - 1] ?? '')) {
        this.state = { kind: 'dollar', tag };
        return i + tag.length;
      }
    }
    return i + 1;
  }
}
