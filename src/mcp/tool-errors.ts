import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type ArgumentIssue, describeArgumentIssues, describeExpected, schemaAt } from './arguments.js';
import type { GraphQLErrorBody } from './graphql-runner.js';
import { toolArgumentSchema } from './json-schema.js';
import type { McpTool } from './tools.js';

/** A tool error carries the gateway's code (and details such as the issues), never a stack. */
export function toolError(error: GraphQLErrorBody): CallToolResult {
  const { code = 'INTERNAL_SERVER_ERROR', http: _http, ...details } = error.extensions ?? {};
  return {
    isError: true,
    content: [{ type: 'text', text: `${code}: ${error.message}` }],
    structuredContent: { error: { code, message: error.message, ...details } },
  };
}

export function argumentsError(tool: McpTool, issues: ArgumentIssue[]): CallToolResult {
  return toolError({
    message: describeArgumentIssues(tool.name, issues),
    extensions: { code: 'BAD_USER_INPUT', issues },
  });
}

// graphql-js words a variable it cannot coerce as `Variable "$input" got invalid value "2" at
// "input.k"; Int cannot represent non-integer value: "2"`. The arguments are checked before the
// operation runs, so this is a fallback: should one still come back, it is said in the tool's
// terms (the argument's path, what was expected, what came) and not in the operation's.
const INVALID_AT = /^Variable "\$(\w+)" got invalid value ([\s\S]*) at "([^"]+)"; ([\s\S]*)$/;
const INVALID = /^Variable "\$(\w+)" got invalid value ([\s\S]*?); ([\s\S]*)$/;
const MISSING =
  /^Variable "\$(\w+)" of (?:required|non-null) type "[^"]+" (?:was not provided|must not be null)\.$/;
const UNKNOWN_FIELD = /^Field "(\w+)" is not defined by type "[^"]+"\./;
const MISSING_FIELD = /^Field "(\w+)" of required type "[^"]+" was not provided\./;

// The limits name a field argument of the operation: `Argument "input" of "context" holds…`.
const FIELD_ARGUMENT = /^Argument "(\w+)" of "\w+"(?::)? ([\s\S]*)$/;
const LIST_SIZE = /^holds a list of (\d+) items; the maximum is (\d+)\.$/;

export function inToolTerms(tool: McpTool, error: GraphQLErrorBody): CallToolResult {
  const issue = variableIssue(tool, error.message);
  if (issue) return argumentsError(tool, [issue]);
  const argument = FIELD_ARGUMENT.exec(error.message);
  if (!argument) return toolError(error);
  const [name, rest] = [argument[1]!, argument[2]!];
  const own = name in tool.input.shape;
  const list = LIST_SIZE.exec(rest);
  const message = list
    ? `${own ? name : `A list in the arguments of ${tool.name}`}: ${list[1]} items, at most ${list[2]} allowed.`
    : `${own ? name : `The arguments of ${tool.name}`}: ${rest}`;
  return toolError({ ...error, message });
}

function variableIssue(tool: McpTool, message: string): ArgumentIssue | undefined {
  const missing = MISSING.exec(message);
  if (missing) {
    return { path: argumentPath(tool, missing[1]!, missing[1]!), message: 'expected a value, got nothing' };
  }
  const at = INVALID_AT.exec(message) ?? INVALID.exec(message);
  if (!at) return undefined;
  const [variable, got] = [at[1]!, at[2]!];
  const graphqlPath = at.length === 5 ? at[3]! : variable;
  const reason = at[at.length - 1]!;
  const path = argumentPath(tool, variable, graphqlPath);
  const unknown = UNKNOWN_FIELD.exec(reason);
  if (unknown) return { path: join(path, unknown[1]!), message: 'unknown field' };
  const required = MISSING_FIELD.exec(reason);
  if (required) return { path: join(path, required[1]!), message: 'expected a value, got nothing' };
  const root = toolArgumentSchema(tool.input);
  const expected = describeExpected(schemaAt(root, segments(path)), root);
  return { path, message: `expected ${expected ?? 'another value'}, got ${got}` };
}

/**
 * The argument a variable's path names: the variable is an argument itself, or (for tools whose
 * arguments travel as one `input` object) the wrapper, which the client never wrote.
 */
function argumentPath(tool: McpTool, variable: string, graphqlPath: string): string {
  if (variable in tool.input.shape) return graphqlPath;
  return graphqlPath.slice(variable.length).replace(/^\./, '');
}

function join(path: string, field: string): string {
  return path ? `${path}.${field}` : field;
}

function segments(path: string): PropertyKey[] {
  const out: PropertyKey[] = [];
  for (const m of path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) out.push(m[2] !== undefined ? Number(m[2]) : m[1]!);
  return out;
}
