// The kubevirt runtime's guest, really booted: the disk images/vm/build-guest-image.sh builds, under
// QEMU's TCG emulation (this machine has no hardware virtualization), with the exact cloud-init
// Secret the runtime writes for an AgentComputer. Everything after the boot goes through the
// runner's HTTP API as the operator does. Figures (boot, resume, prompt) are printed at the end.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile as execFileCallback } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import { promisify } from 'node:util';
import { z } from 'zod';
import { probeRunnerHealth } from '../../operator/runtimes/process/health.js';
import { RUNNER_PORT } from '../../operator/runtimes/types.js';
import { RunnerClient } from '../../platform/runner-client.js';
import { isTerminalPromptStatus, RunnerPromptStatusSchema } from '../../platform/runner-protocol.js';
import type { TaskEvent } from '../../platform/runner-protocol.js';
import { freeLoopbackPort } from '../support/free-port.js';
import { shellInvocation } from '../support/runner-client.js';
import { buildGuestImage } from './support/guest-image.js';
import { renderKubevirtWorkload } from './support/kubevirt-workload.js';
import { writeNoCloudSeed } from './support/nocloud-seed.js';
import { QemuGuest } from './support/qemu-guest.js';

const execFile = promisify(execFileCallback);
const RunnerStatusSchema = z.object({ startedAt: z.string() });
const MINUTE = 60_000;
/** Generous: emulation on a shared 2-core machine. Never a speed assertion. */
const BOOT_TIMEOUT_MS = 8 * MINUTE;

const token = randomBytes(24).toString('base64url');
const taskId = randomUUID();
const figures: Record<string, string> = {};
let dir: string | undefined;
let guest: QemuGuest;
/** Every machine started, for afterAll (also when beforeAll failed half-way). */
const machines: QemuGuest[] = [];
let endpoint: string;
let runner: RunnerClient;
let guestCores = 0;

const seconds = (since: number): string => `${((Date.now() - since) / 1000).toFixed(1)} s`;

/** Polls /healthz with the token (as the operator's probe does) until it answers ok. */
async function waitForRunner(what: string): Promise<void> {
  const deadline = Date.now() + BOOT_TIMEOUT_MS;
  let problem = '';
  while (Date.now() < deadline) {
    if (!guest.running) break;
    const health = await probeRunnerHealth(endpoint, token, { timeoutMs: 5_000 });
    if (health.ok) return;
    problem = health.problem;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  throw new Error(`${what}: the runner never answered (${problem}); console:\n${await guest.consoleTail()}`);
}

/** Dispatches a shell prompt and follows the task's event stream until the prompt is terminal. */
async function runPrompt(script: string): Promise<{ promptId: string; events: TaskEvent[]; ms: number }> {
  const promptId = randomUUID();
  const started = Date.now();
  const { lastSeq } = await runner.listEvents(taskId);
  await runner.dispatchPrompt(taskId, promptId, { text: script, executor: shellInvocation() });
  const events: TaskEvent[] = [];
  const stream = new AbortController();
  const timer = setTimeout(() => {
    stream.abort();
  }, 5 * MINUTE);
  try {
    for await (const event of runner.streamEvents(taskId, { after: lastSeq, signal: stream.signal })) {
      events.push(event);
      const status = RunnerPromptStatusSchema.safeParse(event.payload.status);
      if (event.eventType === 'status' && status.success && isTerminalPromptStatus(status.data)) break;
    }
  } finally {
    clearTimeout(timer);
    stream.abort();
  }
  return { promptId, events, ms: Date.now() - started };
}

const outputOf = (events: TaskEvent[]): string =>
  events
    .filter((e) => e.eventType === 'text')
    .map((e) => String(e.payload.content))
    .join('\n');

const finalStatus = (events: TaskEvent[]): unknown =>
  events.findLast((e) => e.eventType === 'status')?.payload.status;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-vm-'));
  const image = await buildGuestImage(dir);
  const workload = await renderKubevirtWorkload('vm-guest', token, { cpu: '2', memory: '2Gi', disk: '8Gi' });
  expect(workload.volumes).toEqual(['rootdisk', 'cloudinitdisk']);
  // The DataVolume's stand-in: a disk of the requested size filled from the image, kept across boots.
  const rootDisk = join(dir, 'rootdisk.qcow2');
  await execFile('qemu-img', [
    'create',
    '-q',
    '-f',
    'qcow2',
    '-F',
    'qcow2',
    '-b',
    image.qcow2,
    rootDisk,
    String(workload.diskBytes),
  ]);
  const seedIso = join(dir, 'cloudinitdisk.iso');
  await writeNoCloudSeed(seedIso, workload);
  guestCores = workload.cores;
  const hostPort = await freeLoopbackPort();
  endpoint = `http://127.0.0.1:${hostPort}`;
  runner = new RunnerClient({ endpoint, token, timeoutMs: 30_000 });
  guest = new QemuGuest({
    dir,
    rootDisk,
    seedIso,
    cores: workload.cores,
    memoryMiB: workload.memoryMiB,
    hostPort,
    guestPort: RUNNER_PORT,
  });
  machines.push(guest);
}, 40 * MINUTE);

afterAll(async () => {
  for (const machine of machines) await machine.kill();
  // AGENTRY_VM_LOGS=<dir> keeps each boot's serial console (the guest's boot log) for a look later.
  const keep = process.env.AGENTRY_VM_LOGS;
  if (keep !== undefined && dir !== undefined) {
    await mkdir(keep, { recursive: true });
    for (const log of (await readdir(dir)).filter((f) => f.startsWith('serial-')))
      await copyFile(join(dir, log), join(keep, log));
  }
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  process.stderr.write(
    `[vm] figures (QEMU TCG emulation, ${String(guestCores)} vCPU): ${JSON.stringify(figures)}\n`,
  );
});

describe('the kubevirt guest image booted with the runtime cloud-init', () => {
  it(
    'boots and the runner answers on its port with the token cloud-init wrote',
    async () => {
      const started = Date.now();
      guest.boot();
      await waitForRunner('first boot');
      figures.firstBootToReady = seconds(started);
      const anonymous = await fetch(`${endpoint}/healthz`);
      expect(anonymous.status).toBe(401);
      const wrongToken = await probeRunnerHealth(endpoint, `${token}x`, { timeoutMs: 10_000 });
      expect(wrongToken.ok).toBe(false);
    },
    BOOT_TIMEOUT_MS + MINUTE,
  );

  it(
    'runs a shell prompt in /code as the agentry user and streams its events',
    async () => {
      const { events, ms } = await runPrompt(
        'pwd; id -un; echo kept-through-hibernation > kept.txt; mkdir -p artifacts; echo "report from $(hostname)" > artifacts/report.txt',
      );
      figures.firstPromptRoundTrip = `${(ms / 1000).toFixed(1)} s`;
      expect(finalStatus(events)).toBe('succeeded');
      expect(outputOf(events)).toContain('/code');
      expect(outputOf(events)).toContain('agentry');
    },
    6 * MINUTE,
  );

  it(
    'lists and serves the artifact the prompt wrote',
    async () => {
      const manifest = await runner.listArtifacts();
      expect(manifest.files.map((f) => f.path)).toContain('report.txt');
      const body = await runner.readArtifact('report.txt');
      expect(body === undefined ? '' : await text(body)).toBe('report from vm-guest\n');
    },
    2 * MINUTE,
  );

  it(
    'keeps /code and the event log through a power-off (hibernate) and the next boot (resume)',
    async () => {
      const before = await runner.listEvents(taskId);
      await guest.powerOff(3 * MINUTE);
      const started = Date.now();
      guest.boot();
      await waitForRunner('resume');
      figures.resumeBootToReady = seconds(started);
      expect(await runner.listEvents(taskId)).toEqual(before);
      const { events, ms } = await runPrompt('cat kept.txt');
      figures.promptRoundTripAfterResume = `${(ms / 1000).toFixed(1)} s`;
      expect(finalStatus(events)).toBe('succeeded');
      expect(outputOf(events)).toContain('kept-through-hibernation');
    },
    BOOT_TIMEOUT_MS + 8 * MINUTE,
  );

  it(
    'comes back from a hard reset (a redeploy or a node crash) with its state',
    async () => {
      const before = await runner.listEvents(taskId);
      const { startedAt } = await statusOfRunner();
      const started = Date.now();
      await guest.reset();
      await waitForNewRunner(startedAt);
      figures.resetToReady = seconds(started);
      expect(await runner.listEvents(taskId)).toEqual(before);
      const { events } = await runPrompt('cat kept.txt && ls artifacts');
      expect(finalStatus(events)).toBe('succeeded');
      expect(outputOf(events)).toContain('report.txt');
    },
    BOOT_TIMEOUT_MS + 6 * MINUTE,
  );
});

async function statusOfRunner(): Promise<{ startedAt: string }> {
  // Cut off: while the guest reboots, QEMU accepts the forwarded connection and nothing answers it.
  const res = await fetch(`${endpoint}/v1/status`, {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(5_000),
  });
  return RunnerStatusSchema.parse(await res.json());
}

/** Waits for a runner started after `startedAt` (the old one may answer for a moment after the reset). */
async function waitForNewRunner(startedAt: string): Promise<void> {
  const deadline = Date.now() + BOOT_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const now = await statusOfRunner().catch(() => undefined);
    if (now !== undefined && now.startedAt !== startedAt) return;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  throw new Error(`the runner did not come back after the reset; console:\n${await guest.consoleTail()}`);
}
