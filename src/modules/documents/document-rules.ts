import { z } from 'zod';
import type { ChunkWrite } from '../../kernel/store/chunk-store.js';
import type { DocumentState } from './store/document-store.js';
import { jsonObjectSchema, keySchema, kindSchema, scopeSchema } from '../../kernel/validation.js';

const MIB = 1024 * 1024;

export const DOCUMENT_LIMITS = {
  /** UTF-8 bytes of `content`. */
  maxContentBytes: 5 * MIB,
  maxScopes: 20,
  maxLinks: 500,
  /** UTF-8 bytes of `meta` and of `provenance`, each in canonical JSON form. */
  maxJsonBytes: 64 * 1024,
  /** Documents per call. Large documents also meet the HTTP body limit first. */
  maxBatch: 500,
} as const;

export const documentInputSchema = z.object({
  key: keySchema,
  title: z
    .string()
    .max(1024, 'title must be at most 1024 characters')
    .refine((t) => t.trim() !== '', 'title must not be empty'),
  content: z.string().refine((c) => c.trim() !== '', 'content must not be empty'),
  kind: kindSchema.nullish(),
  sourcePath: z.string().max(2048, 'sourcePath must be at most 2048 characters').nullish(),
  meta: jsonObjectSchema.nullish(),
  scopes: z.array(scopeSchema).nullish(),
  links: z.array(keySchema).nullish(),
  provenance: jsonObjectSchema.nullish(),
  occurredAt: z.date().nullish(),
  validFrom: z.date().nullish(),
});
export type DocumentInput = z.infer<typeof documentInputSchema>;

/** A validated document with everything derived from it that does not need the database. */
export interface PreparedDocument {
  input: DocumentInput;
  kind: string;
  title: string;
  scopes: string[];
  visibility: string[];
  sourcePath: string | null;
  meta: Record<string, unknown>;
  provenance: Record<string, unknown> | null;
  links: string[];
  contentHash: string;
  pii: { pii: boolean; categories: string[] };
  /** Null when the stored hash matched before embedding: nothing to rewrite. */
  chunks: ChunkWrite[] | null;
}

export function isUnchanged(state: DocumentState | null, doc: PreparedDocument): boolean {
  return (
    state !== null &&
    state.contentHash === doc.contentHash &&
    state.kind === doc.kind &&
    state.title === doc.title
  );
}
