import type { Condition } from './index.js';

export interface ConditionInput {
  type: string;
  status: Condition['status'];
  reason: string;
  message: string;
}

/**
 * Sets one condition in a list, keeping lastTransitionTime when the status did not change
 * (metav1 semantics), and stamping the generation it was observed for.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  input: ConditionInput,
  observedGeneration: number | undefined,
  now: Date,
): Condition[] {
  const existing = conditions?.find((condition) => condition.type === input.type);
  const next: Condition = {
    ...input,
    message: input.message.slice(0, 32768),
    lastTransitionTime:
      existing !== undefined && existing.status === input.status
        ? existing.lastTransitionTime
        : isoSeconds(now),
    ...(observedGeneration === undefined ? {} : { observedGeneration }),
  };
  return [...(conditions ?? []).filter((condition) => condition.type !== input.type), next].sort((a, b) =>
    a.type.localeCompare(b.type),
  );
}

export const findCondition = (
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined => conditions?.find((condition) => condition.type === type);

/** Kubernetes writes times with second precision. */
export const isoSeconds = (date: Date): string => `${date.toISOString().slice(0, 19)}Z`;
