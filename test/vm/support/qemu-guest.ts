// One emulated machine (QEMU TCG: this machine has no hardware virtualization) shaped like the
// VirtualMachine the kubevirt runtime writes: q35, virtio root disk (the DataVolume's stand-in: a
// qcow2 overlay of the image that outlives each boot), the NoCloud seed as the second disk, and
// user-mode networking restricted to a loopback port forward to the runner (the guest reaches no
// other network).
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { qmpExecute } from './qmp.js';

export interface QemuGuestOptions {
  /** Where the QMP socket and serial logs go. */
  dir: string;
  rootDisk: string;
  seedIso: string;
  cores: number;
  memoryMiB: number;
  /** 127.0.0.1:<hostPort> forwards to the guest's <guestPort>. */
  hostPort: number;
  guestPort: number;
}

/** A QEMU process; boot again with `boot` on the same disks after it powers off. */
export class QemuGuest {
  private process: ChildProcess | undefined;
  private exit: Promise<number | null> = Promise.resolve(null);
  private boots = 0;

  constructor(private readonly options: QemuGuestOptions) {}

  get qmpSocket(): string {
    return join(this.options.dir, 'qmp.sock');
  }

  get serialLog(): string {
    return join(this.options.dir, `serial-${this.boots}.log`);
  }

  get running(): boolean {
    return this.process !== undefined && this.process.exitCode === null && this.process.signalCode === null;
  }

  /** Starts QEMU (the machine then boots by itself); each boot gets its own serial log. */
  boot(): void {
    if (this.running) throw new Error('the VM is already running');
    this.boots += 1;
    const o = this.options;
    const args = [
      '-accel',
      'tcg',
      '-machine',
      'q35',
      '-m',
      String(o.memoryMiB),
      '-smp',
      String(o.cores),
      '-nographic',
      '-monitor',
      'none',
      '-serial',
      `file:${this.serialLog}`,
      '-qmp',
      `unix:${this.qmpSocket},server=on,wait=off`,
      '-drive',
      `file=${o.rootDisk},if=virtio,format=qcow2`,
      '-drive',
      `file=${o.seedIso},if=virtio,format=raw,readonly=on`,
      '-netdev',
      `user,id=net0,restrict=on,hostfwd=tcp:127.0.0.1:${o.hostPort}-:${o.guestPort}`,
      '-device',
      'virtio-net-pci,netdev=net0',
    ];
    const child = spawn('qemu-system-x86_64', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-2000)));
    this.process = child;
    this.exit = new Promise((resolve) => {
      child.once('error', (err) => {
        stderr += String(err);
        resolve(null);
      });
      child.once('exit', (code) => {
        if (code !== 0 && stderr !== '')
          process.stderr.write(`[vm] qemu exited ${String(code)}: ${stderr}\n`);
        resolve(code);
      });
    });
  }

  /** ACPI power button (what a Halted run strategy does to a KubeVirt VM); resolves once QEMU exits. */
  async powerOff(timeoutMs: number): Promise<void> {
    await qmpExecute(this.qmpSocket, 'system_powerdown');
    await this.exited(timeoutMs, 'to power off after the ACPI power button');
  }

  /** A hard reset (the guest reboots at once, as after a crash of its node). */
  async reset(): Promise<void> {
    await qmpExecute(this.qmpSocket, 'system_reset');
  }

  /** Ends QEMU at once (afterAll, also after a failure). */
  async kill(): Promise<void> {
    if (this.running) this.process?.kill('SIGKILL');
    await this.exit;
  }

  /** The end of the current boot's serial console, for a failure message. */
  async consoleTail(lines = 40): Promise<string> {
    const text = await readFile(this.serialLog, 'utf8').catch(() => '');
    return text.split('\n').slice(-lines).join('\n');
  }

  private async exited(timeoutMs: number, what: string): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        reject(new Error(`the VM did not exit: waited ${timeoutMs} ms ${what}`));
      }, timeoutMs);
    });
    try {
      await Promise.race([this.exit, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
