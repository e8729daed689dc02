// The guest side of the kubevirt runtime: the cloud-init that writes the program's environment
// file and systemd unit, for the runner of an AgentComputer or the lake server of a ContextLake.
import { stringify } from 'yaml';
import { TerminalError } from '../controller/types.js';
import { RUNNER_STATE_DIR, WORKDIR, programEnvironment, workingDirectory } from './program-layout.js';
import { RUNNER_PROGRAM } from './types.js';
import type { WorkloadProgram } from './types.js';

const systemdUnit = (program: WorkloadProgram): string => `[Unit]
Description=Agentry ${program.noun}
Wants=network-online.target
After=network-online.target

[Service]
User=agentry
EnvironmentFile=/etc/agentry/${program.name}.env
WorkingDirectory=${workingDirectory(program)}
ExecStart=/usr/bin/env agentry ${program.name}
Restart=always
RestartSec=2

[Install]
WantedBy=multi-user.target
`;

/** Directories the program needs, made before its unit starts (the runner's state dir is private). */
function directories(program: WorkloadProgram): string[][] {
  const privateDir = ['install', '-d', '-m', '0700', '-o', 'agentry', '-g', 'agentry'];
  if (program.name === 'runner') {
    return [
      ['install', '-d', '-o', 'agentry', '-g', 'agentry', WORKDIR],
      [...privateDir, RUNNER_STATE_DIR],
    ];
  }
  return [[...privateDir, workingDirectory(program)]];
}

/**
 * The guest's cloud-init: the token in a root-only environment file that systemd reads for the
 * program's unit. cloud-init writes files once per instance, so the file holds the token of the first
 * boot; a token rotation needs a new disk or another channel.
 */
export function workloadCloudConfig(
  program: WorkloadProgram,
  token: string,
  environment: Record<string, string>,
): string {
  // The file is a systemd EnvironmentFile: a value with quotes, spaces or `\` would be misread.
  const safeValue = /^[A-Za-z0-9._~+/=,:-]*$/;
  if (!/^[A-Za-z0-9._~+/=-]+$/.test(token)) {
    throw new TerminalError(
      `the ${program.noun} token has characters a systemd environment file cannot hold`,
    );
  }
  const bad = Object.entries(environment).find(([, value]) => !safeValue.test(value));
  if (bad !== undefined)
    throw new TerminalError(`${bad[0]} has characters a systemd environment file cannot hold`);
  const lines = Object.entries({ [`${program.envPrefix}TOKEN`]: token, ...environment }).map(
    ([name, value]) => `${name}=${value}\n`,
  );
  const config = {
    users: [
      'default',
      { name: 'agentry', gecos: `Agentry ${program.noun}`, shell: '/bin/bash', lock_passwd: true },
    ],
    write_files: [
      {
        path: `/etc/agentry/${program.name}.env`,
        owner: 'root:root',
        permissions: '0600',
        // The state and data directories are on the VM's root disk, which persists through hibernation.
        content: lines.join(''),
      },
      {
        path: `/etc/systemd/system/agentry-${program.name}.service`,
        owner: 'root:root',
        permissions: '0644',
        content: systemdUnit(program),
      },
    ],
    runcmd: [
      ...directories(program),
      ['systemctl', 'daemon-reload'],
      ['systemctl', 'enable', '--now', `agentry-${program.name}.service`],
    ],
  };
  return `#cloud-config\n${stringify(config)}`;
}

/** The runner's cloud-init (an AgentComputer's VM). */
export const runnerCloudConfig = (token: string): string =>
  workloadCloudConfig(RUNNER_PROGRAM, token, programEnvironment(RUNNER_PROGRAM, undefined, { cpu: '1' }));
