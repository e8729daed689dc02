import { describe, expect, it } from '@jest/globals';
import { retryOnConflict } from '../../platform/store/retry-on-conflict.js';
import { StoreError } from '../../platform/store/types.js';

const conflict = () => new StoreError('Conflict', 'the object has been modified');

describe('retryOnConflict', () => {
  it('tries again after a Conflict and resolves what the next try returns', async () => {
    const tries: number[] = [];
    const result = await retryOnConflict((tryNumber) => {
      tries.push(tryNumber);
      return tryNumber < 3 ? Promise.reject(conflict()) : Promise.resolve('written');
    });
    expect({ result, tries }).toEqual({ result: 'written', tries: [1, 2, 3] });
  });

  it('gives up after the given number of tries, throwing the last Conflict', async () => {
    let tries = 0;
    const outcome = retryOnConflict(() => {
      tries++;
      return Promise.reject(conflict());
    }, 4);
    await expect(outcome).rejects.toMatchObject({ reason: 'Conflict' });
    expect(tries).toBe(4);
  });

  it('passes any other error through at once', async () => {
    let tries = 0;
    const outcome = retryOnConflict(() => {
      tries++;
      return Promise.reject(new StoreError('NotFound', 'gone'));
    });
    await expect(outcome).rejects.toMatchObject({ reason: 'NotFound' });
    expect(tries).toBe(1);
  });
});
