import { canonicalJson } from './ids.js';
import { isValidScope } from './scopes.js';

const MIB = 1024 * 1024;

/** Write limits for one observation (from the reference service). */
export const OBSERVATION_LIMITS = {
  /** UTF-8 bytes of `content`. */
  maxContentBytes: MIB,
  /** UTF-8 bytes of `data` in canonical JSON form (whitespace does not count against a caller). */
  maxDataBytes: MIB,
  maxAssertions: 200,
  maxScopes: 20,
} as const;

export const KIND_PATTERN = /^[a-z0-9][a-z0-9._-]{0,127}$/;

export function isValidKind(kind: string): boolean {
  return KIND_PATTERN.test(kind);
}

export type LimitViolationCode =
  | 'CONTENT_TOO_LARGE'
  | 'DATA_TOO_LARGE'
  | 'INVALID_DATA'
  | 'TOO_MANY_ASSERTIONS'
  | 'TOO_MANY_SCOPES'
  | 'INVALID_SCOPE'
  | 'INVALID_KIND';

export interface LimitViolation {
  code: LimitViolationCode;
  message: string;
}

export interface ObservationLimitInput {
  kind: string;
  content?: string | null;
  data?: unknown;
  assertions?: readonly unknown[] | null;
  scopes?: readonly string[] | null;
}

/**
 * Every limit an observation breaks (empty when it is acceptable). All violations are
 * reported at once so a caller can fix an item in one round trip.
 */
export function checkObservationLimits(obs: ObservationLimitInput): LimitViolation[] {
  const violations: LimitViolation[] = [];
  if (!isValidKind(obs.kind)) {
    violations.push({
      code: 'INVALID_KIND',
      message: `kind ${JSON.stringify(obs.kind.slice(0, 140))} must match ${KIND_PATTERN.source}`,
    });
  }
  if (obs.content != null) {
    const bytes = Buffer.byteLength(obs.content, 'utf8');
    if (bytes > OBSERVATION_LIMITS.maxContentBytes) {
      violations.push({
        code: 'CONTENT_TOO_LARGE',
        message: `content is ${bytes} bytes; the limit is ${OBSERVATION_LIMITS.maxContentBytes}`,
      });
    }
  }
  if (obs.data != null) {
    const size = canonicalSize(obs.data);
    if (size === null) {
      violations.push({ code: 'INVALID_DATA', message: 'data is not representable as JSON' });
    } else if (size > OBSERVATION_LIMITS.maxDataBytes) {
      violations.push({
        code: 'DATA_TOO_LARGE',
        message: `data is ${size} bytes as canonical JSON; the limit is ${OBSERVATION_LIMITS.maxDataBytes}`,
      });
    }
  }
  const assertions = obs.assertions?.length ?? 0;
  if (assertions > OBSERVATION_LIMITS.maxAssertions) {
    violations.push({
      code: 'TOO_MANY_ASSERTIONS',
      message: `${assertions} assertions; the limit is ${OBSERVATION_LIMITS.maxAssertions}`,
    });
  }
  const scopes = obs.scopes ?? [];
  if (scopes.length > OBSERVATION_LIMITS.maxScopes) {
    violations.push({
      code: 'TOO_MANY_SCOPES',
      message: `${scopes.length} scopes; the limit is ${OBSERVATION_LIMITS.maxScopes}`,
    });
  }
  const invalid = scopes.filter((scope) => !isValidScope(scope));
  if (invalid.length > 0) {
    violations.push({
      code: 'INVALID_SCOPE',
      message: `scopes must be type:id labels; invalid: ${invalid
        .slice(0, 5)
        .map((s) => JSON.stringify(s.slice(0, 80)))
        .join(', ')}`,
    });
  }
  return violations;
}

function canonicalSize(data: unknown): number | null {
  try {
    return Buffer.byteLength(canonicalJson(data), 'utf8');
  } catch {
    return null;
  }
}
