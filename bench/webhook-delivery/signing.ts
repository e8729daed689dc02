// Signing: what WebhookSigningKeys.sign (Ed25519, Standard Webhooks `v1a`) costs per delivery, with one
// key and with two during a rotation, against the symmetric `v1` scheme (HMAC-SHA256) over the same bytes.
import { createHmac, createPublicKey, randomBytes, randomUUID, verify } from 'node:crypto';
import { WebhookType, apiVersionOf } from '../../crds/index.js';
import type { Task, Webhook } from '../../crds/index.js';
import { outboxEntriesFor } from '../../operator/task/webhook-events.js';
import { deliveryBody } from '../../operator/webhook/delivery-body.js';
import { WebhookSigningKeys } from '../../platform/webhook-signing.js';
import { verifyDelivery } from '../../test/support/webhook-receiver.js';
import { CONTROL, NS, PUBLIC_URL, SIGNS } from './config.js';
import { storeOf } from './environment.js';
import type { Captured } from './receivers.js';
import { newTask, nextStatus } from './sample-task.js';

/** Signing: µs per op of `sign`, after a warm-up. */
function timeSigning(sign: (i: number) => string): number {
  for (let i = 0; i < Math.min(1000, SIGNS); i++) sign(i);
  const start = process.hrtime.bigint();
  let bytes = 0;
  for (let i = 0; i < SIGNS; i++) bytes += sign(i).length;
  const perOp = Number(process.hrtime.bigint() - start) / 1e3 / SIGNS;
  if (bytes === 0) throw new Error('no signature');
  return perOp;
}

export interface Signing {
  ed25519: number;
  rotation: number;
  hmac: number;
}

export async function signingPhase(): Promise<Signing> {
  const store = storeOf();
  // A namespace of its own: the rotation must not change the keys the controller signs with.
  const keysNamespace = 'bench-signing';
  const keys = await WebhookSigningKeys.load(store, keysNamespace);
  const task: Task = {
    ...newTask('signing-sample'),
    metadata: {
      name: 'signing-sample',
      namespace: NS,
      creationTimestamp: new Date().toISOString(),
      uid: randomUUID(),
    },
    status: nextStatus(2, newTask('signing-sample'), new Date()),
  };
  const webhook: Webhook = {
    apiVersion: apiVersionOf(WebhookType),
    kind: 'Webhook',
    metadata: { name: 'wh', namespace: NS },
    spec: { url: PUBLIC_URL, events: ['task.completed'] },
  };
  const [entry] = outboxEntriesFor([webhook], ['task.completed'], new Date());
  if (entry === undefined) throw new Error('no outbox entry for the sample');
  const body = JSON.stringify(
    deliveryBody(task, entry, { publicUrl: PUBLIC_URL, shareUrl: (id) => `${PUBLIC_URL}/v1/share/${id}` }),
  );
  const id = entry.id;
  const ts = Math.floor(Date.now() / 1000);
  const secret = randomBytes(32);
  console.log(
    `signing: ${SIGNS} signatures of a ${Buffer.byteLength(body)}-byte task.completed body (after 1000 warm-up)`,
  );
  const hmac = timeSigning(() => createHmac('sha256', secret).update(`${id}.${ts}.${body}`).digest('base64'));
  console.log(`floor: HMAC-SHA256 (Standard Webhooks v1): ${hmac.toFixed(2)} µs/op`);
  const ed25519 = timeSigning(() => keys.sign(id, ts, body));
  console.log(`WebhookSigningKeys.sign, one key (v1a, Ed25519): ${ed25519.toFixed(2)} µs/op`);
  const rotated = await WebhookSigningKeys.rotate(store, keysNamespace, { windowMs: 3_600_000 });
  const pair = rotated.sign(id, ts, body);
  if (pair.split(' ').length !== 2)
    throw new Error(`a rotation signs with ${pair.split(' ').length} keys, not 2`);
  const rotation = timeSigning(() => rotated.sign(id, ts, body));
  console.log(`WebhookSigningKeys.sign, two keys (during a rotation): ${rotation.toFixed(2)} µs/op`);
  // What a receiver pays: checking one v1a signature with the published key.
  const document = keys.publicKeyDocument();
  const signature = Buffer.from(keys.sign(id, ts, body).slice(4), 'base64');
  const signed = Buffer.from(`${id}.${ts}.${body}`);
  const publicKey = createPublicKey(document.publicKeyPem);
  const verifyUs = timeSigning(() => (verify(null, signed, publicKey, signature) ? 'ok' : ''));
  console.log(`aside: a receiver verifying one v1a signature: ${verifyUs.toFixed(2)} µs/op`);
  return { ed25519, rotation, hmac };
}

/** A sample of deliveries checked against the published key with Node's crypto (not Agentry's code). */
export async function verifySample(requests: ReadonlyMap<string, Captured>, count: number): Promise<string> {
  const keys = await WebhookSigningKeys.load(storeOf(), CONTROL);
  const pem = keys.publicKeyDocument().publicKeyPem;
  const sample = [...requests.values()].slice(0, count);
  const good = sample.filter(({ headers, body }) => verifyDelivery({ headers, rawBody: body }, pem)).length;
  return `${good}/${sample.length}`;
}
