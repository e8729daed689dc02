// The webhook API (docs/api.md#webhooks) on a test server with an embedded store.
// This file: the published signing key and its rotation.
import { describe, expect, it } from '@jest/globals';
import { createPublicKey, verify } from 'node:crypto';
import { PublicKeyDocumentSchema } from '../../../api/webhook/present.js';
import { SigningKeysCache } from '../../../api/webhook/signing-keys-cache.js';
import { WebhookSigningKeys } from '../../../platform/webhook-signing.js';
import { CONTROL_NAMESPACE, call } from '../../support/api-server.js';
import { alice, api, useWebhooksApi } from './webhooks-support.js';

useWebhooksApi();

describe('GET /v1/webhooks/public_key', () => {
  it('publishes the key that verifies what WebhookSigningKeys signs on the same store', async () => {
    const res = await call(api, '/v1/webhooks/public_key', { key: alice });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['algorithm', 'keyId', 'previous', 'publicKey', 'publicKeyPem']);
    const document = PublicKeyDocumentSchema.parse(body);
    expect(document).toMatchObject({ algorithm: 'ed25519', previous: [] });
    expect(document.publicKey).toMatch(/^whpk_[A-Za-z0-9+/]+={0,2}$/);

    const keys = await WebhookSigningKeys.load(api.store, CONTROL_NAMESPACE);
    const payload = JSON.stringify({ id: 'evt_1', type: 'task.completed' });
    const [signature = ''] = keys.sign('msg_1', 1_700_000_000, payload).split(' ');
    expect(signature.startsWith('v1a,')).toBe(true);
    const valid = verify(
      null,
      Buffer.from(`msg_1.1700000000.${payload}`),
      createPublicKey(document.publicKeyPem),
      Buffer.from(signature.slice('v1a,'.length), 'base64'),
    );
    expect(valid).toBe(true);
    // The raw form is the same key.
    const raw = Buffer.from(document.publicKey.slice('whpk_'.length), 'base64').toString('base64url');
    expect(
      createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw }, format: 'jwk' }).equals(
        createPublicKey(document.publicKeyPem),
      ),
    ).toBe(true);
  });

  it('serves a rotation once the cached keys are older than the reload interval', async () => {
    let now = new Date();
    const cache = new SigningKeysCache(api.store, CONTROL_NAMESPACE, { ttlMs: 30_000, now: () => now });
    const before = (await cache.get()).publicKeyDocument();
    await WebhookSigningKeys.rotate(api.store, CONTROL_NAMESPACE, { windowMs: 3_600_000 });
    expect((await cache.get()).publicKeyDocument().keyId).toBe(before.keyId);
    now = new Date(now.getTime() + 30_001);
    const after = (await cache.get()).publicKeyDocument();
    expect(after.keyId).not.toBe(before.keyId);
    expect(after.previous.map((key) => key.keyId)).toEqual([before.keyId]);
  });
});
