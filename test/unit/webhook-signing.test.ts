import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { createPublicKey, verify } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { SecretType, secretData, secretValue } from '../../crds/index.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';
import { WEBHOOK_SIGNING_KEYS_SECRET, WebhookSigningKeys } from '../../platform/webhook-signing.js';

const NS = 'agentry-system';
const HOUR = 3_600_000;

let dir: string;
let store: EmbeddedStore;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-signing-'));
  store = await EmbeddedStore.open(dir);
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

/** Checks a signature the way a receiver would, with node's crypto only: nothing of the signing code. */
const verifies = (publicKeyPem: string, signature: string, id: string, ts: number, body: string): boolean =>
  verify(
    null,
    Buffer.from(`${id}.${ts}.${body}`),
    createPublicKey(publicKeyPem),
    Buffer.from(signature, 'base64'),
  );

/** `v1a,<base64> v1a,<base64>` → the base64 signatures, refusing anything else in the header. */
function signaturesOf(header: string): string[] {
  return header.split(' ').map((part) => {
    const match = /^v1a,([A-Za-z0-9+/]+={0,2})$/.exec(part);
    if (match?.[1] === undefined) throw new Error(`not a v1a signature: ${part}`);
    return match[1];
  });
}

const StoredKeysSchema = z.array(
  z.strictObject({
    keyId: z.string(),
    privateKeyPem: z.string(),
    publicKeyPem: z.string(),
    createdAt: z.string(),
    retiresAt: z.string().optional(),
  }),
);

async function storedKeys(): Promise<z.infer<typeof StoredKeysSchema>> {
  const secret = await store.get(SecretType, NS, WEBHOOK_SIGNING_KEYS_SECRET);
  if (secret === undefined) throw new Error('no signing keys Secret');
  return StoredKeysSchema.parse(JSON.parse(secretValue(secret, 'keys') ?? 'null'));
}

describe('WebhookSigningKeys.sign', () => {
  it('makes a v1a signature of "id.timestamp.body" that verifies with the published PEM', async () => {
    const keys = await WebhookSigningKeys.load(store, NS);
    const body = JSON.stringify({ id: 'evt', type: 'task.completed', data: { note: 'héllo ✓' } });
    const header = keys.sign('msg_1', 1_700_000_000, body);
    const [signature, ...more] = signaturesOf(header);
    expect(more).toEqual([]);
    const { publicKeyPem } = keys.publicKeyDocument();
    expect(verifies(publicKeyPem, signature ?? '', 'msg_1', 1_700_000_000, body)).toBe(true);
  });

  it('fails verification for a tampered body, id or timestamp', async () => {
    const keys = await WebhookSigningKeys.load(store, NS);
    const { publicKeyPem } = keys.publicKeyDocument();
    const [signature = ''] = signaturesOf(keys.sign('msg_1', 1_700_000_000, '{"a":1}'));
    expect(verifies(publicKeyPem, signature, 'msg_1', 1_700_000_000, '{"a":2}')).toBe(false);
    expect(verifies(publicKeyPem, signature, 'msg_2', 1_700_000_000, '{"a":1}')).toBe(false);
    expect(verifies(publicKeyPem, signature, 'msg_1', 1_700_000_001, '{"a":1}')).toBe(false);
  });

  it('publishes whpk_<base64 raw key>, the same key as the SPKI PEM, with an id derived from it', async () => {
    const document = (await WebhookSigningKeys.load(store, NS)).publicKeyDocument();
    expect(document.algorithm).toBe('ed25519');
    expect(document.keyId).toMatch(/^whk_[0-9a-f]{16}$/);
    expect(document.publicKeyPem).toMatch(/^-----BEGIN PUBLIC KEY-----\n/);
    expect(document.publicKey).toMatch(/^whpk_[A-Za-z0-9+/]+={0,2}$/);
    const raw = Buffer.from(document.publicKey.slice('whpk_'.length), 'base64');
    expect(raw).toHaveLength(32);
    const fromRaw = createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') },
      format: 'jwk',
    });
    expect(fromRaw.equals(createPublicKey(document.publicKeyPem))).toBe(true);
    expect(document.previous).toEqual([]);
  });
});

describe('WebhookSigningKeys.load', () => {
  it('stores the key pair in a typed, labelled Secret as JSON, and reads the same key back', async () => {
    const first = (await WebhookSigningKeys.load(store, NS)).publicKeyDocument();
    const secret = await store.get(SecretType, NS, WEBHOOK_SIGNING_KEYS_SECRET);
    expect(secret?.type).toBe('agentry.dev/webhook-signing-keys');
    expect(secret?.metadata.labels).toEqual({
      'app.kubernetes.io/managed-by': 'agentry',
      'agentry.dev/component': 'webhook-signing-keys',
    });
    const [stored, ...more] = await storedKeys();
    expect(more).toEqual([]);
    expect(stored).toMatchObject({ keyId: first.keyId, publicKeyPem: first.publicKeyPem });
    expect(stored?.privateKeyPem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(stored?.retiresAt).toBeUndefined();
    expect((await WebhookSigningKeys.load(store, NS)).publicKeyDocument()).toEqual(first);
  });

  it('makes one key when replicas start at once on a fresh store', async () => {
    const creates = jest.spyOn(store, 'create');
    const loaded = await Promise.all(Array.from({ length: 6 }, () => WebhookSigningKeys.load(store, NS)));
    const ids = new Set(loaded.map((keys) => keys.publicKeyDocument().keyId));
    expect(ids.size).toBe(1);
    expect(await storedKeys()).toHaveLength(1);
    // They did race: several tried to create the Secret, the losers read the winner's key.
    expect(creates.mock.calls.length).toBeGreaterThan(1);
  });

  it('refuses a Secret that does not hold keys, without quoting what it holds', async () => {
    await store.create(SecretType, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: WEBHOOK_SIGNING_KEYS_SECRET, namespace: NS },
      data: secretData({ keys: 'not-json PRIVATE-MATERIAL' }),
    });
    const failure = WebhookSigningKeys.load(store, NS);
    await expect(failure).rejects.toThrow(/does not hold JSON/);
    await expect(failure).rejects.not.toThrow(/PRIVATE-MATERIAL/);
  });
});

describe('WebhookSigningKeys.rotate', () => {
  it('signs with the new and the previous key during the window, and with the new one after it', async () => {
    const before = (await WebhookSigningKeys.load(store, NS)).publicKeyDocument();
    const t0 = new Date();
    const rotated = await WebhookSigningKeys.rotate(store, NS, { windowMs: HOUR, now: t0 });
    const during = new Date(t0.getTime() + HOUR / 2);
    const document = rotated.publicKeyDocument(during);
    expect(document.keyId).not.toBe(before.keyId);
    expect(document.previous).toEqual([
      {
        keyId: before.keyId,
        publicKey: before.publicKey,
        publicKeyPem: before.publicKeyPem,
        retiresAt: new Date(t0.getTime() + HOUR).toISOString(),
      },
    ]);

    const body = '{"event":"task.failed"}';
    const signatures = signaturesOf(rotated.sign('msg_r', 42, body, during));
    expect(signatures).toHaveLength(2);
    // Current first, then the retiring key; each verifies with its own public key only.
    expect(verifies(document.publicKeyPem, signatures[0] ?? '', 'msg_r', 42, body)).toBe(true);
    expect(verifies(before.publicKeyPem, signatures[1] ?? '', 'msg_r', 42, body)).toBe(true);
    expect(verifies(before.publicKeyPem, signatures[0] ?? '', 'msg_r', 42, body)).toBe(false);

    const after = new Date(t0.getTime() + HOUR + 1);
    const lone = signaturesOf(rotated.sign('msg_r', 42, body, after));
    expect(lone).toHaveLength(1);
    expect(verifies(document.publicKeyPem, lone[0] ?? '', 'msg_r', 42, body)).toBe(true);
    expect(rotated.publicKeyDocument(after).previous).toEqual([]);
  });

  it('is seen by a later load, which drops keys whose window has passed from the Secret', async () => {
    const original = (await WebhookSigningKeys.load(store, NS)).publicKeyDocument();
    // A rotation two hours ago with a one-hour window: the original key retired an hour ago.
    const past = new Date(Date.now() - 2 * HOUR);
    const rotated = (
      await WebhookSigningKeys.rotate(store, NS, { windowMs: HOUR, now: past })
    ).publicKeyDocument(past);
    expect(await storedKeys()).toHaveLength(2);
    const loaded = (await WebhookSigningKeys.load(store, NS)).publicKeyDocument();
    expect(loaded).toMatchObject({ keyId: rotated.keyId, previous: [] });
    expect((await storedKeys()).map((key) => key.keyId)).toEqual([rotated.keyId]);
    expect(rotated.keyId).not.toBe(original.keyId);
  });

  it('keeps a fresh rotation visible to load while inside the window', async () => {
    const original = (await WebhookSigningKeys.load(store, NS)).publicKeyDocument();
    await WebhookSigningKeys.rotate(store, NS, { windowMs: HOUR });
    const loaded = (await WebhookSigningKeys.load(store, NS)).publicKeyDocument();
    expect(loaded.previous.map((key) => key.keyId)).toEqual([original.keyId]);
    const stored = await storedKeys();
    expect(stored.map((key) => key.keyId)).toEqual([loaded.keyId, original.keyId]);
    expect(stored[0]?.retiresAt).toBeUndefined();
  });

  it('makes the first key when there is none yet', async () => {
    const document = (await WebhookSigningKeys.rotate(store, NS, { windowMs: HOUR })).publicKeyDocument();
    expect(document.previous).toEqual([]);
    expect((await WebhookSigningKeys.load(store, NS)).publicKeyDocument().keyId).toBe(document.keyId);
  });

  it('loses no key when two rotations race (optimistic concurrency, retried)', async () => {
    const original = (await WebhookSigningKeys.load(store, NS)).publicKeyDocument();
    const [a, b] = await Promise.all([
      WebhookSigningKeys.rotate(store, NS, { windowMs: HOUR }),
      WebhookSigningKeys.rotate(store, NS, { windowMs: HOUR }),
    ]);
    const ids = [a, b].map((keys) => keys.publicKeyDocument().keyId);
    const stored = await storedKeys();
    expect(stored).toHaveLength(3);
    expect(new Set(stored.map((key) => key.keyId))).toEqual(new Set([...ids, original.keyId]));
    // Exactly one current key; the loser of the race retires behind the winner.
    expect(stored.filter((key) => key.retiresAt === undefined)).toHaveLength(1);
    const loaded = (await WebhookSigningKeys.load(store, NS)).publicKeyDocument();
    expect(ids).toContain(loaded.keyId);
    expect(loaded.previous).toHaveLength(2);
  });
});
