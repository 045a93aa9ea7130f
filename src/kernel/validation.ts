import { z } from 'zod';
import { isVisibilityScope } from '../domain/scopes.js';

/** Shapes shared by every write and read at the edge. */
export const namespaceSchema = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/,
    'namespace must be 1–128 characters of letters, digits, . _ : -',
  );

export const kindSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9._-]{0,127}$/, 'kind must match [a-z0-9][a-z0-9._-]{0,127}');

/** Keys are free text but bounded and free of control characters. */
export const keySchema = z
  .string()
  .min(1, 'key must not be empty')
  .max(512, 'key must be at most 512 characters')
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
  .refine((k) => !/[\u0000-\u001f\u007f]/.test(k), 'key must not contain control characters');

export const scopeSchema = z
  .string()
  .max(256)
  .regex(
    /^[a-z][a-z0-9_-]{0,31}:[^\s]{1,200}$/,
    'scope must look like type:id (e.g. workspace:w1, project:apollo)',
  );

export const scopesSchema = z.array(scopeSchema).max(20, 'at most 20 scopes');

export const titleSchema = z.string().max(1024, 'title must be at most 1024 characters');

export const jsonObjectSchema = z.record(z.string(), z.unknown());

export const confidenceSchema = z
  .number()
  .min(0, 'confidence must be in [0, 1]')
  .max(1, 'confidence must be in [0, 1]');

/** Scopes that restrict visibility (the rest only rank). */
export function visibilityScopes(scopes: readonly string[]): string[] {
  return [...new Set(scopes.filter(isVisibilityScope))].sort();
}

/** A fact's predicate (a relation name): any text but control characters. */
export const predicateSchema = z
  .string()
  .min(1, 'predicate must not be empty')
  .max(256, 'predicate must be at most 256 characters')
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
  .refine((p) => !/[\u0000-\u001f\u007f]/.test(p), 'predicate must not contain control characters');
