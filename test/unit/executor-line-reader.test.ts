import { describe, expect, it } from '@jest/globals';
import { LineSplitter, TRUNCATED_MARKER } from '../../runner/executors/line-reader.js';

describe('LineSplitter', () => {
  it('splits on \\n and \\r\\n and keeps a partial line for the next chunk', () => {
    const splitter = new LineSplitter();
    expect(splitter.push(Buffer.from('one\r\ntw'))).toEqual(['one']);
    expect(splitter.push(Buffer.from('o\nthree'))).toEqual(['two']);
    expect(splitter.end()).toEqual(['three']);
  });

  it('keeps a UTF-8 character split across two chunks whole', () => {
    const bytes = Buffer.from('é🙂\n');
    const splitter = new LineSplitter();
    expect(splitter.push(bytes.subarray(0, 1))).toEqual([]);
    expect(splitter.push(bytes.subarray(1, 4))).toEqual([]);
    expect(splitter.push(bytes.subarray(4))).toEqual(['é🙂']);
  });

  it('cuts a line at maxChars, marks it and drops the rest up to the next newline', () => {
    const splitter = new LineSplitter(5);
    expect(splitter.push('abc')).toEqual([]);
    expect(splitter.push('defgh\nok\n')).toEqual([`abcde${TRUNCATED_MARKER}`, 'ok']);
  });

  it('never cuts a line between the two halves of a surrogate pair', () => {
    const splitter = new LineSplitter(3);
    expect(splitter.push('ab🙂c\n')).toEqual([`ab${TRUNCATED_MARKER}`]);
  });

  it('returns nothing at the end when the output ended with a newline', () => {
    const splitter = new LineSplitter();
    splitter.push('done\n');
    expect(splitter.end()).toEqual([]);
  });
});
