import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskType } from '../../../crds/index.js';
import type { KubeObject, ResourceType } from '../../../crds/index.js';
import { EmbeddedStore } from '../../../platform/store/embedded.js';
import type { StatusWriteOptions } from '../../../platform/store/types.js';
import { DelegatingStore } from '../../support/delegating-store.js';
import { eventually } from '../../support/api-server.js';
import { startModelProviderStandIn } from '../../support/model-provider-stand-in.js';
import type { ModelProviderStandIn } from '../../support/model-provider-stand-in.js';
import { gatewayCall, runningPrompt, startGateway, storedTask } from './gateway-support.js';
import type { GatewayFixture } from './gateway-support.js';

/**
 * A store whose Task status writes can be held (until released) or refused while `armed`: the
 * gateway's usage write is the one a test holds, the fixture's own writes pass.
 */
class GatedStatusStore extends DelegatingStore {
  armed: 'hold' | 'refuse' | undefined;
  private release: (() => void) | undefined;
  private readonly gate = { opened: Promise.resolve() };

  hold(): void {
    this.armed = 'hold';
    this.gate.opened = new Promise((resolve) => {
      this.release = resolve;
    });
  }

  open(): void {
    this.armed = undefined;
    this.release?.();
  }

  override async replaceStatus<T extends KubeObject>(
    type: ResourceType<T>,
    object: T,
    options?: StatusWriteOptions,
  ): Promise<T> {
    if (type.kind === TaskType.kind && this.armed === 'refuse') throw new Error('the store is unavailable');
    if (type.kind === TaskType.kind && this.armed === 'hold') await this.gate.opened;
    return this.inner.replaceStatus(type, object, options);
  }
}

let dir: string;
let store: GatedStatusStore;
let standIn: ModelProviderStandIn;
let fixture: GatewayFixture;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-gateway-'));
  store = new GatedStatusStore(await EmbeddedStore.open(join(dir, 'store')));
  standIn = await startModelProviderStandIn();
  fixture = await startGateway({ store, standIn, idleTimeoutMs: 1000 });
});
afterAll(async () => {
  await fixture.stop();
  await standIn.close();
  await rm(dir, { recursive: true, force: true });
});
beforeEach(() => {
  store.open();
  standIn.received.length = 0;
  standIn.behaviour = {
    model: 'claude-sonnet-4-5-20250929',
    usage: { input: 100, output: 50, cacheRead: 0, cacheWrite: 0 },
  };
});

const streamCall = (token: string) =>
  gatewayCall(fixture.api, '/anthropic/v1/messages', {
    headers: { 'x-api-key': token },
    body: { model: 'claude-sonnet-4-5', stream: true, messages: [] },
  });

/** Reads a stream until `marker` arrives, returning what came so far (the rest stays unread). */
async function readUntil(body: ReadableStream<Uint8Array>, marker: string): Promise<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!text.includes(marker)) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`the stream ended before ${marker}`);
    text += decoder.decode(value, { stream: true });
  }
  reader.releaseLock();
  return text;
}

/** Reads a stream to its end or its failure: what arrived, and whether it ended abnormally. */
async function readToEnd(body: ReadableStream<Uint8Array>): Promise<{ text: string; failed: boolean }> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
      text += decoder.decode(chunk.value, { stream: true });
    return { text, failed: false };
  } catch {
    return { text, failed: true };
  }
}

describe('model gateway streams', () => {
  it('sends message_stop only after the usage is in the task status', async () => {
    const running = await runningPrompt(fixture);
    store.hold();
    const res = await streamCall(running.token);
    if (res.body === null) throw new Error('no body');
    const early = await readUntil(res.body, 'event: message_delta');
    expect(early).not.toContain('message_stop');
    // The provider has finished; the gateway is waiting for its write, and holds the last event.
    await eventually(() => standIn.received[0]?.sent.toString().includes('message_stop') === true);
    expect((await storedTask(fixture.api, running.task.metadata.name)).status?.usage).toBeUndefined();
    const rest = readUntil(res.body, 'message_stop');
    store.open();
    expect(await rest).toContain('event: message_stop');
    // When the client sees the end, the usage is stored.
    const task = await storedTask(fixture.api, running.task.metadata.name);
    expect(task.status?.usage?.requests).toBe(1);
  });

  it('cuts the stream without its final event when the usage cannot be written', async () => {
    const running = await runningPrompt(fixture);
    store.armed = 'refuse';
    const res = await streamCall(running.token);
    if (res.body === null) throw new Error('no body');
    const { text, failed } = await readToEnd(res.body);
    store.open();
    expect(failed).toBe(true);
    expect(text).toContain('event: message_delta');
    expect(text).not.toContain('message_stop');
    expect(standIn.received).toHaveLength(1);
    expect((await storedTask(fixture.api, running.task.metadata.name)).status?.usage).toBeUndefined();
  });

  it('answers 502 in the provider shape when the usage of a JSON answer cannot be written', async () => {
    const running = await runningPrompt(fixture);
    store.armed = 'refuse';
    const res = await gatewayCall(fixture.api, '/anthropic/v1/messages', {
      headers: { 'x-api-key': running.token },
      body: { model: 'claude-sonnet-4-5', messages: [] },
    });
    store.open();
    expect(res.status).toBe(502);
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'api_error' } });
  });

  it('ends the client stream abnormally when the provider dies mid-stream, counting what it reported', async () => {
    standIn.behaviour.breakAfterEvents = 3;
    const running = await runningPrompt(fixture);
    const res = await streamCall(running.token);
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
    // message_start came before the break: its input and first output token are billed.
    await eventually(
      async () =>
        (await storedTask(fixture.api, running.task.metadata.name)).status?.usage?.inputTokens === 100,
    );
    expect((await storedTask(fixture.api, running.task.metadata.name)).status?.usage).toMatchObject({
      inputTokens: 100,
      outputTokens: 1,
    });
  });

  it('counts nothing when the provider dies before reporting any usage', async () => {
    standIn.behaviour.breakAfterEvents = 0;
    const running = await runningPrompt(fixture);
    const res = await streamCall(running.token);
    // A break before any byte is a 502 or a cut stream, depending on when the headers left.
    await res.text().catch(() => '');
    expect((await storedTask(fixture.api, running.task.metadata.name)).status?.usage).toBeUndefined();
  });

  it('answers 502 in the provider shape when the provider cannot be reached', async () => {
    const closed = await startModelProviderStandIn();
    await closed.close();
    const unreachable = await startGateway({ standIn: closed });
    try {
      const codex = await runningPrompt(unreachable, { executor: 'codex' });
      const forwarded = await gatewayCall(unreachable.api, '/openai/v1/chat/completions', {
        headers: { authorization: `Bearer ${codex.token}` },
        body: {},
      });
      expect(forwarded.status).toBe(502);
      expect(await forwarded.json()).toMatchObject({
        error: { code: 'upstream_error', type: 'server_error' },
      });
    } finally {
      await unreachable.stop();
    }
  });

  it('ends the call when the provider stays silent past the idle timeout', async () => {
    // Past its third event the stand-in stops writing (and never ends): the 1 s idle bound applies.
    standIn.behaviour.silentAfterEvents = 3;
    const running = await runningPrompt(fixture);
    const res = await streamCall(running.token);
    await expect(res.text()).rejects.toThrow();
    await eventually(
      async () =>
        (await storedTask(fixture.api, running.task.metadata.name)).status?.usage?.inputTokens === 100,
    );
  });

  it('aborts the provider call when the client leaves', async () => {
    standIn.behaviour.silentAfterEvents = 2;
    // The default idle timeout (10 minutes): only the client's leaving can end the provider call.
    const patient = await startGateway({ standIn });
    try {
      const running = await runningPrompt(patient);
      const controller = new AbortController();
      const res = await gatewayCall(patient.api, '/anthropic/v1/messages', {
        headers: { 'x-api-key': running.token },
        body: { model: 'claude-sonnet-4-5', stream: true, messages: [] },
        signal: controller.signal,
      });
      if (res.body === null) throw new Error('no body');
      await readUntil(res.body, 'content_block_start');
      expect(standIn.received[0]?.closed).toBe(false);
      controller.abort();
      await eventually(() => standIn.received[0]?.closed === true);
      // The call was billed for what it used before the client left: a budget sees it.
      await eventually(
        async () =>
          (await storedTask(patient.api, running.task.metadata.name)).status?.usage?.inputTokens === 100,
      );
    } finally {
      await patient.stop();
    }
  });
});
