/**
 * The reasons of the Kubernetes Events the operator records on one kind (what `kubectl describe`
 * shows), each with its type and a one-line doc. Written once per kind (crds/<kind>/events.ts); the
 * constants the code passes to the recorder and the Events section of docs/conditions.md come from it.
 */
export interface EventReasonDoc {
  /** Normal for a transition a person may want to know about; Warning when something needs attention. */
  readonly type: 'Normal' | 'Warning';
  /** When it is recorded. */
  readonly doc: string;
}

export type EventDocs = Readonly<Record<string, EventReasonDoc>>;

export interface EventCatalog<D extends EventDocs = EventDocs> {
  /** The kind the events are recorded on. */
  readonly kind: string;
  readonly docs: D;
  /** Reasons by name: `reasons.RunnerReady === 'RunnerReady'`. */
  readonly reasons: { readonly [R in keyof D & string]: R };
}

export function defineEvents<const D extends EventDocs>(kind: string, docs: D): EventCatalog<D> {
  // Built from the keys of `docs`, so the record holds exactly the names it lists.
  const reasons = Object.fromEntries(Object.keys(docs).map((key) => [key, key]));
  return { kind, docs, reasons: reasons as EventCatalog<D>['reasons'] };
}

/** The Events section of docs/conditions.md: one list per kind. */
export function eventsMarkdown(catalogs: readonly EventCatalog[]): string {
  const sections = catalogs.flatMap((catalog) => [
    `## ${catalog.kind} events`,
    '',
    ...Object.entries(catalog.docs).map(([reason, { type, doc }]) => `- \`${reason}\` (${type}): ${doc}`),
    '',
  ]);
  return [
    '# Kubernetes Events',
    '',
    'Events the operator records on resources (`kubectl describe`, `kubectl get events`). The same',
    'event for the same object is recorded at most once a minute.',
    '',
    ...sections,
  ].join('\n');
}
