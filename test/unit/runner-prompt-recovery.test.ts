import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createLogger } from '../../platform/log.js';
import type { PromptState, RunnerPromptStatus } from '../../platform/runner-protocol.js';
import { TaskEventLog } from '../../runner/event-log.js';
import { PromptRecordStore } from '../../runner/prompt-records.js';
import type { PromptRecord } from '../../runner/prompt-records.js';
import { recoverPrompts, RESTART_ERROR } from '../../runner/prompt-recovery.js';
import { shellInvocation } from '../support/runner-client.js';

const logger = createLogger({ level: 'silent' });
let stateDir: string;
let events: TaskEventLog;
let records: PromptRecordStore;

const recordOf = (status: RunnerPromptStatus, sequence = 0): PromptRecord => {
  const state: PromptState = {
    taskId: randomUUID(),
    promptId: randomUUID(),
    status,
    acceptedAt: new Date().toISOString(),
    lastSeq: -1,
  };
  return {
    sequence,
    request: {
      text: 'echo hi',
      executor: shellInvocation({ API_KEY: 'sk-secret' }),
      files: [],
      skills: [],
      skillSources: [],
      allowPrivateSkillSources: false,
    },
    state,
  };
};

const recover = () => recoverPrompts({ stateDir, records, events, logger, now: () => new Date() });

beforeEach(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'agentry-recovery-'));
  events = new TaskEventLog({ stateDir, logger });
  records = new PromptRecordStore(stateDir, logger);
});

afterEach(async () => {
  await events.close();
  await rm(stateDir, { recursive: true, force: true });
});

describe('recoverPrompts', () => {
  it('fails a prompt recorded running, appending an error and a failed status', async () => {
    const record = recordOf('running');
    await records.write(record);
    const [recovered] = await recover();
    expect(recovered?.state).toMatchObject({ status: 'failed', error: RESTART_ERROR, lastSeq: 1 });
    const page = await events.read(record.state.taskId);
    expect(page.events.map((e) => [e.eventType, e.payload])).toEqual([
      ['error', { message: RESTART_ERROR }],
      ['status', { status: 'failed', error: RESTART_ERROR }],
    ]);
    expect((await records.loadAll())[0]?.state.status).toBe('failed');
  });

  it('keeps a pending prompt without events pending', async () => {
    const record = recordOf('pending');
    await records.write(record);
    expect((await recover())[0]?.state).toEqual(record.state);
    expect((await events.read(record.state.taskId)).events).toEqual([]);
  });

  it('takes the terminal status the log already ends with (a crash before the record was written)', async () => {
    const record = recordOf('pending');
    await records.write(record);
    const { taskId, promptId } = record.state;
    await events.append(taskId, promptId, 'status', { status: 'canceled' });
    const [recovered] = await recover();
    expect(recovered?.state).toMatchObject({ status: 'canceled', lastSeq: 0 });
    expect((await events.read(taskId)).events).toHaveLength(1);
  });

  it('fails a prompt recorded pending whose log shows it ran', async () => {
    const record = recordOf('pending');
    await records.write(record);
    await events.append(record.state.taskId, record.state.promptId, 'status', { status: 'running' });
    expect((await recover())[0]?.state).toMatchObject({ status: 'failed', error: RESTART_ERROR, lastSeq: 2 });
  });

  it('returns the records in the order they were accepted', async () => {
    const [late, early] = [recordOf('pending', 5), recordOf('pending', 2)];
    await records.write(late);
    await records.write(early);
    expect((await recover()).map((r) => r.sequence)).toEqual([2, 5]);
  });
});

describe('PromptRecordStore', () => {
  it('writes records 0600 and drops the executor’s environment once the prompt is terminal', async () => {
    const pending = recordOf('pending');
    await records.write(pending);
    const path = records.pathOf(pending.state.taskId, pending.state.promptId);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await records.loadAll())[0]?.request.executor.env).toEqual({ API_KEY: 'sk-secret' });
    await records.write({ ...pending, state: { ...pending.state, status: 'succeeded' } });
    expect((await records.loadAll())[0]?.request.executor.env).toEqual({});
  });

  it('ignores an unreadable record and removes temporary files a crash left', async () => {
    const record = recordOf('pending');
    await records.write(record);
    const path = records.pathOf(record.state.taskId, record.state.promptId);
    await writeFile(join(dirname(path), `${randomUUID()}.json`), '{"version":1,"sequ');
    await writeFile(`${path}.${randomUUID()}.tmp`, '{');
    expect((await records.loadAll()).map((r) => r.state.promptId)).toEqual([record.state.promptId]);
    expect((await readdir(dirname(path))).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });
});
