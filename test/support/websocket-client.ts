import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import type { Socket } from 'node:net';

/** One masked text frame of a client (RFC 6455 5.2), for payloads under 126 bytes. */
function textFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  if (payload.length >= 126) throw new Error('this test client sends short frames only');
  const mask = randomBytes(4);
  const masked = Buffer.from(payload.map((byte, i) => byte ^ (mask[i % 4] ?? 0)));
  return Buffer.concat([Buffer.from([0x81, 0x80 | payload.length]), mask, masked]);
}

/** The payload of the first (unmasked, short) server frame in `data`, if it is complete. */
function firstFrame(data: Buffer): string | undefined {
  const length = (data[1] ?? 0) & 0x7f;
  if (data.length < 2 + length) return undefined;
  return data.subarray(2, 2 + length).toString();
}

/**
 * Opens a WebSocket to `url` (http://…: the handshake is an HTTP upgrade), sends one text message
 * and resolves with the first message back. Node 20 has no WebSocket client of its own.
 */
export function websocketRoundTrip(url: string, message: string, timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': randomBytes(16).toString('base64'),
      },
      signal: AbortSignal.timeout(timeoutMs),
    });
    req.once('response', (res) => {
      reject(new Error(`no upgrade: HTTP ${res.statusCode ?? 0}`));
      res.resume();
    });
    req.once('upgrade', (_res, socket: Socket, head: Buffer) => {
      let received = head;
      const onData = (chunk: Buffer): void => {
        received = Buffer.concat([received, chunk]);
        const text = firstFrame(received);
        if (text === undefined) return;
        socket.off('data', onData);
        socket.destroy();
        resolve(text);
      };
      socket.on('data', onData);
      socket.write(textFrame(message));
      if (head.length > 0) onData(Buffer.alloc(0));
    });
    req.once('error', reject);
    req.end();
  });
}
