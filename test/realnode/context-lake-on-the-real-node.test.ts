// The context lake as a real Pod: a dataset in moto's S3, saved through the installed API server;
// the first POST /sql cold-starts the lake Pod (our lake image, DuckDB inside) on the real node,
// which downloads the dataset over the pod network and answers.
import { describe, expect, it } from '@jest/globals';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { z } from 'zod';
import { api, deployment, pods } from './support.js';

const SqlAnswerSchema = z.looseObject({ rows: z.array(z.record(z.string(), z.unknown())) });

describe('the context lake on the real node', () => {
  it('saves an S3 dataset, cold-starts the lake Pod on the first query and answers it', async () => {
    const d = deployment();
    const s3 = new S3Client({
      region: 'us-east-1',
      endpoint: d.motoHostUrl,
      forcePathStyle: true,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
    try {
      await s3.send(
        new PutObjectCommand({
          Bucket: d.bucket,
          Key: 'lake/customers.csv',
          Body: 'id,name\n1,Ada\n2,Grace\n',
        }),
      );
    } finally {
      s3.destroy();
    }
    const saved = await api('/v1/context-lake/datasets', {
      method: 'POST',
      body: {
        name: 'customers',
        from: `s3://${d.bucket}/lake/customers.csv`,
        params: {
          s3_auth: 'key',
          s3_key: 'test',
          s3_secret: 'test',
          // The lake Pod reaches moto on the node bridge, not on the host's loopback.
          s3_endpoint: d.motoPodUrl,
          allow_http: 'true',
          s3_region: 'us-east-1',
        },
      },
    });
    expect(saved.status).toBe(201);

    const answer = await api('/v1/context-lake/sql', {
      method: 'POST',
      body: { query: 'SELECT name FROM customers ORDER BY id' },
    });
    expect(answer.status).toBe(200);
    expect(SqlAnswerSchema.parse(answer.body).rows).toEqual([{ name: 'Ada' }, { name: 'Grace' }]);

    const lakePods = await pods(d.orgNamespace, 'agentry.dev/context-lake');
    expect(lakePods).toHaveLength(1);
    expect(lakePods[0]?.spec.nodeName).toBe(d.nodeName);
    expect(lakePods[0]?.status?.phase).toBe('Running');
  }, 300_000);
});
