import { ConfigError, parseConfig } from './config.js';

// graphql-js reads NODE_ENV once, when it loads: outside production it re-checks every
// `instanceof` across realms on each execution (~4% of a nested read's CPU). The server loads
// it below, after this default; NODE_ENV=development still selects the checks.
process.env.NODE_ENV ??= 'production';

try {
  const config = parseConfig(process.env);
  const { serve } = await import('./serve.js');
  await serve(config);
} catch (error) {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
  process.stderr.write(
    `memgate failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
}
