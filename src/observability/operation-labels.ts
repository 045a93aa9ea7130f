import {
  type DocumentNode,
  type GraphQLSchema,
  Kind,
  type OperationDefinitionNode,
  getOperationAST,
} from 'graphql';
import { boundedLabel } from './metrics.js';

export interface OperationLabels {
  operationType: string;
  operationName: string;
  rootField: string;
}

export const NONE: OperationLabels = { operationType: 'none', operationName: 'none', rootField: 'none' };

/**
 * Labels of an operation, all bounded: the type, the operation name (a GraphQL name, at most
 * MAX_OPERATION_NAMES distinct per process, the rest `other`) and the first root field, kept
 * only when the schema has it (a document is labelled before it is validated).
 */
export class OperationLabeler {
  private readonly cache = new WeakMap<DocumentNode, Map<string, OperationLabels>>();
  private readonly names = new Set<string>();

  constructor(private readonly schema: GraphQLSchema) {}

  labels(document: DocumentNode | undefined, operationName: string | undefined | null): OperationLabels {
    if (!document) return NONE;
    let perName = this.cache.get(document);
    if (!perName) {
      perName = new Map();
      this.cache.set(document, perName);
    }
    const key = operationName ?? '';
    let labels = perName.get(key);
    if (!labels) {
      const operation = getOperationAST(document, operationName);
      labels = operation ? this.compute(operation) : NONE;
      perName.set(key, labels);
    }
    return labels;
  }

  private compute(operation: OperationDefinitionNode): OperationLabels {
    const root =
      operation.operation === 'mutation'
        ? this.schema.getMutationType()
        : operation.operation === 'query'
          ? this.schema.getQueryType()
          : this.schema.getSubscriptionType();
    const first = operation.selectionSet.selections.find((s) => s.kind === Kind.FIELD);
    const field = first?.kind === Kind.FIELD ? first.name.value : undefined;
    return {
      operationType: operation.operation,
      operationName: this.operationName(operation.name?.value),
      rootField: field && root?.getFields()[field] ? field : field ? 'other' : 'none',
    };
  }

  private operationName(name: string | undefined): string {
    if (!name) return 'anonymous';
    if (this.names.has(name)) return name;
    if (this.names.size >= MAX_OPERATION_NAMES || boundedLabel(name) !== name) return 'other';
    this.names.add(name);
    return name;
  }
}

const MAX_OPERATION_NAMES = 200;
