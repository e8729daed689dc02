import { rm } from 'node:fs/promises';
import type { Logger } from '../platform/log.js';
import { endOrphanedExecutor } from './executors/executor-lease.js';
import { scratchDirOf } from './prompt-run.js';
import { isTerminalPromptStatus, RunnerPromptStatusSchema } from '../platform/runner-protocol.js';
import type { PromptState, TaskEvent } from '../platform/runner-protocol.js';
import type { TaskEventLog } from './event-log.js';
import type { PromptRecord, PromptRecordStore } from './prompt-records.js';

export const RESTART_ERROR = 'the runner restarted while this prompt ran';

export interface RecoveryContext {
  /** Where scratch directories are: an interrupted prompt's executor may still run (see executor-lease). */
  stateDir: string;
  records: PromptRecordStore;
  events: TaskEventLog;
  logger: Logger;
  now: () => Date;
}

/** The terminal state a prompt's last event already declares (a crash between log and record). */
function terminalFromLog(state: PromptState, events: readonly TaskEvent[]): PromptState | undefined {
  const last = events.at(-1);
  if (last?.eventType !== 'status') return undefined;
  const status = RunnerPromptStatusSchema.safeParse(last.payload.status);
  if (!status.success || !isTerminalPromptStatus(status.data)) return undefined;
  const result = events.findLast((e) => e.eventType === 'result')?.payload.result;
  const error = last.payload.error;
  return {
    ...state,
    status: status.data,
    completedAt: last.timestamp,
    lastSeq: last.seq,
    ...(typeof error === 'string' ? { error } : {}),
    ...(status.data === 'succeeded' && typeof result === 'string' ? { finalResult: result } : {}),
  };
}

/** A prompt the runner was running when it died: its log gets an error and a `failed` status. */
async function failInterrupted(context: RecoveryContext, state: PromptState): Promise<PromptState> {
  const { taskId, promptId } = state;
  const scratchDir = scratchDirOf(context.stateDir, taskId, promptId);
  if (await endOrphanedExecutor(scratchDir))
    context.logger.warn({ taskId, promptId }, 'ended the executor a killed runner left running');
  await rm(scratchDir, { recursive: true, force: true });
  await context.events.append(taskId, promptId, 'error', { message: RESTART_ERROR });
  const last = await context.events.append(taskId, promptId, 'status', {
    status: 'failed',
    error: RESTART_ERROR,
  });
  return {
    ...state,
    status: 'failed',
    error: RESTART_ERROR,
    completedAt: context.now().toISOString(),
    lastSeq: last.seq,
  };
}

async function recoverOne(context: RecoveryContext, record: PromptRecord): Promise<PromptRecord> {
  const { state } = record;
  if (isTerminalPromptStatus(state.status)) return record;
  const { events } = await context.events.read(state.taskId, { promptId: state.promptId });
  // Events before a `running` record means the record write was lost: it ran all the same.
  const ran = state.status === 'running' || events.length > 0;
  const settled = terminalFromLog(state, events) ?? (ran ? await failInterrupted(context, state) : undefined);
  if (settled === undefined) return record;
  const recovered = { ...record, state: settled };
  await context.records.write(recovered);
  context.logger.warn(
    { taskId: state.taskId, promptId: state.promptId, status: settled.status },
    'settled a prompt the previous runner left unfinished',
  );
  return recovered;
}

/**
 * Brings every prompt record in line with a fresh start: a prompt that was running is failed (the
 * process that ran it is gone), one whose log already ends in a terminal status takes it, pending
 * ones stay pending. Returns every record in acceptance order.
 */
export async function recoverPrompts(context: RecoveryContext): Promise<PromptRecord[]> {
  const recovered: PromptRecord[] = [];
  for (const record of await context.records.loadAll()) recovered.push(await recoverOne(context, record));
  return recovered;
}
