// A task on the real node through the installed API server: the `shell` executor runs in a real
// runner Pod, its events stream back through the API's Service, a follow-up runs in the same /code,
// and a deliverable the prompt wrote reaches object storage (moto) and downloads through the API.
import { afterAll, describe, expect, it } from '@jest/globals';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { z } from 'zod';
import { api, createTask, deployment, eventually, streamTask, streamText } from './support.js';

let workspaceId = '';
afterAll(async () => {
  if (workspaceId !== '')
    await api(`/v1/agent-computers/${workspaceId}`, { method: 'DELETE' }).catch(() => undefined);
}, 120_000);

const ArtifactListSchema = z.looseObject({ data: z.array(z.looseObject({ filename: z.string() })) });

function moto(): S3Client {
  return new S3Client({
    region: 'us-east-1',
    endpoint: deployment().motoHostUrl,
    forcePathStyle: true,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
}

describe('a shell task on the real node', () => {
  let taskId = '';

  it('streams init, the output and a result, then done, from a new workspace', async () => {
    const task = await createTask({
      prompt: 'mkdir -p /code/artifacts && echo "a report" > /code/artifacts/report.txt && echo first turn',
    });
    taskId = task.id;
    workspaceId = task.workspaceId;
    const stream = await streamTask(taskId);
    // Status events (the prompt's transitions) come and go; the execution starts with init, ends with result.
    const types = stream.events.map((event) => event.eventType).filter((type) => type !== 'status');
    expect(types[0]).toBe('init');
    expect(types.at(-1)).toBe('result');
    expect(streamText(stream)).toContain('first turn');
    expect(stream.done?.status).toBe('completed');
    const seqs = stream.events.map((event) => event.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  }, 300_000);

  it('runs a follow-up in the same /code', async () => {
    const res = await api(`/v1/tasks/${taskId}/prompts`, {
      method: 'POST',
      body: { prompt: 'cat /code/artifacts/report.txt; echo second turn' },
    });
    expect([200, 201, 202]).toContain(res.status);
    const promptId = z.looseObject({ promptId: z.string() }).safeParse(res.body).data?.promptId;
    const stream = await streamTask(taskId, promptId === undefined ? {} : { promptId });
    expect(stream.done?.status).toBe('completed');
    const text = streamText(stream);
    expect(text).toContain('a report');
    expect(text).toContain('second turn');
  }, 300_000);

  it('puts the artifact the prompt wrote into object storage, and the API serves it', async () => {
    const d = deployment();
    const listed = await eventually('the artifact listed', async () => {
      const res = await api(`/v1/workspaces/${workspaceId}/artifacts`);
      const list = ArtifactListSchema.parse(res.body);
      return list.data.some((a) => a.filename === 'report.txt') ? list : undefined;
    });
    expect(listed.data.map((a) => a.filename)).toContain('report.txt');
    const s3 = moto();
    try {
      const objects = await s3.send(new ListObjectsV2Command({ Bucket: d.bucket }));
      const key = objects.Contents?.map((o) => o.Key ?? '').find((k) => k.endsWith('/report.txt'));
      expect(key).toBeDefined();
      const object = await s3.send(new GetObjectCommand({ Bucket: d.bucket, Key: key }));
      expect(await object.Body?.transformToString()).toBe('a report\n');
    } finally {
      s3.destroy();
    }
    const download = await api(`/v1/workspaces/${workspaceId}/artifacts/report.txt`);
    expect(download.status).toBe(200);
    expect(download.body).toBe('a report\n');
  }, 300_000);
});
