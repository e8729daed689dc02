// A dev server as an agent would start one in its workspace (test/integration/previews.test.ts):
// HTTP (GET /, GET /headers echoes the request headers, POST /echo echoes the body) and a
// WebSocket echo, on the port given as the first argument. `ws` is resolved from argv[3].
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { Buffer } from 'node:buffer';
import process from 'node:process';

const { WebSocketServer } = createRequire(import.meta.url)(process.argv[3]);

const server = createServer((req, res) => {
  if (req.url === '/headers') {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ url: req.url, headers: req.headers }));
    return;
  }
  if (req.method === 'POST') {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => res.end(`echo:${Buffer.concat(chunks).toString()}`));
    return;
  }
  res.setHeader('set-cookie', 'agentry_session=planted; Path=/');
  res.end(`hello from the dev server at ${req.url}`);
});
new WebSocketServer({ server }).on('connection', (socket) => {
  socket.on('message', (data) => socket.send(`echo:${data.toString()}`));
});
server.listen(Number(process.argv[2]), '127.0.0.1', () => process.stdout.write('listening\n'));
