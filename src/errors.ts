import { GraphQLError } from 'graphql';
import type { z } from 'zod';

/** Stable codes carried in `extensions.code`; clients branch on these, never on messages. */
export const ERROR_CODES = [
  'BAD_USER_INPUT',
  'NOT_FOUND',
  'FORBIDDEN',
  'UNAUTHENTICATED',
  'CONFLICT',
  'SCHEMA_VIOLATION',
  'LIMIT_EXCEEDED',
  'PAGE_SIZE_EXCEEDED',
  'UNAVAILABLE',
  'KEY_UNAVAILABLE',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export class MemgateError extends GraphQLError {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>) {
    super(message, { extensions: { code, ...details } });
    this.code = code;
  }
}

export const badInput = (message: string, details?: Record<string, unknown>) =>
  new MemgateError('BAD_USER_INPUT', message, details);
export const notFound = (message: string) => new MemgateError('NOT_FOUND', message);
export const forbidden = (message: string) => new MemgateError('FORBIDDEN', message);
export const conflict = (message: string, details?: Record<string, unknown>) =>
  new MemgateError('CONFLICT', message, details);

/**
 * The one answer to a write that would collide with a row the caller cannot see (its key or
 * source identity is taken). Always the same code and message, so it names nothing hidden.
 */
export const KEY_UNAVAILABLE_MESSAGE =
  'Not written: this key or source identity is taken in the namespace by a row you cannot see or change.';
export const keyUnavailable = () => new MemgateError('KEY_UNAVAILABLE', KEY_UNAVAILABLE_MESSAGE);

/** One readable line per zod issue, with the path into the input. */
export function describeIssues(error: z.ZodError): { path: string; message: string }[] {
  return error.issues.map((issue) => ({
    path: issue.path.map(String).join('.'),
    message: issue.message,
  }));
}

/** Parses `value` with `schema` or throws BAD_USER_INPUT listing every issue. */
export function parseInput<T extends z.ZodType>(schema: T, value: unknown, what: string): z.output<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = describeIssues(result.error);
  const summary = issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ');
  throw badInput(`Invalid ${what}: ${summary}`, { issues });
}
