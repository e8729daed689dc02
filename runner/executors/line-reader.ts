import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

/** One output line is cut here: a runaway line must not hold the runner's memory hostage. */
export const MAX_LINE_CHARS = 1024 * 1024;
export const TRUNCATED_MARKER = ' …[line truncated]';

/**
 * Splits a byte stream into text lines: UTF-8 characters split across chunks stay whole, `\r\n`
 * ends a line like `\n`, a line longer than `maxChars` keeps its start and drops the rest, and the
 * last line is returned by `end()` even without a newline.
 */
export class LineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private pieces: string[] = [];
  private length = 0;
  private truncated = false;

  constructor(private readonly maxChars = MAX_LINE_CHARS) {}

  push(chunk: Buffer | string): string[] {
    const text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    const lines: string[] = [];
    let start = 0;
    for (let newline = text.indexOf('\n'); newline !== -1; newline = text.indexOf('\n', start)) {
      this.append(text.slice(start, newline));
      lines.push(this.take());
      start = newline + 1;
    }
    this.append(text.slice(start));
    return lines;
  }

  end(): string[] {
    this.append(this.decoder.end());
    return this.length > 0 || this.truncated ? [this.take()] : [];
  }

  private append(text: string): void {
    if (this.truncated || text.length === 0) return;
    const room = this.maxChars - this.length;
    if (text.length > room) {
      // Never end on half of a surrogate pair: the cut line must stay valid UTF-16.
      const cut = isHighSurrogate(text.charCodeAt(room - 1)) ? room - 1 : room;
      this.pieces.push(text.slice(0, cut));
      this.length = this.maxChars;
      this.truncated = true;
      return;
    }
    this.pieces.push(text);
    this.length += text.length;
  }

  private take(): string {
    let line = this.pieces.join('');
    if (line.endsWith('\r')) line = line.slice(0, -1);
    if (this.truncated) line += TRUNCATED_MARKER;
    this.pieces = [];
    this.length = 0;
    this.truncated = false;
    return line;
  }
}

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;

/**
 * Reads `stream` line by line: hands every line of a chunk to `onLine` at once (they are made
 * durable together) and awaits them all before reading on, so a slow consumer pauses the executor
 * (through the pipe) instead of buffering without bound.
 */
export async function readLines(
  stream: Readable,
  onLine: (line: string) => Promise<void>,
  maxChars = MAX_LINE_CHARS,
): Promise<void> {
  const splitter = new LineSplitter(maxChars);
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    await Promise.all(splitter.push(chunk).map(onLine));
  }
  await Promise.all(splitter.end().map(onLine));
}
