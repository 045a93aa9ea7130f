import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Command, commands, registerCommand } from './cli-registry.js';
import { ConfigError, ENV_DOCS, parseConfig } from './config.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const schemaFile = join(root, 'schema', 'schema.graphql');

const builtIn: Record<string, Command> = {
  serve: {
    summary: 'start the gateway (the default of `npm start`)',
    async run() {
      // As in main.ts: graphql-js skips its development checks only when loaded in production.
      process.env.NODE_ENV ??= 'production';
      const { serve } = await import('./serve.js');
      await serve(parseConfig(process.env));
      return -1; // keeps running until a signal
    },
  },
  migrate: {
    summary: 'apply pending database migrations and exit',
    async run() {
      const { createApp } = await import('./app.js');
      const app = await createApp(parseConfig({ ...process.env, MEMGATE_LOG_LEVEL: 'warn' }));
      await app.close();
      process.stdout.write('migrations: up to date\n');
      return 0;
    },
  },
  'schema:print': {
    summary: 'write the sorted SDL to schema/schema.graphql',
    async run() {
      const { printSortedSchema } = await import('./schema/index.js');
      writeFileSync(schemaFile, printSortedSchema());
      process.stdout.write(`wrote ${schemaFile}\n`);
      return 0;
    },
  },
  'schema:check': {
    summary: 'fail when schema/schema.graphql differs from the code',
    async run() {
      const { printSortedSchema } = await import('./schema/index.js');
      let committed = '';
      try {
        committed = readFileSync(schemaFile, 'utf8');
      } catch {
        // a missing file is stale too
      }
      if (committed !== printSortedSchema()) {
        process.stderr.write('schema/schema.graphql is stale: run `npm run schema:print` and commit it.\n');
        return 1;
      }
      process.stdout.write('schema/schema.graphql is up to date\n');
      return 0;
    },
  },
};

for (const [name, command] of Object.entries(builtIn)) registerCommand(name, command);

// Command modules import the registry itself (./cli-registry.js), never this entry module.
export { registerCommand };

function help(): string {
  const width = Math.max(...Object.keys(commands).map((c) => c.length));
  const lines = [
    'memgate — a GraphQL memory gateway for AI agents',
    '',
    'Usage: npx memgate <command> [options]',
    '',
    'Commands:',
    ...Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    '',
    'Environment variables:',
    ...ENV_DOCS.map(([name, def, what]) => `  ${name.padEnd(30)} ${what} (default: ${def})`),
    '',
  ];
  return lines.join('\n');
}

async function main(argv: string[]): Promise<number> {
  await import('./cli-commands.js');
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(help());
    return 0;
  }
  const command = commands[name];
  if (!command) {
    process.stderr.write(`Unknown command "${name}".\n\n${help()}`);
    return 2;
  }
  return command.run(rest);
}

try {
  const code = await main(process.argv.slice(2));
  if (code >= 0) process.exit(code);
} catch (error) {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
