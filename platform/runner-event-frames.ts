import { parseJson } from './json.js';
import { TaskEventSchema } from './runner-protocol.js';
import type { TaskEvent } from './runner-protocol.js';

/** One event of a runner's stream, with the SSE frame that carries it (what a relay sends on as is). */
export interface EventFrame {
  event: TaskEvent;
  /** `id: <seq>\nevent: event\ndata: <the runner's JSON>\n\n`. */
  frame: string;
}

/** A TaskEvent's own fields: seq, timestamp, promptId, eventType, payload. */
const EVENT_FIELDS = Object.keys(TaskEventSchema.shape).length;

/** The runner's stream broke the protocol: a frame is not one well-formed TaskEvent. */
export class MalformedEventError extends Error {
  override name = 'MalformedEventError';
}

/**
 * Splits a runner's `text/event-stream` (runner/sse.ts) into frames as chunks arrive and validates
 * each `event` frame's data as a TaskEvent whose seq is the frame's id. A relay sends the frame on
 * without serializing the event again: its data is the runner's JSON, checked, on one line.
 * Comments (`: keepalive`) and frames of other types are skipped.
 */
export class EventFrameReader {
  private readonly decoder = new TextDecoder();
  private rest = '';

  /** The complete frames of `chunk` (with what earlier chunks left over), in order. */
  push(chunk: Uint8Array): EventFrame[] {
    let text = this.rest + this.decoder.decode(chunk, { stream: true });
    // SSE allows CR and CRLF line ends; the runner writes LF only, so this is rarely taken.
    let held = '';
    if (text.includes('\r')) {
      // A CR at the chunk's end may be half of a CRLF: it waits for the next chunk.
      if (text.endsWith('\r')) [text, held] = [text.slice(0, -1), '\r'];
      text = text.replace(/\r\n?/g, '\n');
    }
    const blocks = text.split('\n\n');
    this.rest = (blocks.pop() ?? '') + held;
    const frames: EventFrame[] = [];
    for (const block of blocks) {
      const frame = parseBlock(block);
      if (frame !== undefined) frames.push(frame);
    }
    return frames;
  }
}

/** One SSE block's fields (`data` lines joined by newlines, as the SSE standard says). */
function fieldsOf(block: string): { id?: string; event?: string; data?: string } {
  const fields: { id?: string; event?: string; data?: string } = {};
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const name = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(line[colon + 1] === ' ' ? colon + 2 : colon + 1);
    if (name === 'id' || name === 'event') fields[name] = value;
    else if (name === 'data') fields.data = fields.data === undefined ? value : `${fields.data}\n${value}`;
  }
  return fields;
}

function parseBlock(block: string): EventFrame | undefined {
  const { id, event: type, data } = fieldsOf(block);
  if (data === undefined || (type ?? 'message') !== 'event') return undefined;
  const raw = parseJson(data);
  const parsed = TaskEventSchema.safeParse(raw);
  if (!parsed.success)
    throw new MalformedEventError(`the runner sent a malformed event: ${parsed.error.message}`);
  const event = parsed.data;
  if (id !== String(event.seq))
    throw new MalformedEventError(`the runner sent event ${event.seq} with id ${id}`);
  // The runner's JSON as it came, unless it spans lines (JSON.stringify never does) or carries
  // fields a TaskEvent has not: then the event as validated.
  const verbatim = !data.includes('\n') && Object.keys(raw as object).length === EVENT_FIELDS;
  const line = verbatim ? data : JSON.stringify(event);
  return { event, frame: `id: ${event.seq}\nevent: event\ndata: ${line}\n\n` };
}
