// The load generator of bench:api, in its own process so its CPU is not the server's: keep-alive
// connections, a bounded number of requests in flight, for a fixed time. It prints `start` once
// warmed up (the server's CPU is read from there) and then one JSON line with what it saw.
//
// Env: LOAD_URL, LOAD_KEY (sent as API_KEY), LOAD_CONCURRENCY, LOAD_DURATION_MS, LOAD_WARMUP
import { Agent, request } from 'node:http';

const url = new URL(process.env.LOAD_URL ?? '');
const key = process.env.LOAD_KEY ?? '';
const concurrency = Number(process.env.LOAD_CONCURRENCY ?? '8');
const durationMs = Number(process.env.LOAD_DURATION_MS ?? '3000');
const warmup = Number(process.env.LOAD_WARMUP ?? '300');
const agent = new Agent({ keepAlive: true, maxSockets: concurrency });

/** One GET; resolves with its latency in ms, rejects on anything but 200. */
const get = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(url, { agent, headers: { API_KEY: key } }, (res) => {
      res.resume();
      res.once('end', () => {
        if (res.statusCode === 200) resolve(performance.now() - started);
        else reject(new Error(`${url.pathname} answered ${String(res.statusCode)}`));
      });
    });
    req.once('error', reject);
    req.end();
  });

async function run(until: () => boolean, latencies: number[]): Promise<void> {
  const worker = async (): Promise<void> => {
    while (!until()) latencies.push(await get());
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

let warmed = 0;
await run(() => warmed++ >= warmup, []);
console.log('start');
const latencies: number[] = [];
const started = performance.now();
await run(() => performance.now() - started >= durationMs, latencies);
const elapsedMs = performance.now() - started;
latencies.sort((a, b) => a - b);
const at = (p: number): number =>
  latencies[Math.min(latencies.length - 1, Math.ceil(p * latencies.length) - 1)] ?? 0;
console.log(JSON.stringify({ requests: latencies.length, elapsedMs, p50: at(0.5), p99: at(0.99) }));
agent.destroy();
