/** Entry of `npm run bench` (see main.ts for the options). */
import { benchMain } from './main.js';

try {
  process.exitCode = await benchMain(process.argv.slice(2));
} catch (error) {
  process.stderr.write(
    `bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = 1;
}
