/**
 * `memgate bench`: the same runner as `npm run bench` (options: `memgate bench --help`).
 * The benchmark suite is development tooling written in TypeScript under bench/, outside the
 * build; the built CLI loads it through tsx, which is installed with the gateway.
 */
import { registerCommand } from '../cli-registry.js';

interface BenchModule {
  benchMain(args: string[]): Promise<number>;
}

registerCommand('bench', {
  summary: 'run the benchmark suite on a throwaway database (--help for options)',
  async run(args) {
    if (!import.meta.url.endsWith('.ts')) {
      const { register } = await import('tsx/esm/api');
      register();
    }
    const entry = new URL('../../bench/main.ts', import.meta.url).href;
    const bench = (await import(entry)) as BenchModule;
    return bench.benchMain(args);
  },
});
