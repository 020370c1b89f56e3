/** The agent's version, announced in `hello` and shown in `GET /api/v1/agents`. */
import pkg from "../package.json" with { type: "json" };

export const AGENT_VERSION: string = pkg.version;
