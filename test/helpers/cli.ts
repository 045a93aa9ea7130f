import { spawn } from 'node:child_process';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `memgate ARGS` in a child process, as a user would. DATABASE_URL is passed only when
 * `env` sets it, so a command aimed at an embedded folder never reaches the test server.
 */
export function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, MEMGATE_LOG_LEVEL: 'warn', ...env };
  if (!env.DATABASE_URL) delete childEnv.DATABASE_URL;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { env: childEnv });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Like `cli`, but a non-zero exit throws with the command's stderr; resolves to stdout. */
export async function cliOk(args: string[], env: Record<string, string> = {}): Promise<string> {
  const result = await cli(args, env);
  if (result.code !== 0) throw new Error(`memgate ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result.stdout;
}
