import { describe, expect, it } from 'vitest';
import {
  isValidScope,
  isVisibilityScope,
  isVisibleTo,
  parseScope,
  scopeKind,
} from '../../src/domain/scopes.js';

describe('scope labels', () => {
  it('are type:id, split at the first colon', () => {
    expect(parseScope('project:alpha')).toEqual({ type: 'project', id: 'alpha' });
    expect(parseScope('workspace:tenant:1:ws:2')).toEqual({ type: 'workspace', id: 'tenant:1:ws:2' });
    expect(scopeKind('task:T-1')).toBe('task');
  });

  it('reject labels without a type, without an id, or with whitespace', () => {
    for (const bad of [
      'alpha',
      ':alpha',
      'project:',
      'Project:alpha',
      'project: alpha',
      'project:a b',
      `project:${'x'.repeat(300)}`,
    ]) {
      expect(isValidScope(bad)).toBe(false);
    }
    expect(scopeKind('alpha')).toBeNull();
  });

  it('distinguish visibility scopes (workspace, principal) from relevance scopes', () => {
    expect(isVisibilityScope('workspace:w1')).toBe(true);
    expect(isVisibilityScope('principal:alice')).toBe(true);
    expect(isVisibilityScope('project:alpha')).toBe(false);
    expect(isVisibilityScope('workspace')).toBe(false);
  });
});

describe('isVisibleTo', () => {
  it('shows items without visibility scopes to everyone', () => {
    expect(isVisibleTo([], [])).toBe(true);
    expect(isVisibleTo(['project:alpha', 'task:1'], [])).toBe(true);
  });

  it('shows scoped items only when the allowed scopes intersect', () => {
    expect(isVisibleTo(['workspace:w1', 'project:alpha'], ['workspace:w1'])).toBe(true);
    expect(isVisibleTo(['workspace:w1', 'principal:bob'], ['principal:bob'])).toBe(true);
    expect(isVisibleTo(['workspace:w1'], ['workspace:w2', 'project:alpha'])).toBe(false);
  });
});
