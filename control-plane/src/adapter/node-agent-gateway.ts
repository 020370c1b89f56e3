/**
 * Agent WebSockets on Node: the upgrade built into `@hono/node-server` (backed by `ws`), handed to
 * the in-process `LocalHub`. `serve()` must be given the same `WebSocketServer` (see node.ts).
 */
import { upgradeWebSocket } from "@hono/node-server";
import type { WSContext } from "hono/ws";
import type { AgentSocket, LocalHub } from "../agents/hub.ts";
import type { AgentGateway } from "../services.ts";

export function nodeAgentGateway(hub: LocalHub): AgentGateway {
  let lastConnectedAt = 0;
  return {
    accept(c, agentId) {
      // One wrapper per connection: the hub tells connections of the same agent apart by identity.
      let socket: AgentSocket | undefined;
      const wrap = (ws: WSContext): AgentSocket => {
        socket ??= {
          send: (text) => ws.send(text),
          close: (code, reason) => ws.close(code, reason),
        };
        return socket;
      };
      return upgradeWebSocket(c, {
        onOpen(_event, ws) {
          lastConnectedAt = Math.max(Date.now(), lastConnectedAt + 1);
          hub.open({ agentId, connectedAt: lastConnectedAt }, wrap(ws));
        },
        onMessage(event, ws) {
          const data =
            typeof event.data === "string" ? event.data : new TextDecoder().decode(event.data as ArrayBuffer);
          void hub.message(agentId, wrap(ws), data);
        },
        onClose(_event, ws) {
          void hub.closed(agentId, wrap(ws));
        },
      });
    },
  };
}
