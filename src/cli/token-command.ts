import { registerCommand } from '../cli-registry.js';
import {
  TokensFileError,
  appendPrincipal,
  generateToken,
  hashToken,
  principalEntrySchema,
  readTokensFile,
  removePrincipal,
} from '../auth/tokens-file.js';

const USAGE = `Usage:
  memgate token create --id <id> [--read <globs>] [--write <globs>] [--scopes <labels>] [--pii] [--admin] [--file <path>]
  memgate token list [--file <path>]
  memgate token revoke --id <id> [--file <path>]

--read, --write and --scopes take comma-separated values, and each may be given more than
once; these two grant the same rights:
  memgate token create --id agent-1 --read 'support,team-*'
  memgate token create --id agent-1 --read support --read 'team-*'
--scopes '*' lets the principal see every visibility scope.
The file defaults to MEMGATE_TOKENS_FILE. create prints the new token once, on stdout: only
its SHA-256 is stored, so it cannot be shown again.`;

const VALUED = new Set(['id', 'read', 'write', 'scopes', 'file']);
const FLAGS = new Set(['pii', 'admin', 'help']);

interface Io {
  env: Record<string, string | undefined>;
  out(text: string): void;
  err(text: string): void;
}

class UsageError extends Error {}

/** `memgate token …`; returns the exit code (0 ok, 1 failure, 2 usage). */
export function runTokenCommand(args: readonly string[], io: Io): number {
  try {
    const [sub, ...rest] = args;
    if (!sub || sub === '--help' || sub === 'help') {
      io.out(`${USAGE}\n`);
      return sub ? 0 : 2;
    }
    const options = parseOptions(rest);
    if (options.flags.has('help')) {
      io.out(`${USAGE}\n`);
      return 0;
    }
    const file = single(options, 'file') ?? io.env.MEMGATE_TOKENS_FILE;
    if (!file) throw new UsageError('no tokens file: pass --file or set MEMGATE_TOKENS_FILE');
    switch (sub) {
      case 'create':
        return create(file, options, io);
      case 'list':
        return list(file, io);
      case 'revoke': {
        const id = single(options, 'id');
        if (!id) throw new UsageError('--id is required');
        removePrincipal(file, id);
        io.err(`revoked "${id}" in ${file}; a running gateway stops accepting its token within a second\n`);
        return 0;
      }
      default:
        throw new UsageError(`unknown subcommand "${sub}"`);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`${error.message}\n\n${USAGE}\n`);
      return 2;
    }
    if (error instanceof TokensFileError) {
      io.err(`${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

function create(file: string, options: Options, io: Io): number {
  const id = single(options, 'id');
  if (!id) throw new UsageError('--id is required');
  const read = list_(options, 'read');
  const write = list_(options, 'write');
  // An admin-only principal (a metrics scraper, an auditor) needs no namespace at all.
  if (read.length === 0 && write.length === 0 && !options.flags.has('admin'))
    throw new UsageError('give at least one of --read, --write or --admin');
  const token = generateToken();
  const parsed = principalEntrySchema.safeParse({
    id,
    tokenSha256: hashToken(token),
    read,
    write,
    scopes: list_(options, 'scopes'),
    pii: options.flags.has('pii'),
    admin: options.flags.has('admin'),
  });
  if (!parsed.success) {
    throw new UsageError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
  }
  appendPrincipal(file, parsed.data);
  io.out(`${token}\n`);
  io.err(`added principal "${id}" to ${file}. The token above is shown once: only its SHA-256 is stored.\n`);
  return 0;
}

function list(file: string, io: Io): number {
  for (const p of readTokensFile(file).principals) {
    const rights = [
      `read=${p.read.join(',') || '-'}`,
      `write=${p.write.join(',') || '-'}`,
      `scopes=${p.scopes.join(',') || '-'}`,
      ...(p.pii ? ['pii'] : []),
      ...(p.admin ? ['admin'] : []),
    ];
    io.out(`${p.id}\t${rights.join(' ')}\n`);
  }
  return 0;
}

interface Options {
  values: Map<string, string[]>;
  flags: Set<string>;
}

function parseOptions(args: readonly string[]): Options {
  const values = new Map<string, string[]>();
  const flags = new Set<string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('--')) throw new UsageError(`unexpected argument "${arg}"`);
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
    if (FLAGS.has(name) && eq < 0) {
      flags.add(name);
      continue;
    }
    if (!VALUED.has(name)) throw new UsageError(`unknown option --${name}`);
    let value: string | undefined;
    if (eq > 0) value = arg.slice(eq + 1);
    else {
      value = args[i + 1];
      i++;
    }
    if (value === undefined || value.startsWith('--')) throw new UsageError(`--${name} needs a value`);
    values.set(name, [...(values.get(name) ?? []), value]);
  }
  return { values, flags };
}

function single(options: Options, name: string): string | undefined {
  const all = options.values.get(name);
  if (all && all.length > 1) throw new UsageError(`--${name} given more than once`);
  return all?.[0];
}

function list_(options: Options, name: string): string[] {
  return (options.values.get(name) ?? [])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v.length > 0);
}

registerCommand('token', {
  summary: 'create, list or revoke bearer tokens in the tokens file (MEMGATE_TOKENS_FILE)',
  async run(args) {
    return runTokenCommand(args, {
      env: process.env,
      out: (t) => process.stdout.write(t),
      err: (t) => process.stderr.write(t),
    });
  },
});
