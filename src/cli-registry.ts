/**
 * The CLI's command table. It lives apart from `cli.ts` because `cli.ts` is the entry module
 * and awaits the command modules at top level: a command module importing `cli.ts` would wait
 * for it forever (an unsettled top-level await, exit code 13).
 */
export interface Command {
  summary: string;
  run(args: string[]): Promise<number>;
}

export const commands: Record<string, Command> = {};

/** Other modules add their commands here (import, reindex, eval, bench, token). */
export function registerCommand(name: string, command: Command): void {
  commands[name] = command;
}
