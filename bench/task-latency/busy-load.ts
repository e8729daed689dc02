// Background CPU load in the same run: busy-looping child processes, started and stopped by the bench.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';

/** Starts `count` processes that spin forever (one per core saturates the machine); resolves the stop function. */
export function startBusyLoops(count: number): () => Promise<void> {
  const children: ChildProcess[] = [];
  for (let i = 0; i < count; i++) {
    children.push(spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }));
  }
  return async () => {
    await Promise.all(
      children.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = once(child, 'exit');
        child.kill('SIGKILL');
        await exited;
      }),
    );
  };
}
