/**
 * SASL PLAIN as a Hive Metastore speaks it (Thrift's `TSaslClientTransport` /
 * `TSaslServerTransport`), for the client and for the test metastore: one framing, both sides.
 *
 * - Negotiation messages are a status byte (START 1, OK 2, BAD 3, ERROR 4, COMPLETE 5), a 4-byte
 *   big-endian length and the payload. The client sends START with the mechanism name `PLAIN`,
 *   then COMPLETE with `\0user\0password`; the server answers COMPLETE, or BAD / ERROR with its
 *   reason as the payload, and closes.
 * - After COMPLETE every message each way is one data frame: a 4-byte length and the bytes (PLAIN
 *   negotiates no integrity or privacy layer). One Thrift flush is one frame.
 * - No function here puts the password in a message; the caller's errors never quote it either.
 */
import type { Socket } from "node:net";

export const SaslStatus = { START: 1, OK: 2, BAD: 3, ERROR: 4, COMPLETE: 5 } as const;

/** Negotiation payloads and data frames are bounded: a metastore never needs more in one frame. */
export const MAX_SASL_FRAME = 256 * 1024 * 1024;

/** One negotiation message. */
export function negotiationMessage(status: number, payload: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.writeUInt8(status, 0);
  header.writeUInt32BE(payload.length, 1);
  return Buffer.concat([header, payload]);
}

/** One data frame. */
export function dataFrame(payload: Buffer): Buffer {
  const header = Buffer.alloc(4);
  header.writeUInt32BE(payload.length, 0);
  return Buffer.concat([header, payload]);
}

/** PLAIN's initial response: no authorization id, the user, the password (RFC 4616). */
export function plainResponse(username: string, password: string): Buffer {
  return Buffer.concat([Buffer.from([0]), Buffer.from(username), Buffer.from([0]), Buffer.from(password)]);
}

/** The user and password of a PLAIN response; null when it is not one. */
export function parsePlainResponse(payload: Buffer): { username: string; password: string } | null {
  const first = payload.indexOf(0);
  const second = first < 0 ? -1 : payload.indexOf(0, first + 1);
  if (second < 0) return null;
  return {
    username: payload.subarray(first + 1, second).toString(),
    password: payload.subarray(second + 1).toString(),
  };
}

/**
 * Reads a socket's bytes as whole messages: negotiation messages (`headerBytes` 5, with a status)
 * or data frames (4, status 0). The owner switches `headerBytes` when negotiation ends; bytes not
 * yet read stay buffered.
 */
export class FrameReader {
  private buffered: Buffer = Buffer.alloc(0);
  constructor(public headerBytes: 4 | 5) {}

  append(bytes: Buffer): void {
    this.buffered = this.buffered.length === 0 ? bytes : Buffer.concat([this.buffered, bytes]);
  }

  /** The next whole message, or null until more bytes arrive. */
  next(): { status: number; payload: Buffer } | null {
    const h = this.headerBytes;
    if (this.buffered.length < h) return null;
    const length = this.buffered.readUInt32BE(h - 4);
    if (length > MAX_SASL_FRAME) throw new Error(`a SASL frame of ${length} bytes is over the limit`);
    if (this.buffered.length < h + length) return null;
    const status = h === 5 ? this.buffered.readUInt8(0) : 0;
    const payload = this.buffered.subarray(h, h + length);
    this.buffered = this.buffered.subarray(h + length);
    return { status, payload };
  }
}

/**
 * The client's negotiation on a connected socket: resolves when the server answers COMPLETE, with
 * the reader (now reading data frames, holding any that followed); rejects with
 * `SaslRefusedError` (the server's reason) otherwise.
 */
export function negotiatePlain(socket: Socket, username: string, password: string): Promise<FrameReader> {
  return new Promise((resolve, reject) => {
    const reader = new FrameReader(5);
    const done = (err: Error | null, rest?: FrameReader) => {
      socket.off("data", onData);
      socket.off("close", onClose);
      socket.off("error", onError);
      if (err) reject(err);
      else resolve(rest as FrameReader);
    };
    const onClose = () => done(new Error("the metastore closed the connection during the login"));
    const onData = (bytes: Buffer) => {
      reader.append(bytes);
      let message: { status: number; payload: Buffer } | null;
      try {
        message = reader.next();
      } catch (err) {
        return done(err as Error);
      }
      if (message !== null) {
        const { status, payload } = message;
        if (status === SaslStatus.COMPLETE) {
          reader.headerBytes = 4;
          return done(null, reader);
        }
        if (status === SaslStatus.BAD || status === SaslStatus.ERROR)
          return done(new SaslRefusedError(payload.toString() || "no reason given"));
        if (status !== SaslStatus.OK)
          return done(new SaslRefusedError(`unexpected SASL status ${status} during the login`));
        // OK carries a challenge; PLAIN has none to answer, so a second OK is a protocol error.
        return done(new SaslRefusedError("the metastore asked for more than PLAIN sends"));
      }
    };
    // A reset during the login is its failure, not an unhandled error event.
    const onError = (err: Error) => done(new Error(`the connection failed during the login: ${err.message}`));
    socket.on("data", onData);
    socket.on("close", onClose);
    socket.on("error", onError);
    socket.write(negotiationMessage(SaslStatus.START, Buffer.from("PLAIN")));
    socket.write(negotiationMessage(SaslStatus.COMPLETE, plainResponse(username, password)));
  });
}

/** The metastore refused the SASL login; the message is its reason (never the password). */
export class SaslRefusedError extends Error {
  override readonly name = "SaslRefusedError";
}
