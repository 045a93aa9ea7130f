import { type ChildProcess, spawn } from 'node:child_process';
import { TEST_EMBEDDING } from './test-database.js';

/**
 * Real gateway processes (`src/main.ts`, as `npm start` runs it) for tests that kill, restart or
 * stop them. Each is remembered until `killGatewayProcesses` (call it in `afterEach`).
 */

const started: ChildProcess[] = [];

/** Starts a gateway on a free port; resolves with its GraphQL URL once it logs that it listens. */
export function startGatewayProcess(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; url: string }> {
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    MEMGATE_EMBEDDER: TEST_EMBEDDING.model,
    MEMGATE_LOG_LEVEL: 'info',
    MEMGATE_PORT: '0',
    ...env,
  };
  // Without a server of its own the process uses its data folder, not the suite's server.
  if (!env.DATABASE_URL) delete childEnv.DATABASE_URL;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { env: childEnv });
    started.push(child);
    let out = '';
    let err = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /"msg":"memgate listening","url":"([^"]+)"/.exec(out);
      if (m) resolve({ child, url: m[1]! });
    });
    child.stderr!.on('data', (d) => (err += d));
    child.on('close', (code) => reject(new Error(`server exited ${code}: ${err}`)));
  });
}

/** How a process ended: its exit code, or the signal that ended it. */
export function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve({ code: child.exitCode, signal: child.signalCode });
    } else child.on('exit', (code, signal) => resolve({ code, signal }));
  });
}

/** SIGKILLs every gateway process a test started that is still running. */
export function killGatewayProcesses(): void {
  for (const c of started.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
}
