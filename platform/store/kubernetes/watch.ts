import type { KubeObject, ResourceType } from '../../../crds/resource.js';
import { StoreError } from '../types.js';
import type { Watch, WatchEvent, WatchOptions } from '../types.js';
import { decodeObject, VersionSchema, WatchEventSchema } from './codec.js';
import { errorFromNetwork, errorFromResponse, errorFromWatchStatus } from './errors.js';
import type { KubeTransport } from './transport.js';

export interface WatchRequest<T extends KubeObject> {
  type: ResourceType<T>;
  path: string;
  options: WatchOptions;
  /** Ask the server to end the watch after this many seconds. */
  timeoutSeconds: number | undefined;
  /** Names the collection in messages: `probes.agentry.dev in namespace "a"`. */
  label: string;
  onEvent: (event: WatchEvent<T>) => void;
}

/** The query of a watch: bookmarks on; resourceVersion '' omitted (start now, with ADDED for what exists). */
export function watchQuery(options: WatchOptions, timeoutSeconds?: number): URLSearchParams {
  const query = new URLSearchParams({ watch: 'true', allowWatchBookmarks: 'true' });
  if (options.resourceVersion !== '') query.set('resourceVersion', options.resourceVersion);
  if (options.labelSelector !== undefined && options.labelSelector !== '')
    query.set('labelSelector', options.labelSelector);
  if (timeoutSeconds !== undefined) query.set('timeoutSeconds', String(timeoutSeconds));
  return query;
}

/** Turns one line of the watch stream into an event; an ERROR event (or garbage) into the StoreError that ends the watch. */
export function decodeWatchLine<T extends KubeObject>(
  type: ResourceType<T>,
  line: string,
  context: string,
): WatchEvent<T> {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch (err) {
    throw new StoreError('Unavailable', `${context}: the API server sent a line that is not JSON`, {
      cause: err,
    });
  }
  const event = WatchEventSchema.safeParse(json);
  if (!event.success)
    throw new StoreError('Unavailable', `${context}: the API server sent a malformed watch event`, {
      cause: event.error,
    });
  const { type: eventType, object } = event.data;
  switch (eventType) {
    case 'ERROR':
      throw errorFromWatchStatus(object, context);
    case 'BOOKMARK':
      return { type: 'BOOKMARK', resourceVersion: bookmarkVersion(object, context) };
    case 'ADDED':
    case 'MODIFIED':
    case 'DELETED':
      return { type: eventType, object: decodeObject(type, object, context) };
  }
}

function bookmarkVersion(object: unknown, context: string): string {
  const parsed = VersionSchema.safeParse(object);
  if (parsed.success) return parsed.data.metadata.resourceVersion;
  throw new StoreError(
    'Unavailable',
    `${context}: the API server sent a bookmark without a resourceVersion`,
    { cause: parsed.error },
  );
}

/** Calls the caller's callback; what it throws ends the watch (as a StoreError, the original as cause). */
function deliver<T extends KubeObject>(
  onEvent: (event: WatchEvent<T>) => void,
  event: WatchEvent<T>,
  context: string,
): StoreError | undefined {
  try {
    onEvent(event);
    return undefined;
  } catch (err) {
    if (err instanceof StoreError) return err;
    return new StoreError('Unavailable', `${context}: the watch callback threw`, { cause: err });
  }
}

/** Delivers events in order until something stops the stream; answers why, as what `done` rejects with. */
async function pump<T extends KubeObject>(
  request: WatchRequest<T>,
  lines: AsyncIterable<string>,
  signal: AbortSignal,
  context: string,
): Promise<StoreError> {
  try {
    for await (const line of lines) {
      if (signal.aborted) break;
      const failure = deliver(request.onEvent, decodeWatchLine(request.type, line, context), context);
      if (failure !== undefined) return failure;
    }
    return new StoreError('Unavailable', `${context}: the API server ended the watch`);
  } catch (err) {
    return errorFromNetwork(err, context);
  }
}

const isAborted = (controller: AbortController): boolean => controller.signal.aborted;

/** Settles as `done` documents: resolves when aborted (by the caller or close()), else rejects. */
async function consume<T extends KubeObject>(
  request: WatchRequest<T>,
  lines: AsyncIterable<string>,
  controller: AbortController,
): Promise<void> {
  const failure = await pump(request, lines, controller.signal, `watching ${request.label}`);
  const stopped = controller.signal.aborted;
  controller.abort(); // releases the connection
  if (!stopped) throw failure;
}

/**
 * Opens a watch. Rejects when the API server refuses it (e.g. Forbidden, or NotFound for a type it does
 * not serve); once open, `done` settles as documented by {@link Watch}. `controller` aborts it.
 */
export async function openWatch<T extends KubeObject>(
  transport: KubeTransport,
  request: WatchRequest<T>,
  controller: AbortController,
): Promise<Watch> {
  const context = `watching ${request.label}`;
  if (isAborted(controller)) return { done: Promise.resolve() };
  const query = watchQuery(request.options, request.timeoutSeconds);
  let opened;
  try {
    opened = await transport.stream({ method: 'GET', path: request.path, query }, controller.signal);
  } catch (err) {
    if (isAborted(controller)) return { done: Promise.resolve() };
    throw errorFromNetwork(err, context);
  }
  if (!opened.ok) throw errorFromResponse(opened.response.status, opened.response.body, context);
  return { done: consume(request, opened.lines, controller) };
}
