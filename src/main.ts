import { ConfigError, parseConfig } from './config.js';
import { serve } from './serve.js';

try {
  const config = parseConfig(process.env);
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
