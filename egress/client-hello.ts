/**
 * The server name (SNI) of a TLS ClientHello, read from the first bytes a client sends through a
 * CONNECT tunnel: the proxy never decrypts, it only checks that the client asks the server for the
 * name it asked the proxy for. No npm package fit (the one on npm is unmaintained, untyped and
 * reads past the end of short input); the format is small (RFC 8446 4.1.2, RFC 6066 3).
 */

/** What the first bytes of a tunnel are. */
export type ClientHelloPeek =
  /** Not enough bytes yet to tell (wait for more, within a bound). */
  | { kind: 'incomplete' }
  /** Not a TLS handshake (ssh, plain HTTP, ...). */
  | { kind: 'not-tls' }
  /** A ClientHello; serverName undefined when it carries no host_name (or a malformed one). */
  | { kind: 'client-hello'; serverName: string | undefined };

const HANDSHAKE_RECORD = 22;
const CLIENT_HELLO = 1;
const SERVER_NAME_EXTENSION = 0;
const HOST_NAME = 0;
/** The largest ClientHello the proxy waits for (one TLS record is at most 16 KiB + header). */
export const MAX_CLIENT_HELLO_BYTES = 16_384 + 5;

/** A bounds-checked reader over one buffer: every read past the end throws RangeError. */
class Reader {
  constructor(
    private readonly bytes: Buffer,
    private offset = 0,
    private readonly end = bytes.length,
  ) {}

  u8(): number {
    this.need(1);
    return this.bytes.readUInt8(this.offset++);
  }

  u16(): number {
    this.need(2);
    const value = this.bytes.readUInt16BE(this.offset);
    this.offset += 2;
    return value;
  }

  u24(): number {
    return this.u8() * 65_536 + this.u16();
  }

  skip(length: number): void {
    this.need(length);
    this.offset += length;
  }

  /** A sub-reader over the next `length` bytes, which this one skips. */
  sub(length: number): Reader {
    this.need(length);
    const inner = new Reader(this.bytes, this.offset, this.offset + length);
    this.offset += length;
    return inner;
  }

  text(length: number): string {
    this.need(length);
    const value = this.bytes.toString('latin1', this.offset, this.offset + length);
    this.offset += length;
    return value;
  }

  remaining(): number {
    return this.end - this.offset;
  }

  private need(length: number): void {
    if (this.offset + length > this.end) throw new RangeError('short TLS message');
  }
}

/** The host_name of a server_name extension's body, if it has one. */
function hostNameOf(extension: Reader): string | undefined {
  const list = extension.sub(extension.u16());
  while (list.remaining() > 0) {
    const type = list.u8();
    const length = list.u16();
    if (type === HOST_NAME) return list.text(length);
    list.skip(length);
  }
  return undefined;
}

/** The body of a ClientHello after its handshake header: version, random, session, suites, compression, extensions. */
function serverNameOf(hello: Reader): string | undefined {
  hello.skip(2 + 32); // legacy_version, random
  hello.skip(hello.u8()); // legacy_session_id
  hello.skip(hello.u16()); // cipher_suites
  hello.skip(hello.u8()); // legacy_compression_methods
  if (hello.remaining() === 0) return undefined; // no extensions at all
  const extensions = hello.sub(hello.u16());
  while (extensions.remaining() > 0) {
    const type = extensions.u16();
    const body = extensions.sub(extensions.u16());
    if (type === SERVER_NAME_EXTENSION) return hostNameOf(body);
  }
  return undefined;
}

/**
 * Classifies the first bytes of a tunnel. Only the first record is read: a ClientHello split over
 * several records (never done by common clients) counts as one without a server name.
 */
export function peekClientHello(bytes: Buffer): ClientHelloPeek {
  if (bytes.length === 0) return { kind: 'incomplete' };
  if (bytes[0] !== HANDSHAKE_RECORD) return { kind: 'not-tls' };
  if (bytes.length < 6) return { kind: 'incomplete' };
  // A TLS record version is 3.x; anything else is not TLS, whatever its first byte.
  if (bytes[1] !== 3 || bytes[5] !== CLIENT_HELLO) return { kind: 'not-tls' };
  const recordLength = bytes.readUInt16BE(3);
  if (bytes.length < 5 + recordLength) return { kind: 'incomplete' };
  try {
    const record = new Reader(bytes, 5, 5 + recordLength);
    record.u8(); // handshake type, checked above
    const length = record.u24();
    const hello = record.sub(Math.min(length, record.remaining()));
    return { kind: 'client-hello', serverName: serverNameOf(hello) };
  } catch {
    return { kind: 'client-hello', serverName: undefined };
  }
}
