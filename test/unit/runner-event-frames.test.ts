import { describe, expect, it } from '@jest/globals';
import { EventFrameReader, MalformedEventError } from '../../platform/runner-event-frames.js';

const event = (seq: number) => ({
  seq,
  timestamp: '2026-01-01T00:00:00.000Z',
  promptId: 'p1',
  eventType: 'text',
  payload: { content: `line ${seq}`, stream: 'stdout' },
});
const frame = (seq: number, data = JSON.stringify(event(seq))): string =>
  `id: ${seq}\nevent: event\ndata: ${data}\n\n`;
const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

describe('EventFrameReader', () => {
  it('answers the frames of a chunk with their events and keeps a partial frame for the next chunk', () => {
    const reader = new EventFrameReader();
    const text = frame(0) + frame(1);
    const first = reader.push(bytes(text.slice(0, frame(0).length + 10)));
    expect(first.map((f) => f.event)).toEqual([event(0)]);
    const second = reader.push(bytes(text.slice(frame(0).length + 10)));
    expect(second.map((f) => f.event)).toEqual([event(1)]);
  });

  it("passes the runner's frame on byte for byte", () => {
    const frames = new EventFrameReader().push(bytes(frame(0) + frame(1)));
    expect(frames.map((f) => f.frame).join('')).toBe(frame(0) + frame(1));
  });

  it('keeps a UTF-8 character split across two chunks whole', () => {
    const text = frame(0, JSON.stringify({ ...event(0), payload: { content: 'é🙂' } }));
    const whole = bytes(text);
    const split = whole.indexOf(0xf0) + 1;
    const reader = new EventFrameReader();
    expect(reader.push(whole.subarray(0, split))).toEqual([]);
    expect(reader.push(whole.subarray(split))[0]?.event.payload).toEqual({ content: 'é🙂' });
  });

  it('skips comments and reads CRLF line ends', () => {
    const frames = new EventFrameReader().push(
      bytes(`: keepalive\r\n\r\n${frame(3).replace(/\n/g, '\r\n')}`),
    );
    expect(frames).toEqual([{ event: event(3), frame: frame(3) }]);
  });

  it('reads a CRLF split across two chunks as one line end', () => {
    const text = frame(4).replace(/\n/g, '\r\n');
    const reader = new EventFrameReader();
    const cut = text.indexOf('\r\n\r\n') + 3;
    expect(reader.push(bytes(text.slice(0, cut)))).toEqual([]);
    expect(reader.push(bytes(text.slice(cut)))).toEqual([{ event: event(4), frame: frame(4) }]);
  });

  it('sends an event with fields a TaskEvent has not as the event it validated', () => {
    const frames = new EventFrameReader().push(bytes(frame(0, JSON.stringify({ ...event(0), extra: 'x' }))));
    expect(frames[0]?.frame).toBe(frame(0));
  });

  it('refuses data that is not a TaskEvent', () => {
    expect(() => new EventFrameReader().push(bytes(frame(0, '{"seq":0}')))).toThrow(MalformedEventError);
  });

  it("refuses a frame whose id is not its event's seq", () => {
    expect(() => new EventFrameReader().push(bytes(frame(0).replace('id: 0', 'id: 7')))).toThrow(
      MalformedEventError,
    );
  });
});
