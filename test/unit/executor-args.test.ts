import { describe, expect, it } from '@jest/globals';
import { BUILTIN_EXECUTOR_DEFINITIONS, invocationOf } from '../../platform/executor-catalog.js';
import { executorEnv, substituteArgs } from '../../runner/executors/args.js';

const values = { prompt: 'fix the bug', promptFile: '/scratch/prompt', model: 'opus' };

describe('substituteArgs', () => {
  it('replaces {prompt}, {promptFile} and {model}', () => {
    expect(substituteArgs(['-p', '{prompt}', '--file={promptFile}', '--model', '{model}'], values)).toEqual([
      '-p',
      'fix the bug',
      '--file=/scratch/prompt',
      '--model',
      'opus',
    ]);
  });

  it('drops `--model {model}` (the flag too) when no model is set', () => {
    expect(
      substituteArgs(['-p', '{prompt}', '--model', '{model}', '--verbose'], { ...values, model: undefined }),
    ).toEqual(['-p', 'fix the bug', '--verbose']);
  });

  it('drops `--model={model}` alone when no model is set', () => {
    expect(substituteArgs(['run', '--model={model}', '{prompt}'], { ...values, model: undefined })).toEqual([
      'run',
      'fix the bug',
    ]);
  });

  it('keeps the argument before `{model}` when it is not a flag', () => {
    expect(substituteArgs(['exec', '{model}'], { ...values, model: undefined })).toEqual(['exec']);
  });

  it('leaves placeholders that appear inside the prompt as written', () => {
    const prompt = 'print {model} and {promptFile} literally';
    expect(substituteArgs(['{prompt}', '{model}'], { ...values, prompt })).toEqual([prompt, 'opus']);
  });

  it('refuses {promptFile} when no prompt file was written', () => {
    expect(() => substituteArgs(['{promptFile}'], { ...values, promptFile: undefined })).toThrow(
      '{promptFile}',
    );
  });
});

describe('executorEnv', () => {
  const invocation = invocationOf(
    BUILTIN_EXECUTOR_DEFINITIONS.find((d) => d.name === 'shell')!,
    {
      env: { API_KEY: 'secret', PATH: '/opt/agent/bin' },
    },
  );

  it('inherits only PATH, HOME, LANG, TZ, TMPDIR and USER, and lets the invocation override them', () => {
    const base = { PATH: '/usr/bin', HOME: '/home/u', AWS_SECRET_ACCESS_KEY: 'runner-only', TZ: undefined };
    expect(executorEnv(base, invocation)).toEqual({
      HOME: '/home/u',
      PATH: '/opt/agent/bin',
      API_KEY: 'secret',
    });
  });
});

describe('invocationOf', () => {
  const claude = BUILTIN_EXECUTOR_DEFINITIONS.find((d) => d.name === 'claude')!;

  it('keeps literal env values, adds the resolved secrets and converts the timeout to seconds', () => {
    const invocation = invocationOf(
      { ...claude, env: { ...claude.env, MODE: { value: 'ci' } }, timeout: '1h30m' },
      { env: { ANTHROPIC_API_KEY: 'sk-test' }, model: 'sonnet' },
    );
    expect(invocation).toMatchObject({
      name: 'claude',
      format: 'claude-stream-json',
      env: { MODE: 'ci', ANTHROPIC_API_KEY: 'sk-test' },
      model: 'sonnet',
      timeoutSeconds: 5400,
    });
  });

  it('uses the definition default model when the task names none', () => {
    expect(invocationOf({ ...claude, defaultModel: 'haiku' }).model).toBe('haiku');
    expect(invocationOf(claude)).not.toHaveProperty('model');
  });
});
