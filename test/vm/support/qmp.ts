// A QEMU Machine Protocol client for one command at a time over the VM's unix socket (no network).
import { createConnection } from 'node:net';
import { z } from 'zod';
import { parseJson } from '../../../platform/json.js';

const QmpReplySchema = z.union([
  z.object({ return: z.unknown() }),
  z.object({ error: z.object({ class: z.string(), desc: z.string() }) }),
  z.object({ event: z.string() }),
  z.object({ QMP: z.unknown() }),
]);

/** Sends `execute` (after the capabilities handshake) and resolves with its `return`. */
export async function qmpExecute(socket: string, execute: string, timeoutMs = 10_000): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const connection = createConnection(socket);
    const timer = setTimeout(() => {
      fail(new Error(`QMP ${execute}: no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    let buffer = '';
    let step: 'greeting' | 'capabilities' | 'command' = 'greeting';
    function fail(err: Error): void {
      clearTimeout(timer);
      connection.destroy();
      reject(err);
    }
    function onReply(reply: z.infer<typeof QmpReplySchema>): void {
      if ('event' in reply) return;
      if ('error' in reply) {
        fail(new Error(`QMP ${execute}: ${reply.error.class}: ${reply.error.desc}`));
        return;
      }
      if (step === 'greeting') {
        step = 'capabilities';
        connection.write(`${JSON.stringify({ execute: 'qmp_capabilities' })}\n`);
      } else if (step === 'capabilities') {
        step = 'command';
        connection.write(`${JSON.stringify({ execute })}\n`);
      } else if ('return' in reply) {
        clearTimeout(timer);
        connection.end();
        resolve(reply.return);
      }
    }
    connection.on('error', fail);
    connection.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      for (let newline = buffer.indexOf('\n'); newline >= 0; newline = buffer.indexOf('\n')) {
        const line = buffer.slice(0, newline).trim();
        buffer = buffer.slice(newline + 1);
        if (line === '') continue;
        const parsed = QmpReplySchema.safeParse(parseJson(line));
        if (!parsed.success) {
          fail(new Error(`QMP ${execute}: unexpected line ${line.slice(0, 200)}`));
          return;
        }
        onReply(parsed.data);
      }
    });
  });
}
