import SchemaBuilder from '@pothos/core';
import DataloaderPlugin from '@pothos/plugin-dataloader';
import RelayPlugin from '@pothos/plugin-relay';
import type { Context } from '../../context.js';
import { decodeNodeGlobalId, encodeGlobalId } from '../../global-id.js';

export type Scalars = {
  DateTime: { Input: Date; Output: Date | string };
  JSON: { Input: unknown; Output: unknown };
  ID: { Input: string; Output: string };
};

/** Only configures the builder; type files live in ./types, one GraphQL type per file. */
export const builder = new SchemaBuilder<{
  Context: Context;
  Scalars: Scalars;
  DefaultFieldNullability: false;
}>({
  plugins: [RelayPlugin, DataloaderPlugin],
  defaultFieldNullability: false,
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    encodeGlobalID: encodeGlobalId,
    // Only node(id:) and nodes(ids:) take global ids: they must name a node with a sane key.
    decodeGlobalID: decodeNodeGlobalId,
    nodeQueryOptions: { description: 'Any node by its Relay global id; null when absent or not visible.' },
    nodesQueryOptions: {
      description: 'Nodes by Relay global ids, in order; null where absent or not visible.',
    },
  },
});

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});
