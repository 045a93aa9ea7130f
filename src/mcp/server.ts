import { createRequire } from 'node:module';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  type CallToolResult,
  CallToolRequestSchema,
  ErrorCode,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type ReadResourceResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { parse } from 'graphql';
import { MemgateError } from '../errors.js';
import { DEFAULT_LIMITS, jsonDepthExceeds } from '../security/limits.js';
import { checkArguments } from './arguments.js';
import type { RunGraphQL } from './graphql-runner.js';
import { toolInputJsonSchema } from './json-schema.js';
import { MCP_RESOURCE_TEMPLATES, readResource } from './resources.js';
import { argumentsError, inToolTerms, toolError } from './tool-errors.js';
import type { McpTool } from './tools.js';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

/**
 * An MCP server for one caller: tools and resources answer through `run`, which carries that
 * caller's credentials. The SDK's low-level `Server` is used rather than `McpServer`, which
 * would validate arguments itself: its refusals would carry the SDK's wording instead of the
 * gateway's codes, and it cannot accept an ISO date string for a `z.date()` field.
 */
export function createMcpServer(run: RunGraphQL): Server {
  const server = new Server(
    { name: 'memgate', version },
    {
      capabilities: { tools: {}, resources: {} },
      instructions:
        'memgate is a memory gateway. Call get_context before answering, record_observations to ' +
        'remember what happened, assert_facts for what is known, trace_provenance to cite.',
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: (await loadTools()).map(describeTool),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = (await loadTools()).find((t) => t.name === request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool "${request.params.name}".`);
    return callTool(tool, request.params.arguments ?? {}, run);
  });
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [...MCP_RESOURCE_TEMPLATES],
  }));
  // Resources are addressed by namespace and key (templates); there is no global listing.
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: [] }));
  server.setRequestHandler(
    ReadResourceRequestSchema,
    (request): Promise<ReadResourceResult> => readResource(request.params.uri, run),
  );
  return server;
}

/**
 * The tools, loaded on first use: their schemas come from the services' modules, most of the
 * gateway's code, which `initialize` does not need (stdio answers it before loading them).
 */
function loadTools(): Promise<readonly McpTool[]> {
  return import('./tools.js').then((m) => m.MCP_TOOLS);
}

function describeTool(tool: McpTool): Tool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: toolInputJsonSchema(tool.input),
    annotations: {
      title: tool.title,
      readOnlyHint: tool.readOnly,
      destructiveHint: false,
      openWorldHint: false,
    },
  };
}

export async function callTool(
  tool: McpTool,
  args: Record<string, unknown>,
  run: RunGraphQL,
): Promise<CallToolResult> {
  const unknown = Object.keys(args).filter((k) => !(k in tool.input.shape));
  if (unknown.length > 0) {
    return toolError({
      message: `Unknown argument${unknown.length > 1 ? 's' : ''} for ${tool.name}: ${unknown.join(', ')}.`,
      extensions: { code: 'BAD_USER_INPUT' },
    });
  }
  // Before anything walks the arguments recursively (serialising them for the gateway would
  // overflow the stack); /mcp refuses such bodies earlier, stdio reaches this point.
  if (jsonDepthExceeds(args, DEFAULT_LIMITS.maxInputDepth)) {
    return toolError({
      message: `The arguments of ${tool.name} are nested more than ${DEFAULT_LIMITS.maxInputDepth} levels deep.`,
      extensions: { code: 'BAD_USER_INPUT' },
    });
  }
  // Numbers and booleans sent as text are read as such; problems are named by argument.
  const checked = checkArguments(tool.input, args);
  if (!checked.ok) return argumentsError(tool, checked.issues);
  const result = await run(
    tool.document,
    tool.variables?.(checked.args) ?? checked.args,
    operationName(tool),
  );
  const [firstError] = result.errors ?? [];
  if (firstError || !result.data) {
    return firstError
      ? inToolTerms(tool, firstError)
      : toolError({ message: 'No data.', extensions: { code: 'INTERNAL_SERVER_ERROR' } });
  }
  try {
    const output = tool.result(result.data, checked.args);
    const content: CallToolResult['content'] = [
      { type: 'text', text: output.text ?? JSON.stringify(output.structured, null, 2) },
    ];
    if (output.text !== undefined && output.footer) {
      content.push({ type: 'text', text: JSON.stringify(output.footer, null, 2) });
    }
    return { content, structuredContent: output.structured };
  } catch (error) {
    if (error instanceof MemgateError) {
      return toolError({ message: error.message, extensions: { code: error.code } });
    }
    return toolError({ message: 'Unexpected error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } });
  }
}

const operationNames = new WeakMap<McpTool, string>();

/** The name of the tool's operation: what the audit and the logs record it as. */
function operationName(tool: McpTool): string {
  let name = operationNames.get(tool);
  if (name === undefined) {
    const operation = parse(tool.document).definitions.find((d) => d.kind === 'OperationDefinition');
    name = (operation && 'name' in operation ? operation.name?.value : undefined) ?? tool.name;
    operationNames.set(tool, name);
  }
  return name;
}
