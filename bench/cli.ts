/** `memgate bench`: the same runner as `npm run bench` (options: `memgate bench --help`). */
import { registerCommand } from '../src/cli-registry.js';

registerCommand('bench', {
  summary: 'run the benchmark suite on a throwaway database (--help for options)',
  async run(args) {
    const { benchMain } = await import('./main.js');
    return benchMain(args);
  },
});
