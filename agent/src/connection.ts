/**
 * The agent's one outbound WebSocket to the control plane, kept open: it reconnects after every
 * drop with jittered exponential backoff, validates every frame it receives against the protocol
 * (a bad frame closes the socket with `CLOSE.PROTOCOL` and a reason), and pings the plane so a
 * half-open TCP connection is noticed within two intervals instead of never.
 *
 * It gives up only when reconnecting can't help: the token was revoked (close 4003) or refused at
 * the upgrade (HTTP 401), or the plane speaks another protocol version (close 4001). The owner
 * learns that through `onFatal` and decides how to stop.
 */
import {
  type AgentMessage,
  CLOSE,
  type PlaneMessage,
  PlaneMessageSchema,
  parseFrame,
} from "@lakesmith/shared/protocol";
import type { Logger } from "pino";
import WebSocket from "ws";
import { Backoff } from "./backoff.ts";
import type { AgentMetrics } from "./metrics.ts";

export interface ConnectionOptions {
  /** Control plane base URL (http(s) or ws(s)). */
  baseUrl: string;
  token: string;
  reconnectBaseMs: number;
  reconnectMaxMs: number;
  log: Logger;
  metrics: AgentMetrics;
  /** A socket opened: the first frame must be `hello`. */
  onOpen(): void;
  onMessage(message: PlaneMessage): void;
  /** The socket closed; a reconnect is scheduled unless `stop()` was called or it was fatal. */
  onClose(): void;
  /** Reconnecting can't help (revoked token, unsupported protocol): the reason, for the operator. */
  onFatal(reason: string): void;
}

const HANDSHAKE_TIMEOUT_MS = 10_000;
const PING_INTERVAL_MS = 15_000;

export class Connection {
  private socket: WebSocket | undefined;
  private readonly backoff: Backoff;
  private retryTimer: NodeJS.Timeout | undefined;
  private pingTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  private attempts = 0;
  readonly url: string;

  constructor(private readonly options: ConnectionOptions) {
    this.backoff = new Backoff(options.reconnectBaseMs, options.reconnectMaxMs);
    this.url = `${options.baseUrl.replace(/^http/, "ws")}/api/v1/agents/connect`;
  }

  /** Connects, and keeps reconnecting until `stop()`. */
  start(): void {
    this.connect();
  }

  get open(): boolean {
    return this.socket?.readyState === WebSocket.OPEN;
  }

  /** Sends one message; false when no socket is open (what was not sent is the caller's to redo). */
  send(message: AgentMessage): boolean {
    if (!this.open) return false;
    this.socket?.send(JSON.stringify(message));
    return true;
  }

  /** The session is established (welcome received): the next drop starts the backoff afresh. */
  established(): void {
    this.backoff.reset();
  }

  /** Closes the socket for good and resolves once it is closed; no reconnect follows. */
  async stop(code = 1000, reason = "the agent is stopping"): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.pingTimer);
    const socket = this.socket;
    if (!socket || socket.readyState === WebSocket.CLOSED) return;
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    if (socket.readyState === WebSocket.CONNECTING) socket.terminate();
    else socket.close(code, reason);
    const force = setTimeout(() => socket.terminate(), 2000);
    await closed;
    clearTimeout(force);
  }

  private connect(): void {
    if (this.stopped) return;
    if (this.attempts++ > 0) this.options.metrics.reconnects.inc();
    this.options.metrics.setConnection("connecting");
    const socket = new WebSocket(this.url, {
      headers: { authorization: `Bearer ${this.options.token}` },
      handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
    });
    this.socket = socket;
    let fatal: string | undefined;
    let alive = true;

    socket.on("unexpected-response", (_req, res) => {
      const status = res.statusCode ?? 0;
      if (status === 401)
        fatal =
          "the control plane refused the agent token (401): it is unknown or was revoked; create a new one";
      else this.options.log.warn({ status }, "the control plane refused the WebSocket upgrade");
      res.resume();
      socket.terminate();
    });
    socket.on("open", () => {
      this.options.metrics.setConnection("connected");
      this.options.log.info({ url: this.url }, "connected to the control plane");
      this.pingTimer = setInterval(() => {
        if (!alive) {
          this.options.log.warn("the control plane did not answer two pings; reconnecting");
          socket.terminate();
          return;
        }
        alive = false;
        socket.ping();
      }, PING_INTERVAL_MS);
      this.options.onOpen();
    });
    socket.on("pong", () => {
      alive = true;
    });
    socket.on("message", (data, isBinary) => {
      alive = true;
      if (socket !== this.socket) return;
      const parsed = isBinary
        ? ({ ok: false, reason: "binary frames are not part of the protocol" } as const)
        : parseFrame(PlaneMessageSchema, String(data));
      if (!parsed.ok) {
        this.options.log.error({ reason: parsed.reason }, "protocol violation by the control plane");
        socket.close(CLOSE.PROTOCOL, parsed.reason);
        return;
      }
      this.options.onMessage(parsed.message);
    });
    socket.on("error", (err) => {
      // Always followed by "close"; connection refused while the plane restarts is routine.
      this.options.log.debug({ err: err.message }, "WebSocket error");
    });
    socket.on("close", (code, reasonBuffer) => {
      clearInterval(this.pingTimer);
      if (socket !== this.socket) return;
      this.options.metrics.setConnection("disconnected");
      const reason = String(reasonBuffer);
      if (code === CLOSE.REVOKED)
        fatal = `the control plane revoked this agent's token (${reason || "revoked"}); create a new token`;
      else if (code === CLOSE.VERSION)
        fatal = `the control plane does not speak this agent's protocol: ${reason}; upgrade the agent`;
      this.options.onClose();
      if (this.stopped) return;
      if (fatal) {
        this.stopped = true;
        this.options.onFatal(fatal);
        return;
      }
      const delay = this.backoff.next();
      const level = code === CLOSE.PROTOCOL || code === CLOSE.REPLACED ? "warn" : "info";
      this.options.log[level]({ code, reason, retry_in_ms: delay }, "disconnected from the control plane");
      this.retryTimer = setTimeout(() => this.connect(), delay);
    });
  }
}
