/**
 * `npm run eval:locomo -- FILE.json... [options]`: the LoCoMo retrieval harness (the same as
 * `memgate eval locomo`). Pass LoCoMo conversation files (e.g. locomo-dev/26.json); see `--help`.
 */
import { runLocomoCommand } from '../src/cli/eval-command.js';

runLocomoCommand(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
