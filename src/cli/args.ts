/** Minimal `--name value` / `--flag` parsing for the CLI commands (no dependency needed). */
export interface ParsedArgs {
  positional: string[];
  options: Map<string, string | true>;
}

export function parseArgs(args: readonly string[], valued: readonly string[]): ParsedArgs {
  const positional: string[] = [];
  const options = new Map<string, string | true>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
    if (eq > 0) options.set(name, arg.slice(eq + 1));
    else if (valued.includes(name)) {
      const value = args[i + 1];
      if (value === undefined || value.startsWith('--')) throw new UsageError(`--${name} needs a value`);
      options.set(name, value);
      i++;
    } else options.set(name, true);
  }
  return { positional, options };
}

export class UsageError extends Error {}

export function positiveInt(value: string | true | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${name} must be a positive integer`);
  return n;
}
