import { StringDecoder } from 'node:string_decoder';
import type { SseEvent } from './usage/call-usage.js';

/** The blank line that ends an event (any of the three line ends SSE allows). */
const EVENT_END = /\r\n\r\n|\n\n|\r\r/;

/** An event's name and data, as an EventSource would see them. */
export function parseSseEvent(raw: string): SseEvent {
  let event: string | undefined;
  const data: string[] = [];
  for (const line of raw.split(/\r\n|\n|\r/)) {
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  return { event, data: data.join('\n') };
}

export interface SseRelayOptions {
  /** Sends text to the client, exactly as the provider sent it. */
  write: (text: string) => void;
  /** Sees every event, in order (the usage reader). */
  read: (event: SseEvent) => void;
  /** Whether an event may be the last: it is held until `finish`, or until another event follows. */
  isFinal: (event: SseEvent) => boolean;
  /** An event longer than this without its blank line ends the relay (a bound on what is buffered). */
  maxEventBytes: number;
}

/**
 * Passes a provider's event stream through event by event, unchanged, holding back the event that
 * may be its last: the gateway sends that one only after it recorded the call's usage (ADR 0009),
 * so a client that saw a complete answer has had it counted.
 */
export class SseRelay {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';
  private held: string | undefined;

  constructor(private readonly options: SseRelayOptions) {}

  /** Relays the complete events of `chunk`; throws when an event outgrows the bound. */
  push(chunk: Buffer): void {
    this.pending += this.decoder.write(chunk);
    for (let end = EVENT_END.exec(this.pending); end !== null; end = EVENT_END.exec(this.pending)) {
      const length = end.index + end[0].length;
      const raw = this.pending.slice(0, length);
      this.pending = this.pending.slice(length);
      this.relay(raw);
    }
    if (this.pending.length > this.options.maxEventBytes) throw new Error('an event is over the size limit');
  }

  /** The stream ended: what is left to send (the held event and an unterminated tail), after reading it. */
  finish(): string {
    const tail = this.pending + this.decoder.end();
    this.pending = '';
    if (tail.trim() !== '') this.options.read(parseSseEvent(tail));
    const rest = (this.held ?? '') + tail;
    this.held = undefined;
    return rest;
  }

  private relay(raw: string): void {
    const event = parseSseEvent(raw);
    this.options.read(event);
    if (this.held !== undefined) {
      this.options.write(this.held);
      this.held = undefined;
    }
    if (this.options.isFinal(event)) this.held = raw;
    else this.options.write(raw);
  }
}
