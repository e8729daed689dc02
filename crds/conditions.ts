import type { Condition, ObjectMeta } from './meta.js';

/** One condition as a reconciler computes it; `setCondition` stamps time and generation. */
export interface ConditionInput<Type extends string = string, Reason extends string = string> {
  type: Type;
  status: Condition['status'];
  reason: Reason;
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

/** `setCondition` for each input in turn, all observed for the same generation. */
export const setConditions = (
  conditions: readonly Condition[] | undefined,
  inputs: readonly ConditionInput[],
  observedGeneration: number | undefined,
  now: Date,
): Condition[] =>
  inputs.reduce(
    (list: Condition[], input) => setCondition(list, input, observedGeneration, now),
    conditions === undefined ? [] : [...conditions],
  );

export const findCondition = (
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined => conditions?.find((condition) => condition.type === type);

/** A resource that carries conditions in its status. */
export interface WithConditions {
  metadata: Pick<ObjectMeta, 'generation'>;
  status?: { conditions?: readonly Condition[] | undefined } | undefined;
}

/**
 * The one rule of "true for this generation": a condition speaks for the current spec only when
 * it was observed for it (its observedGeneration equals metadata.generation). A condition without
 * observedGeneration, or from an older generation, says nothing about the spec the user last wrote
 * (a workspace Ready before a restart was asked for is not ready for it). A workspace's readiness
 * adds one allowance to it: crds/agent-computer/readiness.ts.
 */
export function isTrueForGeneration(object: WithConditions, type: string): boolean {
  const condition = findCondition(object.status?.conditions, type);
  return condition?.status === 'True' && condition.observedGeneration === object.metadata.generation;
}

/** Whether a condition is True, whatever generation it was observed for (a transition, the last known state). */
export const isTrue = (object: WithConditions, type: string): boolean =>
  findCondition(object.status?.conditions, type)?.status === 'True';

/** Kubernetes writes times with second precision. */
export const isoSeconds = (date: Date): string => `${date.toISOString().slice(0, 19)}Z`;
