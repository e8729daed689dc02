// What a GitOps user sees of a field: `kubectl explain` against the real kube-apiserver prints the
// description the zod schema gives it (the CRDs the cluster harness installed are the generated ones).
import { describe, expect, it } from '@jest/globals';
import type { z } from 'zod';
import { AgentComputerSpecSchema, DatasetSchema, TaskSpecSchema } from '../../crds/index.js';
import { eventually, kubectl } from './support.js';

/** kubectl wraps descriptions to the terminal's width: compare text with whitespace collapsed. */
const collapsed = (text: string): string => text.replace(/\s+/g, ' ').trim();

function descriptionOf(schema: z.ZodType): string {
  const { description } = schema;
  if (description === undefined) throw new Error('the field has no description');
  return collapsed(description);
}

/**
 * `kubectl explain <path>`, once the API server publishes the field's description: it serves a CRD's
 * OpenAPI a moment after the CRD is Established.
 */
const explained = (path: string, description: string): Promise<string> =>
  eventually(`kubectl explain ${path} shows the description`, async () => {
    const out = collapsed(await kubectl(['explain', path]));
    return out.includes(description) ? out : undefined;
  });

describe('kubectl explain shows the CRD field descriptions', () => {
  it('explains agentcomputer.spec.idleTimeout', async () => {
    const description = descriptionOf(AgentComputerSpecSchema.shape.idleTimeout);
    const out = await explained('agentcomputer.spec.idleTimeout', description);
    expect(out).toMatch(/FIELD: idleTimeout <string>/);
    expect(out).toContain('0s never hibernates');
  });

  it('explains task.spec.visibility', async () => {
    const description = descriptionOf(TaskSpecSchema.shape.visibility);
    const out = await explained('task.spec.visibility', description);
    expect(out).toContain('private (its owner)');
  });

  it('explains a field nested in a list: contextlake.spec.config.datasets.from', async () => {
    const description = descriptionOf(DatasetSchema.shape.from);
    const out = await explained('contextlake.spec.config.datasets.from', description);
    expect(out).toContain('s3://');
  });
});
